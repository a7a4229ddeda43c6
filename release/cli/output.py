"""Output formats, as the `hf` CLI of huggingface_hub 2.4 has them (cli/_output.py).

`--format auto|human|agent|json|quiet` (auto: agent when an AI agent runs the command, else human),
`--json` for `--format json`, `-q/--quiet` for `--format quiet`. human and agent print lines (agent
never a progress bar); json prints one JSON document; quiet prints only what a script needs (a path,
a commit). Progress bars appear only for a person at a terminal, and never when
HF_HUB_DISABLE_PROGRESS_BARS is set — huggingface_hub's own bars included.

A command returns one result (release/cli/results.py); how each format shows it is decided here.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from ..errors import redact
from .results import Failure, Result

FORMATS = ("auto", "human", "agent", "json", "quiet")
PROGRESS_ENV = "HF_HUB_DISABLE_PROGRESS_BARS"


def FORMAT(command: Callable[..., Result]) -> Callable[..., None]:  # noqa: N802 - a decorator, like click's
    """--format/--json/-q: the command gets the `out` they choose (for its progress bars) and returns its
    result, which `out` prints."""

    @functools.wraps(command)
    def resolved(*args: Any, fmt: str | None, json_flag: bool, quiet_flag: bool, **kwargs: Any) -> None:
        out = Output(resolve_format(fmt, json_flag, quiet_flag))
        out.result(command(*args, out=out, **kwargs))

    resolved = click.option("-q", "--quiet", "quiet_flag", is_flag=True, help="Print only the result (a path, a commit). Same as --format quiet.")(resolved)
    resolved = click.option("--json", "json_flag", is_flag=True, help="Same as --format json.")(resolved)
    return click.option(
        "--format", "fmt", type=click.Choice(FORMATS), default=None,
        help="auto (default): agent when an AI agent runs it, else human; human: lines and progress bars at a "
             "terminal; agent: lines, no bars; json: one JSON document on stdout; quiet: only the result.",
    )(resolved)


def resolve_format(fmt: str | None, json_flag: bool, quiet_flag: bool) -> str:
    given = [flag for flag, on in (("--format", fmt is not None), ("--json", json_flag), ("--quiet", quiet_flag)) if on]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} are mutually exclusive; give one")
    return "json" if json_flag else "quiet" if quiet_flag else fmt or "auto"


def wants_json(argv: list[str]) -> bool:
    """Whether a command line asks for JSON (read before parsing, so that even a usage error answers in JSON)."""
    return "--json" in argv or "--format=json" in argv or any(
        a == "--format" and i + 1 < len(argv) and argv[i + 1] == "json" for i, a in enumerate(argv))


def _bars_disabled_by_env() -> bool:
    return os.environ.get(PROGRESS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class Output:
    """Prints for people or for machines; progress bars only for people at a terminal."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        if not self.progress and PROGRESS_ENV not in os.environ:
            _silence_hub_bars()

    @functools.cached_property
    def progress(self) -> bool:
        if self.fmt not in ("auto", "human") or _bars_disabled_by_env() or not sys.stderr.isatty():
            return False
        if self.fmt == "auto":  # only at a terminal: agent detection may read the Hub's harness list
            from huggingface_hub.utils import is_agent

            return not is_agent()
        return True

    def result(self, result: Result) -> None:
        """Print the result: its document (json), its quiet lines (quiet), else its lines for people and agents.
        A result that is not ok (status found a difference) is printed whole, then the exit code is 1."""
        if self.fmt == "json":
            document = {"command": result.command, "ok": result.ok, **result.document()}
            click.echo(redact(json.dumps(document, indent=2, sort_keys=True)))
        else:
            for line in result.quiet() if self.fmt == "quiet" else result.lines():
                click.echo(redact(line))
        if not result.ok:
            sys.exit(1)


def fail(failure: Failure, fmt: str) -> None:
    """Print a failure: one line per problem on stderr, also the document on stdout (json); exit with its code."""
    for line in failure.lines():
        click.echo(redact(line), err=True)
    if fmt == "json":
        click.echo(redact(json.dumps(failure.document(), indent=2)))
    sys.exit(failure.exit_code)


def warn(message: str) -> None:
    """A warning for the person at the terminal: on stderr, whatever the format."""
    click.echo(message, err=True)


def _silence_hub_bars() -> None:
    """huggingface_hub's own bars ("Fetching 16 files") off too: through the environment it reads at import
    when it is not imported yet (importing it only to switch bars off costs every command ~0.1 s),
    through its switch when it is."""
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    else:
        os.environ[PROGRESS_ENV] = "1"
