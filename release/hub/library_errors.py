"""One ordered table from the exceptions of the libraries hf-release calls (huggingface_hub, httpx2, click,
the operating system) to the error it reports: its exit code (README's table) and its one line.

huggingface_hub's own CLI keeps such a table (cli/_errors.py CLI_ERROR_MAPPINGS). The first rule that
matches wins. Rules `in_hub_call` apply inside `remote.remote_errors` (a request to the Hub failed: the line
names the repo and what was being done); the others where `cli.main` catches what no command handled.

A library's classes are named, not imported: one that is not loaded yet raised nothing, and importing
huggingface_hub (~0.25 s) only to compare against its classes would slow every command's start and the
exit on Ctrl-C.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from release.errors import (
    CheckFailed,
    InputError,
    Interrupted,
    ReleaseError,
    RemoteError,
    Terminated,
    UsageError,
    first_line,
    redact,
)
from release.staged.names import CARD_NAME

if TYPE_CHECKING:
    from huggingface_hub.errors import HfHubHTTPError

HUB = "huggingface_hub.errors"


@dataclass(frozen=True)
class HubCall:
    """The request to the Hub an exception interrupted, named in the line reported."""

    repo_id: str
    action: str


@dataclass(frozen=True)
class Translated:
    """What hf-release reports for a library's exception: one problem, of the kind `error`."""

    error: type[ReleaseError]
    file: str
    message: str

    def raised(self) -> ReleaseError:
        return self.error(self.message, file=self.file)


@dataclass(frozen=True)
class Rule:
    """One row: exceptions of these classes ("module:Class") become `error`, in the words of `reason`: a
    message, or (file, message) when it names its own file; None leaves the exception as it is."""

    catches: tuple[str, ...]
    error: type[ReleaseError]
    reason: Callable[[Any], str | tuple[str, str] | None]
    in_hub_call: bool = True  # False: applies where main catches it, never inside a Hub call

    def matches(self, exc: BaseException) -> bool:
        return any(isinstance(exc, cls) for cls in map(_loaded, self.catches) if cls is not None)


def _loaded(name: str) -> type | None:
    module, _, cls = name.partition(":")
    return getattr(sys.modules.get(module), cls, None)


def hub_answer(exc: HfHubHTTPError) -> str:
    """The Hub's own reason for an HTTP error, on one line, with its request id when it sent one."""
    status = exc.response.status_code if exc.response is not None else "?"
    reason = "; ".join(line.strip() for line in (exc.server_message or "").splitlines() if line.strip())
    text = f"the Hub answered HTTP {status}: {reason or first_line(exc)}"
    return redact(text + (f" (request id {exc.request_id})" if exc.request_id else ""))


def _card_metadata_refused(exc: ValueError) -> tuple[str, str] | None:
    """huggingface_hub turns the Hub's 400 on README.md's front matter into a ValueError: the card's
    metadata is wrong (a check failed), not the Hub; nothing was committed."""
    hub_refused = _loaded(f"{HUB}:HfHubHTTPError")
    if (
        hub_refused is None
        or not isinstance(exc.__cause__, hub_refused)
        or not str(exc).startswith(f"Invalid metadata in {CARD_NAME}")
    ):
        return None
    reasons = (
        "; ".join(line.lstrip("- ").strip() for line in str(exc).splitlines()[1:] if line.strip()) or "no reason given"
    )
    return (
        CARD_NAME,
        f"the Hub refuses the card's metadata ({reasons}); fix [card.metadata] in the spec, build again, then push",
    )


def _upload_gave_up(exc: RuntimeError) -> str | None:
    """huggingface_hub wraps a failed LFS upload (retries exhausted, Hub gone) in a RuntimeError whose cause
    is the HTTP or network error: that cause is what is reported."""
    cause, why = exc.__cause__, None
    while cause is not None and why is None:
        why, cause = describe_remote(cause), cause.__cause__
    return None if why is None else f"{first_line(exc).rstrip('.')}: {why}"


def _misparsed(exc: Exception) -> str | None:
    """huggingface_hub reads the Hub's answers without checking their shape: a KeyError, TypeError… raised in
    its own code while it parses one (or the JSON decoder refusing it) means the answer was malformed. Raised
    anywhere else, it stays what it is (a bug, with its traceback)."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_globals.get("__name__", ""))
        tb = tb.tb_next
    if not isinstance(exc, json.JSONDecodeError) and not any(
        name.split(".")[0] in ("huggingface_hub", "httpx2") for name in frames
    ):
        return None
    return (
        f"the Hub's answer is malformed ({type(exc).__name__}: {first_line(exc)[:200]}); "
        "check the endpoint, or re-run later"
    )


def _file_failed(exc: OSError) -> tuple[str, str]:
    """A file or the network failed under a command: still one line, never a traceback."""
    return str(
        exc.filename
    ) if exc.filename else "hf-release", f"{exc.strerror or exc}; check the path, its permissions and free space"


# What went wrong talking to the Hub (also the words for the cause of a wrapped upload failure).
HUB_FAILURES: tuple[Rule, ...] = (
    Rule(
        ("release.hub.transport:AnswerRefused",),
        RemoteError,
        lambda exc: f"{first_line(exc)}; check the endpoint, or re-run later",
    ),
    Rule(
        (f"{HUB}:RepositoryNotFoundError",),
        RemoteError,
        lambda exc: "the repo does not exist or the token cannot see it",
    ),
    Rule((f"{HUB}:RevisionNotFoundError",), RemoteError, lambda exc: f"revision not found ({first_line(exc)})"),
    Rule((f"{HUB}:HfHubHTTPError",), RemoteError, hub_answer),
    Rule(
        ("httpx2:TransportError", "builtins:OSError"),
        RemoteError,
        lambda exc: f"cannot reach the Hub ({type(exc).__name__}: {first_line(exc)})",
    ),
)

# Every OSError huggingface_hub defines: a failure of the Hub or of its client, not of a local path.
HUB_OS_ERRORS = tuple(
    f"{HUB}:{name}"
    for name in (
        "HfHubHTTPError",
        "LocalEntryNotFoundError",
        "LocalTokenNotFoundError",
        "FileMetadataError",
        "DryRunError",
        "InferenceTimeoutError",
        "InferenceEndpointTimeoutError",
    )
)

LIBRARY_ERRORS: tuple[Rule, ...] = (
    # a request to the Hub failed
    Rule(
        (f"{HUB}:HFValidationError",),
        InputError,  # a name the client refuses to send: the spec's to fix
        lambda exc: f"huggingface_hub refuses it ({first_line(exc)})",
    ),
    *HUB_FAILURES,
    Rule(
        (
            "json:JSONDecodeError",
            f"{HUB}:HfUriError",
            "builtins:KeyError",
            "builtins:TypeError",
            "builtins:AttributeError",
            "builtins:IndexError",
        ),
        RemoteError,
        _misparsed,
    ),
    Rule(("builtins:ValueError",), CheckFailed, _card_metadata_refused),
    Rule(("builtins:RuntimeError",), RemoteError, _upload_gave_up),
    # what reaches main
    Rule(("release.errors:SigTerm",), Terminated, lambda exc: "terminated (SIGTERM)", in_hub_call=False),
    Rule(
        ("click.exceptions:Abort", "builtins:KeyboardInterrupt"),
        Interrupted,
        lambda exc: "interrupted",
        in_hub_call=False,
    ),
    Rule(("click.exceptions:ClickException",), UsageError, lambda exc: exc.format_message(), in_hub_call=False),
    Rule(("builtins:ConnectionError", *HUB_OS_ERRORS), RemoteError, _file_failed, in_hub_call=False),
    Rule(("builtins:OSError",), InputError, _file_failed, in_hub_call=False),
)


def translate(exc: BaseException, call: HubCall | None = None) -> Translated | None:
    """What hf-release reports for `exc`, raised during the Hub request `call` or (None) anywhere else, by the
    first rule that matches; None leaves `exc` as it is (no rule matches: a bug, shown with its traceback)."""
    rule = next((rule for rule in LIBRARY_ERRORS if rule.in_hub_call == (call is not None) and rule.matches(exc)), None)
    reason = None if rule is None else rule.reason(exc)
    if rule is None or reason is None:
        return None
    if isinstance(reason, tuple):
        return Translated(rule.error, *reason)
    if call is None:
        return Translated(rule.error, "hf-release", reason)
    return Translated(rule.error, call.repo_id, f"{call.action}: {reason}")


def describe_remote(exc: BaseException) -> str | None:
    """What went wrong talking to the Hub, or None if `exc` is not a remote failure."""
    rule = next((rule for rule in HUB_FAILURES if rule.matches(exc)), None)
    if rule is None:
        return None
    reason = rule.reason(exc)
    assert not isinstance(reason, tuple), "HUB_FAILURES' reasons are one message, never (where, message)"
    return reason
