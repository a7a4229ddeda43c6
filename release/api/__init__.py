"""hf-release from Python, installed as `hf_release` (the wheel maps this module to that name: pyproject.toml).

    import hf_release

    built = hf_release.build("v5")  # a Built; built.document() is what `build --json` prints
    hf_release.verify("v5")
    pushed = hf_release.push("v5", dry_run=True)

Each function is the command of the same name (docs/api.md): keyword arguments for its options, the result
object its `--format json` output serializes, and the typed errors of the exit-code table (ReleaseError's
family: CheckFailed and VerifyFailed 1, InputError 2, RemoteError 3, PublishRefused 4). Ctrl-C stays Python's
KeyboardInterrupt.
"""

from release import __version__
from release.api.commands import build, init, push, sign, status, verify
from release.cli.results import Built, Initialized, Pushed, RemoteVerified, Signed, StatusReport, Verified
from release.errors import (
    EXIT_CODES,
    CheckFailed,
    InputError,
    Problem,
    PublishRefused,
    ReleaseError,
    RemoteError,
    VerifyFailed,
)

__all__ = [
    "EXIT_CODES",
    "Built",
    "CheckFailed",
    "Initialized",
    "InputError",
    "Problem",
    "PublishRefused",
    "Pushed",
    "ReleaseError",
    "RemoteError",
    "RemoteVerified",
    "Signed",
    "StatusReport",
    "Verified",
    "VerifyFailed",
    "__version__",
    "build",
    "init",
    "push",
    "sign",
    "status",
    "verify",
]
