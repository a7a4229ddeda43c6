"""The `hf-release` group of commands, and `main`: the one place errors become messages and exit codes."""

from __future__ import annotations

import atexit
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import NoReturn

import click

from release import __version__
from release.cli.output import fail, wants_json
from release.cli.results import Failure
from release.errors import EXIT_CODES, Interrupted, ReleaseError, SigTerm, redact_logs
from release.hub.endpoint import check_env_endpoint

# Every command: its name → "module of release/cli:the click command in it". A command's module is imported
# when that command runs or its help is shown (`hf-release --help` imports them all, for their summaries), so
# a process imports only its own command's module and what that needs.
COMMANDS = {
    "build": "build:build",
    "card": "card:card",
    "hash": "hash:hash_command",
    "hub": "hub:hub",
    "init": "init:init",
    "push": "push:push",
    "sign": "sign:sign",
    "status": "status:status",
    "verify": "verify:verify",
}

HELP_OR_VERSION = frozenset(("-h", "--help", "--version"))
EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())


class LazyCommands(Mapping[str, click.Command]):
    """The group's `commands`, read as click reads them (listed by name, looked up by name, names offered for a
    mistyped one) but each imported on its first look-up."""

    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = table

    def __getitem__(self, name: str) -> click.Command:
        module, _, attribute = self.table[name].partition(":")
        command: click.Command = getattr(importlib.import_module(f".{module}", __package__), attribute)
        return command

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODE_HELP)
@click.version_option(__version__, prog_name="hf-release")
def cli() -> None:
    """Publish a model release to the Hugging Face Hub exactly, checkably and honestly."""


cli.commands = LazyCommands(COMMANDS)  # type: ignore[assignment]  # read-only: the table above is the list


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line per problem and a documented exit code (README)."""
    args = argv if argv is not None else sys.argv[1:]
    redact_logs()
    fmt = "json" if wants_json(args) else "human"
    command = next((a for a in args if not a.startswith("-")), None)
    _terminate_as_interrupt()
    try:
        if not HELP_OR_VERSION.intersection(args):
            check_env_endpoint()  # before anything imports huggingface_hub, which reads it at import
        cli.main(args=argv, prog_name="hf-release", standalone_mode=False)
    except ReleaseError as exc:
        fail(Failure.of(command, exc), fmt)
    except (Exception, KeyboardInterrupt) as exc:
        if isinstance(exc.__cause__, SigTerm):  # click reports any KeyboardInterrupt as its Abort
            exc = exc.__cause__
        from release.hub.library_errors import translate  # the table is loaded only when a run fails
        from release.pipeline import steps_ran

        translated = translate(exc)  # a library's exception (click's, the OS's, huggingface_hub's)
        if translated is None:
            raise
        failure = Failure(
            command,
            translated.error.exit_code,
            translated.error.kind,
            [{"file": translated.file, "message": translated.message}],
            steps_ran(exc),  # a build interrupted: what it had run
        )
        if issubclass(translated.error, Interrupted):
            _exit_interrupted(failure, fmt)
        fail(failure, fmt)
    sys.exit(0)


def run() -> NoReturn:
    """The console script and `python -m release`: main(), then an exit without the interpreter's teardown.

    The teardown collects and frees every object the run imported: measured 0.5-0.9 s after each build (the
    ~100,000 objects of matplotlib, scipy, jsonschema and the rest), a sixth of a small release's build. What
    it does that matters is done first: threads that are not daemons are waited for (a chart being drawn),
    atexit's handlers run (logging's flush, temporary folders' cleanup), stdout and stderr are flushed."""
    code: str | int | None = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    finish = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere the usual exit
    if not isinstance(code, (int, type(None))) or finish is None:
        sys.exit(code)
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    finish()
    _exit_now(code or 0)


def _exit_now(code: int) -> NoReturn:
    """stdout and stderr flushed, then the process ends at once with `code`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing more can be said on it
            pass
    os._exit(code)


def _terminate_as_interrupt() -> None:
    """SIGTERM (a CI job cancelled, `kill`, a container stopped) takes Ctrl-C's path: every cleanup runs, then
    exit 143. Python's default would end the process on the spot, leaving a half-built staging folder."""
    if threading.current_thread() is threading.main_thread():  # signal handlers can only be set there

        def terminated(signum: int, frame: object) -> None:
            raise SigTerm()

        signal.signal(signal.SIGTERM, terminated)


def _exit_interrupted(failure: Failure, fmt: str) -> None:
    """Exit now: what must be undone was undone on the way up (build removes its staging folder), and a
    normal shutdown would wait for worker threads or let a late second interrupt end the process by signal."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        fail(failure, fmt)
    finally:
        _exit_now(failure.exit_code)
