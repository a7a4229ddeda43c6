"""The card part of a kind whose files are its own (a PEFT adapter, GGUF files): its facts table, front
matter and usage come from what its `files_check` read (Evidence.kind_files), nothing typed in the spec.

A kind gives `facts_rows(read) → [(fact, value)]` and `metadata(read) → {front matter key: value}`; this
builds the `CardPart` (release/kinds/kind.py) the generic card asks: no bench, no chart, no model-index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from release.errors import Problem
from release.kinds.kind import CardPart


@dataclass(frozen=True)
class OwnFacts:
    """KindFacts (release/kinds/kind.py) of a kind whose facts are its files': the model table and front matter."""

    read: Any  # what the kind's files_check read, None when it could not
    model_table: Any = None  # card/text.py Table: the card's model facts (its MODEL section; lint checks it there)
    metadata: dict[str, Any] = field(default_factory=dict)  # front matter defaults, under [card.metadata]
    served_verdict: None = None
    chart_series: dict[str, Any] = field(default_factory=dict)
    note_series: dict[str, Any] = field(default_factory=dict)

    def expected(self) -> dict[str, Any]:
        return {}  # the model table is the generic card's (card/facts.py Facts.model), checked in its section

    def variables(self, card: dict[str, Any], emap: Any) -> dict[str, Any]:
        return {}


def card_part(
    facts_rows: Callable[[Any], list[tuple[str, str]]], metadata: Callable[[Any], dict[str, Any]]
) -> CardPart:
    def derive(emap: Any, evidence: Any, problems: list[Problem]) -> OwnFacts:
        from release.card.text import Table

        read = evidence.kind_files
        if read is None:
            return OwnFacts(None)
        rows = tuple(facts_rows(read))
        return OwnFacts(read, Table("model", ("Fact", "Value"), rows, key_columns=1) if rows else None, metadata(read))

    return CardPart(
        derive=derive, model_index=lambda emap, evidence, repo_id, version: [], readable=lambda record: True
    )


def short(count: int) -> str:
    """1,234,567 → '1,234,567 (1.23 M)', as the transformers card writes parameter counts."""
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if count >= size:
            return f"{count:,} ({count / size:.2f} {unit})"
    return f"{count:,}"
