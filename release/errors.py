"""One family of typed errors; the CLI maps each type to an exit code (see README)."""

from __future__ import annotations

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


EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a check or a verification failed",
    2: "usage or input error (spec, paths, arguments)",
    3: "remote failure (Hub unreachable, auth, server error)",
    4: "publishing refused by a safety rule (tag exists, hand-edited card, files changed since build)",
    130: "interrupted",
}


_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a token so that no message hf-release prints can ever contain it."""
    if value and len(value) >= 4:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for secret in _SECRETS:
        text = text.replace(secret, "***")
    return text


def first_line(exc: BaseException) -> str:
    """An exception as one redacted line, for messages that quote a library's error."""
    text = str(exc).strip()
    return redact(text.splitlines()[0] if text else type(exc).__name__)
