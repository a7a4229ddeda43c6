"""The Hub's evaluation results (`.eval_results/*.yaml`, hub-docs docs/hub/eval-results.md) from lm-eval evidence.

Interface (pure; the card steps write the file, `verify` re-derives it):

    Benchmark.from_spec(entry)            one `[[card.eval_results]]` of the spec: an lm-eval task (and metric)
                                          → a Hub benchmark's dataset.id + task_id (and revision)
    entries(runs, benchmarks, source_url) -> (entries, problems)   one entry per mapped task and results file
    to_yaml(entries) / schema_problems(entries)                    the file's text; what the Hub's schema refuses
    proposals(runs) -> list[dict]         init's proposal: each task whose dataset_path is a Hub id

Each entry: `dataset` {id, task_id[, revision]}, `value` (the evidence's number, exact), `date` (the run's, UTC),
`source` {url: the results file at the version's tag, name: the harness and its version}, `notes` (the metric,
the n-shot, and the limit when the run scored a subset). Only a dataset registered as a Benchmark on the Hub
shows a result; which are is not knowable offline, so hf-release writes what the spec maps and nothing more.
The schema (release/schemas/eval-results.schema.json) is transcribed from the Hub's eval_results.yaml, vendored
beside it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from release.evidence.lm_eval import LmEvalRow, LmEvalRun

SCHEMA = "eval-results.schema.json"
HARNESS = "lm-evaluation-harness"


@dataclass(frozen=True)
class Benchmark:
    """One `[[card.eval_results]]`: the lm-eval `task` (its `metric`, "acc" or "exact_match,strict-match"; None:
    the task's first) reported as the Hub benchmark `dataset`'s `task_id`."""

    task: str
    dataset: str
    task_id: str
    metric: str | None = None
    revision: str | None = None

    @classmethod
    def from_spec(cls, entry: Mapping[str, Any]) -> Benchmark:
        return cls(
            task=str(entry["task"]),
            dataset=str(entry["dataset"]),
            task_id=str(entry["task_id"]),
            metric=str(entry["metric"]) if entry.get("metric") is not None else None,
            revision=str(entry["revision"]) if entry.get("revision") is not None else None,
        )

    def as_dict(self) -> dict[str, str]:
        return {
            key: value
            for key, value in (
                ("task", self.task),
                ("dataset", self.dataset),
                ("task_id", self.task_id),
                ("metric", self.metric),
                ("revision", self.revision),
            )
            if value is not None
        }

    def picks(self, row: LmEvalRow) -> bool:
        if row.task != self.task:
            return False
        if self.metric is None:
            return True
        metric, _, filter_ = self.metric.partition(",")
        return row.metric == metric and row.filter == (filter_ or "none")


def metric_key(row: LmEvalRow) -> str:
    return row.metric if row.filter == "none" else f"{row.metric},{row.filter}"


def run_date(run: LmEvalRun) -> str | None:
    """The run's date as ISO-8601 UTC (lm-eval records a POSIX timestamp), to the second."""
    if run.date is None:
        return None
    moment = datetime.datetime.fromtimestamp(run.date, tz=datetime.UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def notes(row: LmEvalRow, run: LmEvalRun) -> str:
    """How the number was made, in words: metric, n-shot, and the subset when the run used --limit."""
    parts = [f"lm-eval {metric_key(row)}"]
    if row.n_shot is not None:
        parts.append(f"{row.n_shot}-shot")
    if run.limit is not None:
        parts.append(f"limit {run.limit:g} (a subset of the task)")
    return ", ".join(parts)


def entries(
    runs: Sequence[tuple[str, LmEvalRun]], benchmarks: Sequence[Benchmark], source_url: Callable[[str], str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The file's entries, in the spec's order then the results files' (path, run); and a line for each mapping
    whose task no results file holds (or whose metric the task does not have)."""
    found: list[dict[str, Any]] = []
    problems: list[str] = []
    for benchmark in benchmarks:
        hits = 0
        for path, run in runs:
            row = next((r for r in run.rows if benchmark.picks(r)), None)
            if row is None:
                continue
            hits += 1
            dataset = {"id": benchmark.dataset, "task_id": benchmark.task_id}
            if benchmark.revision:
                dataset["revision"] = benchmark.revision
            entry: dict[str, Any] = {"dataset": dataset, "value": row.value}
            date = run_date(run)
            if date:
                entry["date"] = date
            entry["source"] = {
                "url": source_url(path),
                "name": " ".join(filter(None, (HARNESS, run.lm_eval_version))),
            }
            entry["notes"] = notes(row, run)
            found.append(entry)
        if not hits:
            tasks = sorted({f"{r.task} ({metric_key(r)})" for _, run in runs for r in run.rows})
            what = f"task {benchmark.task!r}" + (f" with metric {benchmark.metric!r}" if benchmark.metric else "")
            problems.append(
                f"[[card.eval_results]] maps {what}, which no lm-eval results file of the release holds "
                f"(they hold: {', '.join(tasks) or 'none'})"
            )
    return found, problems


def to_yaml(found: list[dict[str, Any]]) -> str:
    """The file's text: a YAML list, keys in the order the Hub's documentation writes them."""
    import yaml

    header = (
        "# Evaluation results for the Hub (docs/hub/eval-results.md), written by hf-release from the lm-eval\n"
        "# results files of this release; `hf-release verify` re-derives every value from them.\n"
    )
    return header + yaml.safe_dump(found, sort_keys=False, allow_unicode=True, width=1000)


def schema_problems(data: Any) -> list[str]:
    """What the Hub's eval-results schema refuses in `data` (a parsed file), one line each."""
    import jsonschema

    from release.util.schemas import load_schema

    validator = jsonschema.Draft202012Validator(load_schema(SCHEMA))
    return [
        f"{'/'.join(map(str, error.absolute_path)) or 'the file'}: {error.message}"
        for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    ]


def differences(shown: Any, expected: list[dict[str, Any]]) -> list[str]:
    """Each entry of the staged file that differs from what the evidence gives, one line each."""
    if not isinstance(shown, list):
        return [f"is not a list of results; the evidence gives {len(expected)}"]
    problems = []
    for n in range(max(len(shown), len(expected))):
        if n >= len(expected):
            problems.append(f"entry {n + 1} is not in the evidence; rebuild the release")
            continue
        if n >= len(shown):
            problems.append(f"entry {n + 1} ({_named(expected[n])}) is missing; the evidence gives it")
            continue
        got, want = shown[n], expected[n]
        for key in sorted(set(got) | set(want) if isinstance(got, dict) else set(want)):
            a, b = got.get(key) if isinstance(got, dict) else None, want.get(key)
            if a != b:
                problems.append(f"entry {n + 1} ({_named(want)}): {key} is {a!r}, the evidence gives {b!r}")
    return problems


def _named(entry: dict[str, Any]) -> str:
    dataset = entry.get("dataset") or {}
    return f"{dataset.get('id')} / {dataset.get('task_id')}"


def proposals(runs: Sequence[LmEvalRun]) -> list[dict[str, str]]:
    """init's proposal, one per task (its first metric) whose `dataset_path` is a Hub dataset id: the dataset
    and, as the task id, the dataset's configuration or else the task's name. To be confirmed by the author:
    only a dataset registered as a Benchmark on the Hub, with that task id in its eval.yaml, shows a result."""
    from release.evidence.model_index import LOCAL_BUILDERS

    seen: dict[str, dict[str, str]] = {}
    for run in runs:
        for row in run.rows:
            path = row.dataset_path
            if row.task in seen or row.is_group or path is None or path in LOCAL_BUILDERS or path.count("/") != 1:
                continue
            if path.startswith(("/", ".", "~")):
                continue
            seen[row.task] = {
                "task": row.task,
                "metric": metric_key(row),
                "dataset": path,
                "task_id": row.dataset_name or row.task,
            }
    return list(seen.values())
