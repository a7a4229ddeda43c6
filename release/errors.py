"""One family of typed errors; the CLI maps each type to an exit code (see README)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

MAX_FILE_CHARS = 300
MAX_MESSAGE_CHARS = 600


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]} …[{len(text) - 2 * keep:,} characters cut]… {text[-keep:]}"


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with one file: printed as a single line."""

    file: str
    message: str

    def __post_init__(self) -> None:
        # One line a person can read: an input quoted back (a 2-million-item array, a long path) is cut.
        object.__setattr__(self, "file", _cap(self.file, MAX_FILE_CHARS))
        object.__setattr__(self, "message", _cap(self.message, MAX_MESSAGE_CHARS))

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "message": self.message}


class ReleaseError(Exception):
    """Base of every error hf-release reports; carries every problem of the run."""

    exit_code = 1
    kind = "error"

    def __init__(self, problems: list[Problem] | Problem | str, *, file: str = "hf-release") -> None:
        if isinstance(problems, str):
            problems = [Problem(file, problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class CheckFailed(ReleaseError):
    """An artifact, the card or the manifest failed a check (exit 1)."""

    exit_code = 1
    kind = "check-failed"


class VerifyFailed(ReleaseError):
    """Staged or remote files differ from the manifest (exit 1)."""

    exit_code = 1
    kind = "verify-failed"


class InputError(ReleaseError):
    """The spec, a path or a command-line argument is wrong (exit 2)."""

    exit_code = 2
    kind = "input-error"


class RemoteError(ReleaseError):
    """The Hub could not be reached or refused a request (exit 3)."""

    exit_code = 3
    kind = "remote-error"


class PublishRefused(ReleaseError):
    """A safety rule stops the push: a published tag, a hand-edited card, changed files (exit 4)."""

    exit_code = 4
    kind = "refused"


class UsageError(InputError):
    """The command line does not parse: an unknown option, command or value (exit 2)."""

    kind = "usage"


class Interrupted(ReleaseError):
    """Ctrl-C (exit 130)."""

    exit_code = 130
    kind = "interrupted"


class Terminated(Interrupted):
    """SIGTERM (exit 143, 128 + 15, as a shell reports a process ended by it), cleaned up as Ctrl-C is."""

    exit_code = 143
    kind = "terminated"


class SigTerm(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives: a KeyboardInterrupt, so every cleanup Ctrl-C runs
    (stop the hashing threads, remove the building folder, release the version's lock) runs for it too."""


EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a check or a verification failed",
    2: "usage or input error (spec, paths, arguments)",
    3: "remote failure (Hub unreachable, auth, server error): re-running may succeed",
    4: "publishing refused by a safety rule (tag exists, hand-edited card, files or sources changed since build, "
    "version in use)",
    130: "interrupted (Ctrl-C)",
    143: "terminated (SIGTERM), cleaned up as for Ctrl-C",
}

# When one run finds problems of several kinds, every problem is printed and the exit code is that of
# the first kind in this order (130 and 143 beat all): fix the command, then reach the Hub, then decide.
PRECEDENCE: tuple[type[ReleaseError], ...] = (InputError, RemoteError, PublishRefused, CheckFailed, VerifyFailed)


def combine(errors: list[ReleaseError]) -> ReleaseError:
    """One error carrying every problem of `errors`, of the kind that wins by PRECEDENCE."""

    def rank(error: ReleaseError) -> int:
        return next((i for i, kind in enumerate(PRECEDENCE) if isinstance(error, kind)), len(PRECEDENCE))

    winner = min(errors, key=rank)
    return type(winner)([p for e in sorted(errors, key=rank) for p in e.problems])


_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a token so that no message hf-release prints can ever contain it."""
    if value and len(value) >= 4:
        _SECRETS.add(value)


# user:password@ (or a bare user@) in any URL, e.g. an --endpoint behind an authenticating proxy.
URL_CREDENTIALS = re.compile(r"(?<=://)[^/?#@\s]+@")


def redact(text: str) -> str:
    for secret in _SECRETS:
        text = text.replace(secret, "***")
    # the regex's look-behind is tried at every position of a large JSON output; the substring test is far cheaper
    return URL_CREDENTIALS.sub("***@", text) if "://" in text else text


def redact_logs() -> None:
    """Redact every log record when it is made, whichever library logs it and wherever it goes (e.g.
    huggingface_hub's HF_DEBUG curl lines quote the endpoint URL, credentials included)."""
    make = logging.getLogRecordFactory()
    if getattr(make, "redacts", False):
        return

    def redacted(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: left for logging to report
            return record
        if redact(text) != text:
            record.msg, record.args = redact(text), None
        return record

    redacted.redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacted)


def first_line(exc: BaseException) -> str:
    """An exception as one redacted line, for messages that quote a library's error."""
    text = str(exc).strip()
    return redact(text.splitlines()[0] if text else type(exc).__name__)
