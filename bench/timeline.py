"""Where a command's time goes: each pipeline step's start and length, after the CLI's imports (issue 41).

    python bench/timeline.py build v5 --spec … --dist …

Prints, to stderr, one line per step (`start  length  name`, seconds from the interpreter's start of this
script), the imports' end, and the end of the command (the output, the staging's rename and the digest record
included). It wraps `release.pipeline.run_steps` in this process, so it measures the CLI as `hf-release` runs it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

START = time.perf_counter()
sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]

import release.builder  # noqa: E402
import release.pipeline  # noqa: E402


def mark(what: str, since: float, length: float | None = None) -> None:
    took = f"{length:6.3f}" if length is not None else " " * 6
    print(f"{since - START:6.3f} {took} {what}", file=sys.stderr)


def timed_steps(ctx: Any, steps: Sequence[Any]) -> Any:
    for step in steps:
        begun = time.perf_counter()
        ctx.log.append((step.name, step.run(ctx)))
        mark(step.name, begun, time.perf_counter() - begun)
    return ctx


def main() -> int:
    release.pipeline.run_steps = timed_steps
    release.builder.run_steps = timed_steps
    from release.cli.app import main as cli

    mark("imported", time.perf_counter())
    sys.argv = ["hf-release", *sys.argv[1:]]
    try:
        cli()
    except SystemExit as exc:
        mark(f"end (exit {exc.code})", time.perf_counter())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
