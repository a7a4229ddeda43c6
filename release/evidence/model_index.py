"""Evaluation results for the card's `model-index` metadata, built with huggingface_hub's own types.

Interface (pure; the caller puts the results into the card):

    lm_eval_results(run, source_url=…) -> list[EvalResult]     from lm-evaluation-harness rows
    lm_eval_index(runs, source_url) -> list[EvalResult]        every results file of a card, each task its own entry
    bench_results(cells, source_url=…) -> list[EvalResult]     from llm-inference-bench cells
    card_data(model_name, results, **metadata) -> ModelCardData  `ModelCardData(eval_results=…)`; its
                                                  to_yaml() holds `model-index`, ModelCard parses it back

`source_url` should point at the evidence file at the version's tag, e.g.
https://huggingface.co/ORG/REPO/blob/v5/results_2026-11-12T14-06-41.json, so every value on the Hub links
to the file it came from. model-index has no field for a standard error or the n-shot: they go into the
metric's `args` ({"num_fewshot": 5, "stderr": 0.0045}) and its pretty name ("acc (5-shot)").

What the Hub documents (hub-docs modelcard.md and docs/hub/eval-results, read for this module):
`model-index` is the card-metadata format huggingface_hub reads and writes, now called the older one;
the newer `.eval_results/*.yaml` files require `dataset.id` to be a Hub dataset registered as a Benchmark
(allow-listed), and only those feed the model page's benchmark links and the leaderboards. Neither a
serving benchmark nor an arbitrary lm-eval task is such a dataset, so these builders emit `model-index`
only; the README must say what the Hub page shows from it after checking the live Hub.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from huggingface_hub import EvalResult, ModelCardData

from release.evidence.bench_metrics import MODEL_INDEX_METRICS
from release.evidence.lm_eval import LmEvalRow, LmEvalRun

TASK_TYPE = "text-generation"
BENCH_DATASET = "llm-inference-bench"


def lm_eval_results(run: LmEvalRun, *, source_url: str, source_name: str | None = None) -> list[EvalResult]:
    """One results file's model-index results (`lm_eval_index` with that file alone)."""
    return lm_eval_index([("", run)], lambda _: source_url, source_name)


def lm_eval_index(
    runs: Sequence[tuple[str, LmEvalRun]], source_url: Callable[[str], str], source_name: str | None = None
) -> list[EvalResult]:
    """One EvalResult per lm-eval row of every results file (path, run): task, dataset (Hub id, config, split),
    metric, value; n-shot and stderr in the metric's args. A filter other than "none" is part of the metric
    type ("exact_match,strict-match").

    model-index entries are keyed by task: huggingface_hub groups results by dataset (type, config, split,
    revision), never by task name, so a dataset that does not tell a task's entry apart — a local one
    (`dataset_path: json`, every custom task's), a group's (none), or a Hub dataset two tasks share — is named
    after the task (`type` = the task) and identified in `args` (dataset_path, dataset_name, data file names);
    a task in several results files has the file as its `config`."""
    users: dict[tuple[str | None, ...], set[tuple[str, str]]] = {}  # a Hub dataset → the (file, task)s it scored
    files_of: dict[str, set[str]] = {}
    for path, run in runs:
        for row in run.rows:
            files_of.setdefault(row.task, set()).add(path)
            if not _local(row.dataset_path):
                users.setdefault((row.dataset_path, row.dataset_name, row.split), set()).add((path, row.task))
    results = []
    for path, run in runs:
        name = source_name or " ".join(filter(None, ("lm-evaluation-harness", run.lm_eval_version)))
        for row in run.rows:
            args = {
                key: value for key, value in (("num_fewshot", row.n_shot), ("stderr", row.stderr)) if value is not None
            }
            metric = row.metric if row.filter == "none" else f"{row.metric},{row.filter}"
            shots = f" ({row.n_shot}-shot)" if row.n_shot is not None else ""
            alias = (row.alias or "").lstrip("- ") or row.task  # lm-eval indents a subtask's alias " - name"
            own = not _local(row.dataset_path) and len(users[row.dataset_path, row.dataset_name, row.split]) == 1
            results.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name=row.task,
                    dataset_type=row.dataset_path if own and row.dataset_path is not None else row.task,
                    dataset_name=alias if own or row.dataset_path is None else f"{alias} ({_described(row)})",
                    dataset_config=row.dataset_name if own else path if len(files_of[row.task]) > 1 else None,
                    dataset_split=row.split,
                    dataset_args=None if own or row.dataset_path is None else _dataset_args(row),
                    metric_type=metric,
                    metric_value=row.value,
                    metric_name=f"{metric}{shots}",
                    metric_args=args or None,
                    source_name=name,
                    source_url=source_url(path),
                )
            )
    return results


# `datasets`' packaged builders: a task naming one of these loads local (or URL) files, not a Hub dataset
LOCAL_BUILDERS = frozenset(
    {
        "json",
        "csv",
        "parquet",
        "text",
        "arrow",
        "pandas",
        "sql",
        "xml",
        "webdataset",
        "imagefolder",
        "audiofolder",
        "videofolder",
    }
)


def _local(dataset_path: str | None) -> bool:
    """A group's row (no dataset) or a task on local data rather than a Hub dataset id."""
    return dataset_path is None or dataset_path in LOCAL_BUILDERS or dataset_path.startswith(("/", "./", "../", "~"))


def _dataset_args(row: LmEvalRow) -> dict[str, Any]:
    args: dict[str, Any] = {"dataset_path": row.dataset_path}
    if row.dataset_name:
        args["dataset_name"] = row.dataset_name
    if row.data_files:
        args["data_files"] = {split or "default": list(files) for split, files in row.data_files}
    return args


def _described(row: LmEvalRow) -> str:
    if row.dataset_path in LOCAL_BUILDERS or row.data_files:
        files = ", ".join(f for _, names in row.data_files for f in names)
        return f"local {row.dataset_path} data" + (f": {files}" if files else "")
    return " / ".join(filter(None, (row.dataset_path, row.dataset_name)))


def bench_results(
    cells: Iterable[Mapping[str, Any]],
    *,
    source_url: str,
    source_name: str = "llm-inference-bench",
    metrics: Sequence[tuple[str, str, str]] = MODEL_INDEX_METRICS,
) -> list[EvalResult]:
    """One EvalResult per cell and metric; the cell (concurrency × context) is the dataset configuration.
    A metric the cell does not hold (null or absent) is left out, never invented."""
    results = []
    for cell in cells:
        concurrency, context = cell["concurrency"], cell["context_tokens"]
        for field, metric, pretty in metrics:
            value = cell.get(field)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                continue
            results.append(
                EvalResult(
                    task_type=TASK_TYPE,
                    task_name="Speculative decoding serving",
                    dataset_type=BENCH_DATASET,
                    dataset_name=f"{BENCH_DATASET}: concurrency {concurrency}, context {context} tokens",
                    dataset_config=f"concurrency-{concurrency}-context-{context}",
                    metric_type=metric,
                    metric_value=value,
                    metric_name=pretty,
                    source_name=source_name,
                    source_url=source_url,
                )
            )
    return results


def card_data(model_name: str, results: list[EvalResult], **metadata: Any) -> ModelCardData:
    """The card's metadata with `model-index` from `results` (huggingface_hub validates them)."""
    return ModelCardData(model_name=model_name, eval_results=results, **metadata)
