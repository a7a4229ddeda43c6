"""Release kinds: which there are, and the one rule that tells a release's kind from its config.json.

A kind is a `Kind` value (release/kinds/kind.py) in a module of its own, imported only for a release of
that kind: recognising a kind reads only DETECTION below, so building a transformers release loads
nothing of the drafter. The kind is `[release] kind` in the spec, else detected (by build from the
staged config.json, by init from the folder's); the core checks and the card get the `Kind` value.

To add a kind: write release/kinds/<name>.py defining `KIND = Kind(...)`, add its loader to LOADERS and
(unless it is the default) its rule to DETECTION, add it to the spec schema's `kind` enum, and put its
default template in templates/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .kind import Kind


@dataclass(frozen=True)
class Detection:
    """What in a config.json shows a kind: any of these top-level keys, or any of these architectures."""

    keys: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()

    def why(self, config: dict[str, Any]) -> str | None:
        """What gave the kind away (for init's spec comment), None when the config is not of this kind."""
        for key in self.keys:
            if key in config:
                return f"config.json has {key}"
        named = config.get("architectures")
        for architecture in self.architectures:
            if isinstance(named, list) and architecture in named:
                return f"config.json's architectures name {architecture}"
        return None


def _dflash2_drafter() -> Kind:
    from .dflash2_drafter import KIND

    return KIND


def _transformers() -> Kind:
    from .transformers import KIND

    return KIND


LOADERS: dict[str, Callable[[], Kind]] = {"dflash2-drafter": _dflash2_drafter, "transformers": _transformers}
DEFAULT = "transformers"  # any other config.json, and a release without one
# The most specific first.
DETECTION: tuple[tuple[str, Detection], ...] = (
    ("dflash2-drafter", Detection(keys=("dflash_config",), architectures=("DFlash2DraftModel",))),
)


def kind_named(name: object) -> Kind | None:
    """The kind of that name (a spec's `[release] kind`, a release.json record's), None when there is none."""
    load = LOADERS.get(name) if isinstance(name, str) else None
    return load() if load else None


def default_kind() -> Kind:
    return LOADERS[DEFAULT]()


def detect_kind(config: Any) -> tuple[Kind, str]:
    """The kind config.json shows (its parsed JSON; None: no readable config.json), and why; init and
    build both detect with this. A config.json that is not a JSON object shows no kind but the default."""
    for name, detection in DETECTION:
        why = detection.why(config) if isinstance(config, dict) else None
        if why:
            return LOADERS[name](), why
    return default_kind(), f"config.json of a {DEFAULT} model" if config is not None else "no config.json"
