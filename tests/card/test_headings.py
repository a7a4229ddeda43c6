"""The reading order: what it is → how to use it → results (the honest note with them) → details → verify →
license, lineage, citation; every kind's default template follows it (release/card/headings.py READING_ORDER)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from release.card.headings import BY_KEY, CHANGES, LINEAGE, OPS_NOTES, ORIGINAL_WORK, PROSE_SECTIONS, out_of_order
from release.card.render import TEMPLATES
from release.kinds import kind_named, names

KEYED = {**BY_KEY, "changes": CHANGES, "ops_notes": OPS_NOTES, "original_work": ORIGINAL_WORK}


def h2(markdown: str) -> list[str]:
    """The card's H2 headings as a reader meets them (markdown-it-py with GFM tables, front matter dropped)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown.split("\n---\n", 1)[1])
    return [tokens[n + 1].content for n, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]


def test_the_example_card_reads_in_the_reading_order(built: Path) -> None:
    assert h2((built / "README.md").read_text("utf-8")) == [
        "Summary",
        "How to use this version",
        "Honest note",
        "Benchmark",
        "Serving config",
        "Ledger",
        "Ops notes",
        "Files",
        "Verify this release",
        "License",
        LINEAGE,
        ORIGINAL_WORK,
        "Citation",
    ]


def template_order(path: Path) -> list[str]:
    found = re.search(r"\{% set order = (\[.*?\]) %\}", path.read_text(), re.DOTALL)
    assert found, f"{path.name} sets no `order`"
    return re.findall(r'"(\w+)"', found.group(1))


@pytest.mark.parametrize("kind", names())
def test_every_kinds_template_keeps_the_reading_order(kind: str) -> None:
    """Each kind's own order (data in its template) names only known sections, each once, in the reading order."""
    order = template_order(TEMPLATES / kind_named(kind).template)
    assert len(order) == len(set(order)) and set(order) <= set(KEYED), order
    assert out_of_order(KEYED[key] for key in order) == []
    assert {"summary", "usage", "files", "verify", "license", *PROSE_SECTIONS} <= set(order)


def test_out_of_order_names_what_comes_too_early() -> None:
    assert out_of_order(["Summary", "Files", "How to use this version", "Changes since v4", "License"]) == [
        "'Files' before 'How to use this version'"
    ]
    assert out_of_order(["Summary", "How to use this version", "Honest note", "Changes since v4", "License"]) == []
