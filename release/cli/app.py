"""The `hf-release` group of commands, and `main`: the one place errors become messages and exit codes."""

from __future__ import annotations

import os
import signal
import sys

import click

from .. import __version__
from ..errors import EXIT_CODES, Interrupted, ReleaseError, redact_logs
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
    try:
        cli.main(args=argv, prog_name="hf-release", standalone_mode=False)
    except ReleaseError as exc:
        fail(Failure.of(command, exc), fmt)
    except (Exception, KeyboardInterrupt) as exc:
        translated = translate(exc)  # a library's exception (click's, the OS's, huggingface_hub's)
        if translated is None:
            raise
        failure = Failure(command, translated.error.exit_code, translated.error.kind,
                          [{"file": translated.file, "message": translated.message}])
        if translated.error is Interrupted:
            _exit_interrupted(failure, fmt)
        fail(failure, fmt)
    sys.exit(0)


def _exit_interrupted(failure: Failure, fmt: str) -> None:
    """Exit now: what must be undone was undone on the way up (build removes its staging folder), and a
    normal shutdown would wait for worker threads or let a late second interrupt end the process by signal."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fail(failure, fmt)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
