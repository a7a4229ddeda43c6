"""Every file a release writes, by name and role: the one place they are spelled.

Build writes the card (and its chart) as entries of release.json, then release.json and SHA256SUMS beside
them; `sign` adds model.sig. The Hub adds .gitattributes to every repo. Beside the staged folder, build
keeps its stat record and works in a temporary folder until the release is complete.
"""

from __future__ import annotations

from typing import Any

CARD_NAME = "README.md"
DEFAULT_CHART = "assets/bench.png"
DEFAULT_NOTE_CHART = "assets/honest-note.png"  # the honest note's served evidence, drawn
MANIFEST_NAME = "release.json"
SUMS_NAME = "SHA256SUMS"
SIGNATURE_NAME = "model.sig"
GITATTRIBUTES_NAME = ".gitattributes"

# Roles of the files the build generates; release.json lists them beside the artifacts' own roles.
CARD_ROLE = "card"
CHART_ROLE = "chart"
# The Hub's evaluation results (hub-docs docs/hub/eval-results.md), derived from the lm-eval evidence
EVAL_RESULTS_NAME = ".eval_results/lm-eval.yaml"
EVAL_RESULTS_ROLE = "eval-results"
GENERATED_ROLES = (CARD_ROLE, CHART_ROLE, EVAL_RESULTS_ROLE)  # what build writes itself: no node hashes it before
# Roles of the bookkeeping files: pushed with the release, listed in no release.json (one holds the list).
MANIFEST_ROLE = "manifest"
SUMS_ROLE = "sums"
SIGNATURE_ROLE = "signature"

BOOKKEEPING: dict[str, str] = {MANIFEST_NAME: MANIFEST_ROLE, SUMS_NAME: SUMS_ROLE, SIGNATURE_NAME: SIGNATURE_ROLE}
# What every Hub repo holds that is no file of a release.
HUB_FILES = frozenset({GITATTRIBUTES_NAME})
# Written by hf-release (or the Hub) at the repo root: a spec may place nothing there, in any letter case
# (the Hub's repos are checked out on case-insensitive filesystems too).
GENERATED = (CARD_NAME, *BOOKKEEPING, GITATTRIBUTES_NAME)
RESERVED = frozenset(name.casefold() for name in GENERATED)


def bookkeeping(*roles: str) -> tuple[str, ...]:
    """The bookkeeping file names with these roles (all of them when none is given), in a fixed order."""
    return tuple(name for name, role in BOOKKEEPING.items() if not roles or role in roles)


def chart_paths(card: dict[str, Any]) -> tuple[str, ...]:
    """Where the card's pictures land in the repo: `[card.bench] chart` and `[card.honest_note.served] chart`,
    else their defaults."""
    bench = card.get("bench")
    note = card.get("honest_note")
    served = note.get("served") if isinstance(note, dict) else None
    return (
        str(bench.get("chart", DEFAULT_CHART)) if isinstance(bench, dict) else DEFAULT_CHART,
        str(served.get("chart", DEFAULT_NOTE_CHART)) if isinstance(served, dict) else DEFAULT_NOTE_CHART,
    )


# Beside the staged versions (DIST/), shared by all of them: the digest record
# (release/staged/digest_record.py) and its lock.
DIGEST_RECORD_NAME = ".hf-release-digests"
DIGEST_LOCK_NAME = ".hf-release-digests.lock"


def stat_record_name(version: str) -> str:
    """The stat record build leaves beside DIST/VERSION (local state, not part of the release)."""
    return f".{version}.stat.json"


def lock_name(version: str) -> str:
    """The lock a build or push of this version holds, beside DIST/VERSION (release/staged/locks.py)."""
    return f".{version}.lock"


def staging_prefix(version: str) -> str:
    """The temporary folder a build of this version writes in, beside DIST/VERSION."""
    return f".{version}.building-"


def replaced_prefix(version: str) -> str:
    """Where an earlier staging of this version is moved aside before it is deleted."""
    return f".{version}.old-"
