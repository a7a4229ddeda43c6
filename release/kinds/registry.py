"""The kinds registry as data: each kind's name, loader, detection rule and roles (REGISTRY).

Imports nothing of release/: the spec schema's `kind` and `role` enums are generated from it
(release/spec/__init__.py), and recognising a kind loads no kind's module. release/kinds/__init__.py looks kinds up.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Detection:
    """What shows a kind: a file whose name matches one of `files` (fnmatch on the file's name, in any
    folder; only at the repo's root when `root`), or in config.json any of these top-level keys or architectures,
    or all of `all_keys` together."""

    keys: tuple[str, ...] = ()
    all_keys: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    root: bool = False  # `files` show the kind only at the repo's root (model_index.json, modules.json)

    def why_files(self, names: Iterable[str]) -> str | None:
        """The file that gave the kind away, None when no file name shows it."""
        for pattern in self.files:
            hit = next(
                (
                    n
                    for n in sorted(names)
                    if (not self.root or "/" not in n) and fnmatch.fnmatchcase(n.rsplit("/", 1)[-1], pattern)
                ),
                None,
            )
            if hit is not None:
                return f"the release holds {hit}"
        return None

    def why(self, config: dict[str, Any]) -> str | None:
        """What in config.json gave the kind away (for init's spec comment), None when it is not of this kind."""
        for key in self.keys:
            if key in config:
                return f"config.json has {key}"
        if self.all_keys and all(key in config for key in self.all_keys):
            return "config.json has " + " and ".join(self.all_keys)
        named = config.get("architectures")
        for architecture in self.architectures:
            if isinstance(named, list) and architecture in named:
                return f"config.json's architectures name {architecture}"
        return None


@dataclass(frozen=True)
class Role:
    """A role a kind's own files take: its name, the file names (or paths in the repo) init gives it to, and
    whether a release holds at most one such file (checks/roles.py)."""

    name: str
    files: tuple[str, ...]  # fnmatch patterns on the file's name
    at_most_one: bool = False
    paths: tuple[
        str, ...
    ] = ()  # fnmatch patterns on the file's path in the repo (a module's folder: "[0-9]*_Pooling/*")

    def matches(self, file_name: str, path: str | None = None) -> bool:
        return any(fnmatch.fnmatchcase(file_name, pattern) for pattern in self.files) or (
            path is not None and any(fnmatch.fnmatchcase(path, pattern) for pattern in self.paths)
        )


@dataclass(frozen=True)
class Registered:
    """One kind in the registry: its name, how to load its module, how to recognise it, its roles."""

    name: str
    load: Callable[[], Any]  # → the kind module's KIND (release/kinds/kind.py Kind)
    detection: Detection | None = None  # None: only named by the spec, or the default
    roles: tuple[Role, ...] = ()


def _load(module: str) -> Callable[[], Any]:
    def load() -> Any:
        from importlib import import_module

        return import_module(f"release.kinds.{module}").KIND

    return load


DEFAULT = "transformers"  # any other config.json, and a release without one
# The most specific first: a file only one kind has, then what config.json shows.
REGISTRY: list[Registered] = [
    # a diffusers pipeline: model_index.json at the root; every file inside a component folder it names takes
    # role `component` (release/init/detect.py scan), checked through the pipeline's reader, never by its own name
    Registered(
        "diffusers-pipeline",
        _load("diffusers_pipeline"),
        Detection(files=("model_index.json",), root=True),
        (Role("pipeline-index", ("model_index.json",), at_most_one=True), Role("component", ())),
    ),
    Registered(
        "peft-adapter",
        _load("peft_adapter"),
        Detection(files=("adapter_config.json",)),
        (
            Role("adapter-config", ("adapter_config.json",), at_most_one=True),
            Role("adapter-weights", ("adapter_model.safetensors",), at_most_one=True),
        ),
    ),
    Registered("gguf", _load("gguf"), Detection(files=("*.gguf",)), (Role("gguf", ("*.gguf",)),)),
    # modules.json at the root; the modules' own folders ({idx}_{Class}/, as SentenceTransformer.save names them) hold
    # a config.json (and a Dense module's weights) that are not the backbone's: they take their own role
    Registered(
        "sentence-transformers",
        _load("sentence_transformers"),
        Detection(files=("modules.json",), root=True),
        (
            Role(
                "sentence-transformers-config",
                ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json"),
            ),
            Role(
                "sentence-transformers-module",
                (),
                paths=tuple(
                    f"[0-9]*_{module}/*"
                    for module in (
                        "Pooling",
                        "Dense",
                        "Normalize",
                        "LayerNorm",
                        "Router",
                        "StaticEmbedding",
                        "CNN",
                        "LSTM",
                    )
                ),
            ),
        ),
    ),
    Registered(
        "dflash2-drafter",
        _load("dflash2_drafter"),
        Detection(keys=("dflash_config",), architectures=("DFlash2DraftModel",)),
    ),
    Registered(
        "timm", _load("timm_model"), Detection(all_keys=("architecture", "pretrained_cfg"))
    ),  # timm's save_for_hf
    Registered("transformers", _load("transformers")),
]


def names() -> list[str]:
    """Every kind's name, in the registry's order (the spec schema's `kind` enum)."""
    return [r.name for r in REGISTRY]


def kind_roles() -> list[Role]:
    """The roles the kinds' own files take, in the registry's order (added to the spec schema's `role` enum)."""
    return [role for r in REGISTRY for role in r.roles]


def role_for(file_name: str, path: str | None = None) -> tuple[Role, str] | None:
    """The kind role a file of that name (at that path in the repo, when known) takes, and the kind it belongs to;
    None: no kind claims it."""
    for r in REGISTRY:
        for role in r.roles:
            if role.matches(file_name, path):
                return role, r.name
    return None


def role_kind(role: str) -> str | None:
    """The kind a role belongs to; None for the core roles every kind shares."""
    return next((r.name for r in REGISTRY for x in r.roles if x.name == role), None)
