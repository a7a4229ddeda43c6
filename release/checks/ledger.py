"""Check results.tsv, the autoresearch experiment ledger: header, column types, statuses, the baseline.

The baseline is the row the spec names (by commit) or else the first `keep` row, as autoresearch
writes it — never a row found by a word in its description ("revert warmup to baseline schedule" is
a trial). Column types come from the data: a column is a number column when every value in it reads
as a number, else a text column (e.g. `val_pass` holding true / N/A, or a metric with N/A on crash rows);
a number among numbers that does not read as one ('3.38x') is a problem, not a reason to make the column
text. The spec may declare a column's type ("number" or "text"); then every value must fit it.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from release.checks.common import run_per_file
from release.errors import CheckFailed, Problem
from release.pipeline import Context, StepResult

STATUSES = ("keep", "discard", "crash")
TEXT_COLUMNS = ("commit", "status", "description")
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
ColumnType = Literal["number", "text"]
COLUMN_TYPES = ("number", "text")
# Words a column of numbers may hold beside them without being a typo: it is then a text column.
NOT_MEASURED = frozenset({"", "n/a", "na", "-", "—", "none", "null", "true", "false", "yes", "no", "pass", "fail"})


@dataclass(frozen=True)
class LedgerRow:
    line: int
    commit: str
    metrics: dict[str, float]  # the number columns
    status: str
    description: str
    texts: dict[str, str] = field(default_factory=dict)  # the other text columns (e.g. val_pass)


@dataclass(frozen=True)
class Ledger:
    metric_columns: tuple[str, ...]  # the number columns, in header order
    rows: tuple[LedgerRow, ...]
    baseline_line: int  # the file line of the baseline row
    text_columns: tuple[str, ...] = ()  # columns other than commit/status/description holding text
    columns: tuple[str, ...] = ()  # the number and text columns together, in header order

    @property
    def baseline(self) -> LedgerRow:
        return next(r for r in self.rows if r.line == self.baseline_line)

    @property
    def trials(self) -> tuple[LedgerRow, ...]:
        return tuple(r for r in self.rows if r.line != self.baseline_line)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def load_ledger(
    path: Path, label: str, *, baseline: str | None = None, column_types: Mapping[str, ColumnType] | None = None
) -> Ledger:
    """Read and check a ledger. `baseline` is the commit of the baseline row (default: the first `keep`
    row); `column_types` declares columns as "number" or "text" (default: inferred from the values)."""
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        raise CheckFailed(Problem(label, "is not UTF-8 text")) from None
    try:
        lines = list(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    except csv.Error as exc:
        raise CheckFailed(Problem(label, f"cannot be read as tab-separated values: {exc}")) from None
    if not lines or not any(lines[0]):
        raise CheckFailed(Problem(label, "is empty; it needs a header row and a baseline row"))
    header = [h.strip() for h in lines[0]]
    missing = [c for c in TEXT_COLUMNS if c not in header]
    others = tuple(h for h in header if h not in TEXT_COLUMNS)
    if missing or not others:
        need = f"missing column(s) {', '.join(missing)}" if missing else "no metric column"
        raise CheckFailed(
            Problem(label, f"line 1: header {header} has {need}; expected commit, metric columns, status, description")
        )
    declared = dict(column_types or {})
    problems = [
        Problem(
            label,
            f"the spec declares column {name!r} as {kind!r}; expected a header column and one of "
            f"{', '.join(COLUMN_TYPES)}",
        )
        for name, kind in declared.items()
        if name not in others or kind not in COLUMN_TYPES
    ]

    records: list[tuple[int, dict[str, str]]] = []
    for number, cells in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        where = f"{label}:{number}"
        if len(cells) != len(header):
            problems.append(Problem(where, f"has {len(cells)} tab-separated columns, the header has {len(header)}"))
            continue
        row = dict(zip(header, (c.strip() for c in cells), strict=True))
        if not COMMIT.match(row["commit"]):
            problems.append(Problem(where, f"commit {row['commit']!r} is not a short git hash (7–40 hex digits)"))
        if row["status"] not in STATUSES:
            problems.append(Problem(where, f"status {row['status']!r} is not one of {', '.join(STATUSES)}"))
        records.append((number, row))

    # A column is a number column when declared so, or when undeclared and every value reads as a number.
    numeric = tuple(
        c
        for c in others
        if declared.get(c) == "number" or (c not in declared and all(_number(r[c]) is not None for _, r in records))
    )
    texts = tuple(c for c in others if c not in numeric)
    for column in (c for c in texts if c not in declared):
        if any(_number(r[column]) is not None for _, r in records):  # numbers with a stray word: likely a typo
            problems.extend(
                Problem(
                    f"{label}:{number}",
                    f"{column} {row[column]!r} is not a number, unlike the column's other values; "
                    "fix it, or declare the column as text in the spec",
                )
                for number, row in records
                if _number(row[column]) is None and row[column].lower() not in NOT_MEASURED
            )
    rows = []
    for number, row in records:
        values = {}
        for column in numeric:
            value = _number(row[column])
            if value is None or not math.isfinite(value):
                problems.append(Problem(f"{label}:{number}", f"{column} {row[column]!r} is not a finite number"))
            else:
                values[column] = value
        extra = {c: row[c] for c in texts}
        rows.append(LedgerRow(number, row["commit"], values, row["status"], row["description"], extra))

    base = _baseline(rows, label, baseline, problems)
    if problems or base is None:
        raise CheckFailed(problems)
    return Ledger(numeric, tuple(rows), base.line, texts, others)


def _baseline(rows: list[LedgerRow], label: str, commit: str | None, problems: list[Problem]) -> LedgerRow | None:
    if commit is not None:
        named = [r for r in rows if r.commit == commit]
        if len(named) != 1:
            problems.append(
                Problem(
                    label, f"has {len(named)} rows with the spec's baseline commit {commit!r}; expected exactly one"
                )
            )
            return None
        return named[0]
    kept = next((r for r in rows if r.status == "keep"), None)
    if kept is None:
        problems.append(
            Problem(
                label, "has no row with status 'keep'; the first kept row is the baseline (or name one in the spec)"
            )
        )
    return kept


class CheckLedger:
    name = "check-ledger"

    def run(self, ctx: Context) -> StepResult:
        reading = ctx.spec.card.get("ledger", {})  # [card.ledger]: the baseline commit, declared column types

        def load(path: Path, label: str) -> Ledger:
            return load_ledger(path, label, baseline=reading.get("baseline"), column_types=reading.get("column_types"))

        return run_per_file(ctx, "ledger", load)
