"""The `hf-release` group of commands, and `main`: the one place errors become messages and exit codes."""

from __future__ import annotations

import os
import signal
import sys
import threading

import click

from .. import __version__
from ..errors import EXIT_CODES, Interrupted, ReleaseError, SigTerm, redact_logs
from ..library_errors import translate
from .build import build
from .card import card
from .hash import hash_command
from .hub import hub
from .init import init
from .output import fail, wants_json
from .push import push
from .results import Failure
from .sign import sign
from .status import status
from .verify import verify

EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODE_HELP)
@click.version_option(__version__, prog_name="hf-release")
def cli() -> None:
    """Publish a model release to the Hugging Face Hub exactly, checkably and honestly."""


for command in (build, verify, sign, push, card, init, status, hash_command, hub):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line per problem and a documented exit code (README)."""
    args = argv if argv is not None else sys.argv[1:]
    redact_logs()
    fmt = "json" if wants_json(args) else "human"
    command = next((a for a in args if not a.startswith("-")), None)
    _terminate_as_interrupt()
    try:
        cli.main(args=argv, prog_name="hf-release", standalone_mode=False)
    except ReleaseError as exc:
        fail(Failure.of(command, exc), fmt)
    except (Exception, KeyboardInterrupt) as exc:
        if isinstance(exc.__cause__, SigTerm):  # click reports any KeyboardInterrupt as its Abort
            exc = exc.__cause__
        translated = translate(exc)  # a library's exception (click's, the OS's, huggingface_hub's)
        if translated is None:
            raise
        failure = Failure(command, translated.error.exit_code, translated.error.kind,
                          [{"file": translated.file, "message": translated.message}])
        if issubclass(translated.error, Interrupted):
            _exit_interrupted(failure, fmt)
        fail(failure, fmt)
    sys.exit(0)


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
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(failure.exit_code)
