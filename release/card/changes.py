"""The card's "Changes since vN" section, from the comparison build recorded in release.json.

Build compares the release with the previous version (release/history/compare.py) and records the result in
release.json; the card prints it and `verify` re-derives it from that record, like every other table.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from release.card.text import DASH, Line, Table, cell, code_cell, number
from release.history.compare import evidence_words

# A first release has no "Changes" section (nothing changed: there was nothing before); the files section says
# this line instead (render.py `files.first_release`).
FIRST_RELEASE = Line("First release", "nothing to compare with")


def changes_heading(changes: dict[str, Any]) -> str | None:
    since = changes.get("since")
    return f"Changes since {str(since).removeprefix('hub:').removeprefix('spec:')}" if since else None


def changes_facts(changes: dict[str, Any] | None) -> tuple[str | None, Table | None, Line | None]:
    """(heading, table, line) of the section; all None when the release records no comparison; a first release
    has no heading (no section) and the line FIRST_RELEASE."""
    if changes is None:
        return None, None, None
    heading = changes_heading(changes)
    if heading is None and changes.get("notes"):  # an earlier version exists but could not be read: said so
        return None, None, Line("Not compared", "; ".join(cell(n) for n in changes["notes"]) + _earlier(changes))
    if heading is None:
        return None, None, FIRST_RELEASE
    rows: list[tuple[str, ...]] = []
    for f in changes.get("files", []):
        before = f"{f['old_size']:,} B {code_cell(f['old_sha256'])}" if "old_size" in f else DASH
        after = f"{f['new_size']:,} B {code_cell(f['new_sha256'])}" if "new_size" in f else DASH
        rows.append((f"file {f['change']}", code_cell(f["path"]), before, after))
    for c in changes.get("config", []):
        rows.append(("config key", code_cell(f"{c['file']}: {c['key']}"), code_cell(c["old"]), code_cell(c["new"])))
    for m in changes.get("metrics", []):
        rows.append(("metric", cell(m["metric"]), number(m["old"]), f"{number(m['new'])} ({m['delta']:+g})"))
    for row in changes.get("ledger_rows_added", []):
        rows.append(("ledger row added", cell(row.split("\t")[0]), DASH, cell(" ".join(row.split("\t")[1:]))))
    notes = "; ".join(cell(n) for n in changes.get("notes", []))
    earlier = _evidence_said(changes)
    if (
        earlier
    ):  # evidence this version ships but did not measure: said beside what changed (release/history/provenance.py)
        notes = "; ".join(filter(None, (f"evidence measured on an earlier version: {earlier}", notes)))
    # Only what the versions have is counted: a model with no metrics or ledger is not told "0 metrics".
    compared = changes.get("compared")
    kinds = [
        (key, noun)
        for key, noun, what in (
            ("files", "file", None),
            ("config", "config key", "config"),
            ("metrics", "metric", "metrics"),
            ("ledger_rows_added", "ledger row", "ledger"),
        )
        if what is None or compared is None or what in compared
    ]
    if not rows:
        nouns = [noun for _, noun in kinds]
        listed = f"{', '.join(nouns[:-1])} or {nouns[-1]}" if len(nouns) > 1 else nouns[0]
        return (
            heading,
            None,
            Line("Unchanged", f"no {listed} changed" + (f" ({notes})" if notes else "")),
        )
    table = Table("changes", ("Change", "What", "Before", "After"), tuple(rows), key_columns=2)
    counts = ", ".join(_count(len(changes.get(key, [])), noun) for key, noun in kinds)
    return (
        heading,
        table,
        Line("Compared with", f"{cell(str(changes['since']))}: {counts}" + (f"; {notes}" if notes else "")),
    )


def _evidence_said(changes: dict[str, Any]) -> str:
    """Each evidence row's words, once, after all the files they are said of."""
    said: dict[str, list[str]] = {}
    for e in changes.get("evidence", []):
        said.setdefault(evidence_words(e), []).append(code_cell(e["path"]))
    return "; ".join(f"{', '.join(paths)} {cell(words)}" for words, paths in said.items())


def _earlier(changes: dict[str, Any]) -> str:
    said = _evidence_said(changes)
    return f"; evidence: {said}" if said else ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
