"""The kinds registry as data: each kind's name, loader, detection rule and roles (REGISTRY), the rules init and
build detect with (release/init/detect.py names no kind).

Imports nothing of release/: the spec schema's `kind` and `role` enums are generated from it
(release/spec/__init__.py), and recognising a kind loads no kind's module (a role's `named_by` hook loads its
kind's reader only where the index file it reads is). release/kinds/__init__.py looks kinds up.
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
    or all of `all_keys` together, or none of `without_keys` while every file of `beside` is at the repo's root; or
    (init only) a tag of `readme_tags` in the front matter of the README.md the library wrote beside its files."""

    keys: tuple[str, ...] = ()
    all_keys: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    root: bool = False  # `files` show the kind only at the repo's root (model_index.json, modules.json)
    # a config.json holding none of these keys, with these files at the root, shows the kind: what a library writes
    # when its config.json is only its own (a model's constructor arguments), not another library's
    without_keys: tuple[str, ...] = ()
    beside: tuple[str, ...] = ()
    # the library's own README.md (init leaves it out: hf-release writes the card) tagged so: seen by init only,
    # which writes the kind into the spec, since build never stages that README
    readme_tags: tuple[str, ...] = ()

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

    def why_readme(self, tags: Iterable[str]) -> str | None:
        """The README.md tag that gave the kind away, None when none does."""
        hit = next((t for t in self.readme_tags if t in set(tags)), None)
        return f"the library's README.md is tagged {hit}" if hit else None

    def why(self, config: dict[str, Any], names: Iterable[str] = ()) -> str | None:
        """What in config.json (and beside it, `names`: the files' paths in the repo) gave the kind away (for init's
        spec comment), None when it is not of this kind."""
        if self.without_keys and self.beside:
            there = set(names)
            if not any(key in config for key in self.without_keys) and all(b in there for b in self.beside):
                return f"config.json has no {'/'.join(self.without_keys)}, beside {', '.join(self.beside)}"
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
class NamedFolders:
    """Folders an index file at the repo's root names: every file inside one takes the role, whatever its name
    (its config, weights, tokenizer are the kind's, checked through the kind's reader, never by their own names)."""

    index: str  # the index file's name, at the repo's root
    folders: Callable[[Any], frozenset[str]]  # the index's parsed JSON → the top folders it names


@dataclass(frozen=True)
class Role:
    """A role a kind's own files take: its name, the file names (or paths in the repo, or folders an index names) init
    gives it to, and whether a release holds at most one such file (checks/roles.py)."""

    name: str
    files: tuple[str, ...]  # fnmatch patterns on the file's name
    at_most_one: bool = False
    paths: tuple[str, ...] = ()  # fnmatch patterns on the file's path in the repo ("[0-9]*_Pooling/*")
    folder_word: str = "folder"  # what init's spec comment calls a folder `paths` matches ("<kind> <folder_word>")
    named_by: NamedFolders | None = None  # every file in the folders this index names takes the role

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


def _hook(module: str, name: str) -> Callable[..., Any]:
    """A function of a kind's folder, imported when first called: recognising a kind loads no kind's module."""

    def call(*args: Any) -> Any:
        from importlib import import_module

        return getattr(import_module(f"release.kinds.{module}"), name)(*args)

    return call


DEFAULT = "transformers"  # any other config.json, and a release without one
# The most specific first: a file only one kind has, then what config.json shows.
REGISTRY: list[Registered] = [
    # a diffusers pipeline: model_index.json at the root; every file inside a component folder it names takes
    # role `component`, checked through the pipeline's reader, never by its own name
    Registered(
        "diffusers-pipeline",
        _load("diffusers_pipeline"),
        Detection(files=("model_index.json",), root=True),
        (
            Role("pipeline-index", ("model_index.json",), at_most_one=True),
            Role(
                "component",
                (),
                named_by=NamedFolders("model_index.json", _hook("diffusers_pipeline.reader", "component_folders")),
            ),
        ),
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
    # what diffusers' save_lora_weights writes (LORA_WEIGHT_NAME_SAFE), at the root: a LoRA of a pipeline's components
    Registered(
        "diffusers-lora",
        _load("diffusers_lora"),
        Detection(files=("pytorch_lora_weights.safetensors",), root=True),
        (Role("lora-weights", ("pytorch_lora_weights.safetensors",), at_most_one=True),),
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
                folder_word="module folder",
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
    # huggingface_hub's PyTorchModelHubMixin.save_pretrained: config.json is the model's constructor arguments (none
    # of the keys transformers' save_pretrained always writes, nor diffusers' _class_name), model.safetensors beside
    # it; its README.md is tagged model_hub_mixin (init reads that, and writes the kind into the spec)
    Registered(
        "hub-mixin",
        _load("hub_mixin"),
        Detection(
            without_keys=("architectures", "model_type", "transformers_version", "_class_name"),
            beside=("model.safetensors",),
            readme_tags=("model_hub_mixin",),
        ),
    ),
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


def owned_role(file_name: str, path: str | None = None) -> tuple[str, str] | None:
    """The kind role a file takes by its name (or its path in the repo) and why, as init's spec comment says it;
    None: no kind claims it."""
    found = role_for(file_name, path)
    if found is None:
        return None
    role, kind = found
    return role.name, f"{kind} file name" if role.matches(file_name) else f"{kind} {role.folder_word}"


def folder_roles(read_index: Callable[[str], Any]) -> dict[str, tuple[str, str]]:
    """The top folders whose every file takes a kind's role because an index file at the repo's root names them →
    (the role, why); `read_index` gives an index file's parsed JSON by its name, None where there is none."""
    found: dict[str, tuple[str, str]] = {}
    for role, named_by in ((role, role.named_by) for r in REGISTRY for role in r.roles):
        index = read_index(named_by.index) if named_by is not None else None
        if named_by is None or index is None:
            continue
        for folder in sorted(named_by.folders(index)):
            found.setdefault(folder, (role.name, f"in {folder}/, a {role.name} {named_by.index} names"))
    return found


def role_kind(role: str) -> str | None:
    """The kind a role belongs to; None for the core roles every kind shares."""
    return next((r.name for r in REGISTRY for x in r.roles if x.name == role), None)
