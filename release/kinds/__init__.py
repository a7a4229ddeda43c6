"""Release kinds: what is specific to one kind of model release, one module per kind.

A kind is a `Kind` value (data: its name, default card template, the [card] keys it requires, how to
recognise it) plus the few functions only it needs (its config rules, its tensor rules, its launcher
rules, extra card variables). The core checks and card are generic and ask the release's kind for
these. The kind is `[release] kind` in the spec, else detected from the staged config.json.

To add a kind: write release/kinds/<name>.py defining `KIND = Kind(...)`, add it to KINDS below and
to the spec schema's `kind` enum, and put its default template in templates/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem
from ..spec import ReleaseSpec

# config, tensors by name (all shards together), label, check shapes? → problems
TensorRules = Callable[[dict[str, Any], dict[str, Any], str, bool], list[Problem]]


@dataclass(frozen=True)
class Kind:
    name: str
    template: str  # default card template, a file in the top-level templates/ folder
    detect: Callable[[dict[str, Any]], bool]  # does this config.json belong to this kind?
    config_problems: Callable[[dict[str, Any], str], list[Problem]]
    tensor_problems: TensorRules
    # launcher (checks/launcher.py Launcher), config, label, repo id → problems
    launcher_problems: Callable[[Any, dict[str, Any] | None, str, str], list[Problem]] | None = None
    card_requires: tuple[str, ...] = ()  # [card] keys (dotted) this kind's card cannot do without
    weights_need_config: bool = False  # refuse weights without config.json (their checks need it)
    card_defaults: dict[str, Any] = field(default_factory=dict)  # [card.metadata] defaults
    # extra `usage` code blocks of the card template (Markdown), from the spec and the card's facts (card/facts.py Facts)
    card_context: Callable[[ReleaseSpec, Any], dict[str, str | None]] | None = None
    model_facts: bool = False  # the card shows the model's facts (architecture, parameters, …)
    usage_pins: tuple[str, ...] = ('revision="{version}"',)  # what the card's usage code must hold, per version


def kinds() -> dict[str, Kind]:
    """Every kind by name; the order is the detection order (the most specific first)."""
    from . import dflash2_drafter, transformers

    return {k.name: k for k in (dflash2_drafter.KIND, transformers.KIND)}


def kind_named(name: str) -> Kind:
    return kinds()[name]


def detect_kind(config: dict[str, Any] | None) -> Kind:
    """The first kind whose `detect` accepts the config; a release without config.json is a transformers one."""
    for kind in kinds().values():
        if config is not None and kind.detect(config):
            return kind
    return kinds()["transformers"]
