"""What the spec's own words claim, checked against what the card computes from the evidence.

The honest note's served verdict is computed (by the kind's card part, release/card/speculative/rechecks.py:
Welch's t-test and TOST). The spec may declare the verdict its prose relies on
(`[card.honest_note.served] claim`), and the note's own words (label, subject, text) may not assert
another one ("tied", "equivalent", "significant", "inconclusive") nor say "statistically": the card
prints the verdict next to the test that backs it. A mismatch is a problem, not a warning: a card
whose words contradict its figures must not be published.
"""

from __future__ import annotations

import re
from typing import Any

from release.errors import Problem
from release.evidence.stats import Comparison

VERDICT_WORDS = (
    ("tied", re.compile(r"\b(?:tied|ties|tie|equivalent|equivalence)\b", re.IGNORECASE)),
    ("different", re.compile(r"\bsignificant(?:ly)?\b", re.IGNORECASE)),
    ("inconclusive", re.compile(r"\binconclusive\b", re.IGNORECASE)),
)
STATISTICALLY = re.compile(r"\bstatistical(?:ly)?\b", re.IGNORECASE)
PROSE_KEYS = ("label", "subject", "text")


def claim_problems(card: dict[str, Any], verdict: Comparison | None, spec_name: str) -> list[Problem]:
    """Every place the honest note's words or declared claim differ from the computed verdict."""
    note = card.get("honest_note")
    if note is None:
        return []
    where = f"{spec_name} card.honest_note"
    problems = []
    claims: list[tuple[str, str, str]] = []  # (verdict claimed, key, how)
    if "claim" in note.get("served", {}):
        claims.append((note["served"]["claim"], "served.claim", "claims"))
    for key in PROSE_KEYS:
        for name, pattern in VERDICT_WORDS:
            hit = pattern.search(note[key])
            if hit:
                claims.append((name, key, f"says {hit.group(0)!r}, which claims"))
        if STATISTICALLY.search(note[key]):
            problems.append(
                Problem(
                    f"{where}.{key}",
                    "says 'statistically'; the card states the verdict itself, next to the "
                    "test that backs it — remove the word from the prose",
                )
            )
    computed = verdict.verdict if verdict else None
    for claimed, key, how in claims:
        if claimed != computed:
            gives = f"{computed!r} ({verdict.sentence()})" if verdict else "no verdict (no test could be run)"
            problems.append(
                Problem(
                    f"{where}.{key}",
                    f"{how} {claimed!r}; the served evidence gives {gives} — "
                    "reword the note to what the figures support",
                )
            )
    return problems
