"""Check llm-inference-bench result JSONs: the cell schema, finite metrics, consistent request counts; a field the
tool left at its default where it measured nothing is read as absent (None), not as 0."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.checks.common import read_json, run_per_file, schema_problems
from release.errors import CheckFailed, Problem
from release.evidence.bench_metrics import unrecorded
from release.pipeline import Context, StepResult


@dataclass(frozen=True)
class BenchRun:
    """One bench JSON: its metadata and its 30-second cells, a field the tool left at its default when it did
    not measure (evidence/bench_metrics.py `unrecorded`) read as None."""

    metadata: dict[str, Any]
    cells: tuple[dict[str, Any], ...]
    unrecorded: dict[str, int] = field(default_factory=dict)  # field → how many cells do not record it

    def not_recorded(self, name: str) -> str | None:
        """Why `name` is None in some cells (for a card line or a problem), or None when every cell records it."""
        count = self.unrecorded.get(name)
        if not count:
            return None
        cells = "every cell" if count == len(self.cells) else f"{count} of {len(self.cells)} cells"
        return f"{name} is the tool's default 0.0 in {cells}, not a measurement"


def load_bench(path: Path, label: str) -> BenchRun:
    data = read_json(path, label)  # rejects NaN and Infinity
    problems = schema_problems("bench.schema.json", data, label)
    if not problems:
        for index, cell in enumerate(data["results"]):
            if cell["completed_request_count"] > cell["request_count"]:
                problems.append(
                    Problem(
                        label,
                        f"results[{index}]: completed_request_count exceeds request_count; publish the bench's own "
                        "output, not an edited copy",
                    )
                )
    if problems:
        raise CheckFailed(problems)
    cells, counts = [], Counter[str]()
    for cell in data["results"]:
        absent = unrecorded(cell)
        counts.update(absent)
        cells.append({**cell, **dict.fromkeys(absent)})
    return BenchRun(data["metadata"], tuple(cells), dict(counts))


class CheckBench:
    name = "check-bench"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "bench", load_bench)
