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

from ..checks.common import read_json
from ..errors import CheckFailed, Problem
from ..pipeline import Context, Done, StepResult
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
    launcher_problems: Callable[[Any, dict[str, Any] | None, str], list[Problem]] | None = None
    card_requires: tuple[str, ...] = ()  # [card] keys this kind's card cannot do without
    card_defaults: dict[str, Any] = field(default_factory=dict)  # [card.metadata] defaults
    # extra `usage` variables of the card template, from the spec and the card's facts (release/card/facts.py Facts)
    card_context: Callable[[ReleaseSpec, Any], dict[str, Any]] | None = None
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


class SelectKind:
    """Step: the spec's `[release] kind`, else the kind config.json says (the config check reports a bad one)."""

    name = "select-kind"

    def run(self, ctx: Context) -> StepResult:
        if ctx.spec.kind:
            ctx.kind = ctx.spec.kind
            return Done(f"{ctx.kind} (from the spec)")
        configs = ctx.by_role("config")
        config = None
        if len(configs) == 1:
            try:
                data = read_json(configs[0].staged, configs[0].path_in_repo)
                config = data if isinstance(data, dict) else None
            except CheckFailed:
                pass
        ctx.kind = detect_kind(config).name
        return Done(f"{ctx.kind} (detected from config.json)" if config else f"{ctx.kind} (no config.json to tell)")


class CheckCardSpec:
    """Step: the [card] keys the kind requires (the schema leaves them optional for other kinds)."""

    name = "check-card-spec"

    def run(self, ctx: Context) -> StepResult:
        kind = kind_named(ctx.kind)
        missing = [key for key in kind.card_requires if key not in ctx.spec.card]
        for key in missing:
            ctx.problem(f"{ctx.spec.path.name} card", f"the {kind.name} kind needs [card.{key}]; add it (see the README's release kinds)")
        return Done(f"[card] has what the {kind.name} kind needs" if not missing else f"{len(missing)} [card] key(s) missing")
