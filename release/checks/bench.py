"""Check llm-inference-bench result JSONs: the cell schema, finite metrics, consistent request counts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CheckFailed, Problem
from ..pipeline import Context, StepResult
from .common import read_json, run_per_file, schema_problems


@dataclass(frozen=True)
class BenchRun:
    """One bench JSON: its metadata and its 30-second cells."""

    metadata: dict[str, Any]
    cells: tuple[dict[str, Any], ...]


def load_bench(path: Path, label: str) -> BenchRun:
    data = read_json(path, label)  # rejects NaN and Infinity
    problems = schema_problems("bench.schema.json", data, label)
    if not problems:
        for index, cell in enumerate(data["results"]):
            if cell["completed_request_count"] > cell["request_count"]:
                problems.append(
                    Problem(label, f"results[{index}]: completed_request_count exceeds request_count; publish the bench's own output, not an edited copy")
                )
    if problems:
        raise CheckFailed(problems)
    return BenchRun(data["metadata"], tuple(data["results"]))


class CheckBench:
    name = "check-bench"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "bench", load_bench)
