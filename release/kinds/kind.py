"""The `Kind` value: what is specific to one kind of model release, asked for by the generic core.

A kind is data (its name, default card template, the [card] keys it requires, Hub metadata defaults,
what its usage code must pin) plus hooks: its config, tensor and launcher rules, its usage snippets,
and the part of the card only its releases show (`CardPart`: facts derived from the evidence, their
template variables, model-index results and lineage labels). How a config.json shows its kind is the
registry's (release/kinds/__init__.py), so that recognising a kind imports no kind's module.

This module imports no kind and nothing that imports the pipeline, so the pipeline, the checks and the
card can all name `Kind`: what the card's hooks receive (card/evidence.py `EvidenceMap`, `Evidence`)
is typed `Any` here for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from release.errors import Problem

if TYPE_CHECKING:
    from release.card.text import Expected
    from release.evidence.stats import Comparison
    from release.spec import ReleaseSpec

# config, tensors by name (all shards together), label, check shapes? → problems
TensorRules = Callable[[dict[str, Any], Mapping[str, Any], str, bool], list[Problem]]


class KindFacts(Protocol):
    """A kind's own facts on the card, derived once with the generic ones (card/facts.py `Facts.kind_facts`)."""

    # read-only (properties): the facts are frozen dataclasses
    @property
    def served_verdict(self) -> Comparison | None:
        """The honest note's served verdict, checked against its prose (card/claims.py)."""
        ...

    @property
    def chart_series(self) -> dict[str, Any]:
        """The bench chart's series (card/chart.py render "bench"); empty: no chart."""
        ...

    @property
    def note_series(self) -> dict[str, Any]:
        """The honest note's picture (card/chart.py render "note"); empty: none."""
        ...

    def expected(self) -> dict[str, Expected]:
        """What the lint checks, by section: these tables, lines and phrases."""
        ...

    def variables(self, card: dict[str, Any], emap: Any) -> dict[str, Any]:
        """Template variables: added to the `serving` and `note` namespaces, and namespaces of the kind's own."""
        ...


@dataclass(frozen=True)
class CardPart:
    """What a kind's cards show beyond the generic card, from the same evidence (e.g.
    release/card/speculative/__init__.py)."""

    derive: Callable[[Any, Any, list[Problem]], KindFacts]  # (evidence map, evidence, problems to append to) → facts
    model_index: Callable[[Any, Any, str, str], list[Any]]  # (evidence map, evidence, repo id, version) → EvalResults
    readable: Callable[[dict[str, Any]], bool]  # does a release.json `card` record hold only what this part can word?
    lineage_labels: Mapping[str, str] = field(
        default_factory=dict
    )  # [card.lineage] role → label, beyond the generic ones


@dataclass(frozen=True)
class KindFiles:
    """What a kind's `files_check` read from the release's files (e.g. the adapter's facts), kept with
    what the checks parsed (pipeline.Parsed) so that its card part finds it in the evidence."""

    value: Any


# the release's files (path in repo → local path), the spec's [card] → (the facts read, problems)
FilesCheck = Callable[[Mapping[str, Any], dict[str, Any]], tuple[Any, list[Problem]]]


@dataclass(frozen=True)
class LoadProof:
    """How build proves the card's loading code with the kind's library (release/builder/proof.py): it runs the
    code of the card's `usage_key` block on the staged folder, offline, in a bounded child process."""

    library: str  # the module the proof imports and whose version it records ("transformers")
    # the card_context key whose Python block loads the model ("transformers"); several: the first the card prints
    usage_key: str | tuple[str, ...]
    install: str  # what a user installs to have it ("transformers torch")
    # the model base classes ("module:Class") whose from_pretrained the proof wraps to record each load's missing /
    # unexpected / mismatched keys (builder/load_child.py); none: the load itself is the proof
    load_reports: tuple[str, ...] = ()
    # every model the card's code loads goes through load_reports' from_pretrained, which loads on the meta device
    # (no weight bytes read); False: a release above the real-load bound is not proven (its load would read them all)
    meta_device: bool = True
    # the card's code loads another model from the Hub (an adapter's base): the proof reads it from this machine's
    # Hugging Face cache, offline, always on the meta device (its size is not the release's); not cached: not proven
    loads_from_hub: bool = False
    # the library's own warnings that say the load left weights out where it raises nothing (PEFT's "Found missing
    # adapter keys"): each one seen fails the proof, in those words
    refusing_warnings: tuple[str, ...] = ()
    # the card's block runs up to the last line this matches: the load, not what the card then does with the model
    loaded_by: str = r"model\s*="

    @property
    def name(self) -> str:
        """The library as its users install and name it ("sentence-transformers", not the module's underscore)."""
        return self.install.split()[0]

    @property
    def usage_keys(self) -> tuple[str, ...]:
        return (self.usage_key,) if isinstance(self.usage_key, str) else self.usage_key


@dataclass(frozen=True)
class CardPlaceholder:
    """A [card] value only the author can give, which init writes as a marked placeholder (as it does the summary):
    build renders the card with it and warns, push refuses it without --allow-placeholder
    (release/spec/placeholders.py)."""

    key: str  # the dotted [card] key, e.g. "usage.model_class"
    value: str  # what init writes there; while the key still holds it, it is a placeholder
    comment: str  # init's TOML comment beside it: what to write instead
    fix: str  # build's warning and push's refusal: what the author must write


@dataclass(frozen=True)
class Kind:
    name: str
    template: str  # default card template, a file in the top-level templates/ folder
    config_problems: Callable[[dict[str, Any], str], list[Problem]]
    tensor_problems: TensorRules
    card_part: CardPart
    # launcher (checks/launcher.py Launcher), config, label, repo id → problems
    launcher_problems: Callable[[Any, dict[str, Any] | None, str, str], list[Problem]] | None = None
    card_requires: tuple[str, ...] = ()  # [card] keys (dotted) this kind's card cannot do without; init asks for them
    # the safetensors `__metadata__.format` its loader expects (transformers: 'pt'); None: not asked (timm writes none)
    weights_format: str | None = None
    weights_need_config: bool = False  # refuse weights without config.json (their checks need it)
    config_needs_weights: bool = False  # refuse config.json without weights: the library cannot load the model
    # refuse a config.json whose task takes inputs only a processor prepares (images, audio) without its processor
    # config: the library's loading rule for the kind's models (checks/library_files.py CheckProcessor)
    config_needs_processor: bool = False
    card_defaults: dict[str, Any] = field(default_factory=dict)  # [card.metadata] defaults
    # init's one-line summary: (the files init detected, each with .role and .path; config.json's
    # architectures) → what they are, e.g. "a LORA adapter of org/base"; None: "a <architectures> model"
    describe: Callable[[list[Any], list[str]], str] | None = None
    # extra `usage` code blocks of the card template (Markdown), from the spec and the card's facts
    # (card/facts.py Facts)
    card_context: Callable[[ReleaseSpec, Any], dict[str, str | None]] | None = None
    card_metadata: Callable[[dict[str, Any], Any], dict[str, Any]] | None = (
        None  # ([card], card/facts.py Facts) → defaults
    )
    usage_pins: tuple[str, ...] = ('revision="{version}"',)  # what the card's usage code must hold, per version
    # a kind whose files are not a config.json + weights (an adapter, a GGUF file): reads and checks them
    # all at once (checks/kind.py CheckKindFiles); its card part finds the result as `Evidence.kind_files`
    files_check: FilesCheck | None = None
    # the roles whose files are "the model" evidence measures: when one of them changes, evidence carried over
    # from an earlier version no longer measured these weights (release/evidence/provenance.py)
    model_roles: tuple[str, ...] = ("weights", "weights-index", "config", "code")  # code: the model's own (auto_map)
    load_proof: LoadProof | None = None  # None: build does not prove this kind's card code (says so)
    # the core roles whose files the kind's library loads (beside the kind's own roles): a file of one of them given
    # role `extra` is warned about (checks/library_roles.py CheckExtras)
    library_reads: tuple[str, ...] = (
        "weights",
        "weights-index",
        "config",
        "code",
        "tokenizer",
        "processor",
        "generation-config",
    )

    @property
    def library_name(self) -> str:
        """The library that loads the kind's releases, as the card's front matter names it."""
        return str(self.card_defaults.get("library_name") or "its library")

    # [card] values only the author can give, written by init as marked placeholders (e.g. the model's class)
    card_placeholders: tuple[CardPlaceholder, ...] = ()
    # init: what the library wrote beside the release's files (every file in the folder by its path, its README.md
    # included, which init leaves out) → [card] values by dotted key, each with init's comment
    init_card: Callable[[Mapping[str, Any]], dict[str, tuple[Any, str]]] | None = None
