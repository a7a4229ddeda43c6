"""Release kinds: which there are, the roles their files play, and the one rule that tells a release's kind.

A kind is a `Kind` value (release/kinds/kind.py) in a folder of its own, imported only for a release of that kind:
recognising a kind reads only REGISTRY (release/kinds/registry.py), so building a transformers release loads nothing of
the drafter. The kind is `[release] kind` in the spec, else detected from the files a release holds (by build from the
staged files, by init from the folder's): first a file only that kind has (adapter_config.json, a `*.gguf` file), then
what config.json shows; the core checks and the card get the `Kind` value. The roles a kind's own files take
(`adapter-config`, `gguf`, …) are the registry's too, so that init names them and the spec schema allows them without
loading the kind.

To add a kind: write its folder release/kinds/<name>/ (`KIND = Kind(...)` in its __init__.py, its readers beside it),
put its default template in templates/, and add one `Registered(...)` to REGISTRY in release/kinds/registry.py (its
loader, its detection, its roles). The spec schema's `kind` and `role` enums are generated from REGISTRY
(release/spec/__init__.py `spec_schema`); init, detection and the card need no edit (docs/kinds.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from release.kinds.kind import Kind
from release.kinds.registry import (
    DEFAULT,
    REGISTRY,
    Detection,
    NamedFolders,
    Registered,
    Role,
    folder_roles,
    kind_roles,
    names,
    owned_role,
    role_for,
    role_kind,
)

__all__ = [
    "DEFAULT",
    "REGISTRY",
    "Detection",
    "NamedFolders",
    "Registered",
    "Role",
    "default_kind",
    "detect_kind",
    "folder_roles",
    "kind_named",
    "kind_roles",
    "names",
    "owned_role",
    "role_for",
    "role_kind",
]


def kind_named(name: object) -> Kind | None:
    """The kind of that name (a spec's `[release] kind`, a release.json record's), None when there is none."""
    found = next((r for r in REGISTRY if r.name == name), None) if isinstance(name, str) else None
    return found.load() if found else None


def default_kind() -> Kind:
    return kind_named(DEFAULT)  # type: ignore[return-value]


def detect_kind(config: Any, files: Iterable[str] = (), readme_tags: Iterable[str] = ()) -> tuple[Kind, str]:
    """The kind a release's files show (their paths in the repo) and its config.json (parsed JSON; None: no
    readable config.json), and why; init and build both detect with this. The files first (a file only one
    kind has), then (init only: build stages no library README) the tags of the README.md the library wrote,
    then config.json; a config.json that is not a JSON object shows no kind but the default."""
    files, readme_tags = list(files), list(readme_tags)
    for r in REGISTRY:
        why = r.detection.why_files(files) if r.detection else None
        if why:
            return r.load(), why
    for r in REGISTRY:
        why = r.detection.why_readme(readme_tags) if r.detection and readme_tags else None
        if why:
            return r.load(), why
    for r in REGISTRY:
        why = r.detection.why(config, files) if r.detection and isinstance(config, dict) else None
        if why:
            return r.load(), why
    return default_kind(), f"config.json of a {DEFAULT} model" if config is not None else "no config.json"
