"""Check results.tsv, the autoresearch experiment ledger: header, column types, statuses, one baseline."""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import CheckFailed, Problem
from ..pipeline import Context, StepResult
from .common import run_per_file

STATUSES = ("keep", "discard", "crash")
TEXT_COLUMNS = ("commit", "status", "description")
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
BASELINE = re.compile(r"\bbaseline\b", re.IGNORECASE)


@dataclass(frozen=True)
class LedgerRow:
    line: int
    commit: str
    metrics: dict[str, float]
    status: str
    description: str

    @property
    def is_baseline(self) -> bool:
        return BASELINE.search(self.description) is not None


@dataclass(frozen=True)
class Ledger:
    metric_columns: tuple[str, ...]
    rows: tuple[LedgerRow, ...]

    @property
    def baseline(self) -> LedgerRow:
        return next(r for r in self.rows if r.is_baseline)

    @property
    def trials(self) -> tuple[LedgerRow, ...]:
        return tuple(r for r in self.rows if not r.is_baseline)


def load_ledger(path: Path, label: str) -> Ledger:
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
    metrics = tuple(h for h in header if h not in TEXT_COLUMNS)
    if missing or not metrics:
        need = f"missing column(s) {', '.join(missing)}" if missing else "no metric column"
        raise CheckFailed(Problem(label, f"line 1: header {header} has {need}; expected commit, metric columns, status, description"))

    problems: list[Problem] = []
    rows = []
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
        values = {}
        for column in metrics:
            try:
                values[column] = float(row[column])
                if not math.isfinite(values[column]):
                    raise ValueError
            except ValueError:
                problems.append(Problem(where, f"{column} {row[column]!r} is not a finite number"))
        rows.append(LedgerRow(number, row["commit"], values, row["status"], row["description"]))

    baselines = [r for r in rows if r.is_baseline]
    if len(baselines) != 1:
        problems.append(
            Problem(label, f"has {len(baselines)} baseline rows; exactly one row's description must say 'baseline'")
        )
    elif baselines[0] is not rows[0] or baselines[0].status != "keep":
        problems.append(Problem(f"{label}:{baselines[0].line}", "the baseline must be the first row, with status 'keep'"))
    if problems:
        raise CheckFailed(problems)
    return Ledger(metrics, tuple(rows))


class CheckLedger:
    name = "check-ledger"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "ledger", "ledger", load_ledger)
