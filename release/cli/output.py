"""Output formats, as the `hf` CLI of huggingface_hub 2.4 has them (cli/_output.py).

`--format auto|human|agent|json|quiet` (auto: agent when an AI agent runs the command, else human),
`--json` for `--format json`, `-q/--quiet` for `--format quiet`. human prints lines for people (and
progress bars at a terminal); agent prints `key=value` pairs, one record a line (hf's `out.result`);
json prints one JSON document; quiet prints one item a line (hf's `out.table` id column: a path, a
commit, a version). Progress bars appear only for a person at a terminal, and never when
HF_HUB_DISABLE_PROGRESS_BARS is set — huggingface_hub's own bars included.

`auto` asks huggingface_hub's agent detection with the Hub's harness list as cached on this machine
(by `hf`), never fetched: hf fetches it from HF_ENDPOINT once a day, which would make every command —
`build` too — send a request.

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

from release.cli.results import Failure, Result, stopped_lines
from release.errors import redact
from release.util.jsonio import json_blocks

FORMATS = ("auto", "human", "agent", "json", "quiet")
PROGRESS_ENV = "HF_HUB_DISABLE_PROGRESS_BARS"


def FORMAT_OPTIONS(command: Callable[..., Any]) -> Callable[..., Any]:  # noqa: N802 - a decorator, like click's
    """--format/--json/-q, resolved into the command's `fmt` (auto resolved to agent or human)."""

    @functools.wraps(command)
    def resolved(*args: Any, fmt: str | None, json_flag: bool, quiet_flag: bool, **kwargs: Any) -> Any:
        return command(*args, fmt=resolve_format(fmt, json_flag, quiet_flag), **kwargs)

    resolved = click.option(
        "-q",
        "--quiet",
        "quiet_flag",
        is_flag=True,
        help="One item a line (a path, a commit, a version). Same as --format quiet.",
    )(resolved)
    resolved = click.option("--json", "json_flag", is_flag=True, help="Same as --format json.")(resolved)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="auto (default): agent when an AI agent runs it, else human; human: lines and progress bars at a "
        "terminal; agent: key=value pairs, one record a line; json: one JSON document on stdout; quiet: one "
        "item a line.",
    )(resolved)


def FORMAT(command: Callable[..., Result]) -> Callable[..., None]:  # noqa: N802 - a decorator, like click's
    """--format/--json/-q: the command gets the `out` they choose (for its progress bars) and returns its
    result, which `out` prints."""

    @functools.wraps(command)
    def printed(*args: Any, fmt: str, **kwargs: Any) -> None:
        out = Output(fmt)
        out.result(command(*args, out=out, **kwargs))

    return FORMAT_OPTIONS(printed)


def resolve_format(fmt: str | None, json_flag: bool, quiet_flag: bool) -> str:
    given = [flag for flag, on in (("--format", fmt is not None), ("--json", json_flag), ("--quiet", quiet_flag)) if on]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} are mutually exclusive; give one")
    chosen = "json" if json_flag else "quiet" if quiet_flag else fmt or "auto"
    return ("agent" if _run_by_an_agent() else "human") if chosen == "auto" else chosen


def _run_by_an_agent() -> bool:
    """huggingface_hub's detection (is_agent), from the harness list cached on this machine only: its
    fetch (GET HF_ENDPOINT/api/agent-harnesses, up to 3 s) is skipped as in offline mode, for this process."""
    from huggingface_hub import constants
    from huggingface_hub.utils import is_agent

    offline = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True  # read by the fetch at call time; the registry it resolves is kept in-process
    try:
        return is_agent()
    finally:
        constants.HF_HUB_OFFLINE = offline


def wants_json(argv: list[str]) -> bool:
    """Whether a command line asks for JSON (read before parsing, so that even a usage error answers in JSON)."""
    return (
        "--json" in argv
        or "--format=json" in argv
        or any(a == "--format" and i + 1 < len(argv) and argv[i + 1] == "json" for i, a in enumerate(argv))
    )


def _bars_disabled_by_env() -> bool:
    return os.environ.get(PROGRESS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class Output:
    """Prints for people or for machines; progress bars only for people at a terminal."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        if not self.progress and PROGRESS_ENV not in os.environ:
            _silence_hub_bars()

    @property
    def progress(self) -> bool:
        return self.fmt == "human" and not _bars_disabled_by_env() and sys.stderr.isatty()

    def result(self, result: Result) -> None:
        """Print the result: its document (json), its quiet lines (quiet), else its lines for people and agents.
        A result that is not ok (status found a difference) is printed whole, then exits with its exit_code (1)."""
        if self.fmt == "json":
            document = {"command": result.command, "ok": result.ok, **result.document()}
            # json.dumps(document, indent=2, sort_keys=True), printed in blocks: a release of 50,000 files would
            # otherwise hold its million chunks and the whole text at once
            for block in json_blocks(json.JSONEncoder(indent=2, sort_keys=True), document):
                click.echo(redact(block), nl=False)
            click.echo("")
        else:
            lines = (
                result.quiet()
                if self.fmt == "quiet"
                else [key_values(r) for r in result.agent()]
                if self.fmt == "agent"
                else result.lines()
            )
            for line in lines:
                click.echo(redact(line))
            for line in getattr(result, "err_lines", list)():  # status: the Hub out of reach, after the rows
                click.echo(redact(line), err=True)
        if not result.ok:
            sys.exit(getattr(result, "exit_code", 1))  # status: 3 when the Hub could not be reached


def stopped(error: BaseException, fmt: str, verbose: bool = False) -> None:
    """A build stopped by `error`, for people (human): on stderr, before its problems, the steps that ran and
    the one it stopped in. The other formats leave it to the failure's document (json) or say only the problems."""
    from release.pipeline import steps_ran

    ran = steps_ran(error)
    if fmt == "human" and ran is not None:
        for line in stopped_lines(ran, error, verbose):
            click.echo(redact(line), err=True)


def key_values(record: dict[str, Any]) -> str:
    """One agent line, as hf prints `out.result`: `key=value` pairs joined by spaces (None left out); a value
    with a space, a quote or an `=` in it is JSON-quoted, so the line still splits on spaces."""
    return " ".join(f"{key}={_agent_value(value)}" for key, value in record.items() if value is not None)


def _agent_value(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, bool) else str(value)
    return json.dumps(text) if not text or any(c.isspace() or c in '"=' for c in text) else text


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
    """huggingface_hub's own bars ("Fetching 16 files") off too: through their switch when its bar module is
    imported, else through the environment, which huggingface_hub.constants reads at import — or, when
    constants is imported already (auto's agent detection imports it), through the value it would have read.
    Importing the bar module only to switch bars off (it loads tqdm and asyncio) costs every command ~0.1 s."""
    if "huggingface_hub.utils.tqdm" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
        return
    os.environ[PROGRESS_ENV] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_DISABLE_PROGRESS_BARS = True  # type: ignore[attr-defined]  # the bar module reads it at import
