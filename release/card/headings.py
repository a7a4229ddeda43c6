"""The card's section headings (H2), and the reading order every kind's template follows."""

from __future__ import annotations

from collections.abc import Iterable

# Which ones a card must have depends on its kind and its evidence
# (facts.sections()); the list is recorded in release.json and lint requires each, present and non-empty.
SUMMARY = "Summary"
MODEL = "Model"
INTENDED_USE = "Intended use"
EVALUATION = "Evaluation"
HONEST_NOTE = "Honest note"
LIMITATIONS = "Limitations"
SERVING = "Serving config"
BENCHMARK = "Benchmark"
TRAINING_DATA = "Training data"
LEDGER = "Ledger"
OPS_NOTES = "Ops notes"
FILES = "Files"
CHANGES = "Changes"  # "Changes since v4" when build compared with a previous version (card/changes.py)
USAGE = "How to use this version"
VERIFY = "Verify this release"
LICENSE = "License"
LINEAGE = "Lineage & credit"
ORIGINAL_WORK = "Original work"
CITATION = "Citation"
ALWAYS = (SUMMARY, FILES, USAGE, VERIFY, LICENSE)  # every card has these
# by the key a template names them with: `sections.summary`, …
BY_KEY = {
    "summary": SUMMARY,
    "model": MODEL,
    "intended_use": INTENDED_USE,
    "honest_note": HONEST_NOTE,
    "serving": SERVING,
    "benchmark": BENCHMARK,
    "evaluation": EVALUATION,
    "limitations": LIMITATIONS,
    "training_data": TRAINING_DATA,
    "ledger": LEDGER,
    "files": FILES,
    "usage": USAGE,
    "verify": VERIFY,
    "lineage": LINEAGE,
    "license": LICENSE,
    "citation": CITATION,
}
# The [card] keys of the author's own sections (one Markdown string each): left out of the card until written.
PROSE_SECTIONS = {"intended_use": INTENDED_USE, "limitations": LIMITATIONS, "training_data": TRAINING_DATA}

# What a reader on the Hub looks for, in turn: what it is, how to use it, whether to trust it (the results,
# the honest note with them), the details behind them, how to check the download, and whose work it is.
# Every kind's template (templates/) keeps its own order inside these groups; a card shows a group's
# sections only after every section of the groups before it.
READING_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("summary", (SUMMARY, MODEL, INTENDED_USE)),
    ("how to use", (USAGE,)),
    ("results", (HONEST_NOTE, EVALUATION, BENCHMARK, LIMITATIONS)),
    ("details", (SERVING, TRAINING_DATA, LEDGER, OPS_NOTES, FILES, CHANGES)),
    ("verify", (VERIFY,)),
    ("license, lineage, citation", (LICENSE, LINEAGE, ORIGINAL_WORK, CITATION)),
)
ORDER = tuple(name for _, names in READING_ORDER for name in names)


def _named(heading: str) -> str:
    return CHANGES if heading.startswith(CHANGES + " since ") else heading


def group_of(heading: str) -> str | None:
    """The reading-order group of an H2 heading ("Changes since v4" is the changes section); None: not a known one."""
    return next((group for group, names in READING_ORDER if _named(heading) in names), None)


def out_of_order(headings: Iterable[str]) -> list[str]:
    """Each known heading that comes after a heading of a later group, as "X before Y" (empty: in reading order)."""
    rank = {group: n for n, (group, _) in enumerate(READING_ORDER)}
    seen: list[tuple[int, str]] = []
    found = []
    for heading in headings:
        group = group_of(heading)
        if group is None:
            continue
        later = next((h for r, h in seen if r > rank[group]), None)
        if later is not None:
            found.append(f"'{later}' before '{heading}'")
        seen.append((rank[group], heading))
    return found


def in_reading_order(headings: Iterable[str]) -> tuple[str, ...]:
    """The headings sorted by their place in the reading order (unknown ones keep their place at the end)."""
    place = {name: n for n, name in enumerate(ORDER)}
    return tuple(sorted(headings, key=lambda h: place.get(_named(h), len(place))))
