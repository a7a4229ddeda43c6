"""Read lm-evaluation-harness results (`lm_eval --output_path …` → `results_<timestamp>.json`) into typed rows.

Interface (pure; no Context, no card):

    load_results(path) -> LmEvalRun         size-checked read of a results_*.json
    parse_results(data) -> LmEvalRun        the same from already-parsed JSON
    LmEvalRun.rows     one LmEvalRow per (task, metric, filter) number: value, stderr (None when lm-eval
                       wrote "N/A" or nothing), n-shot, task version, dataset (a local one's data file
                       names too), split, higher_is_better
    LmEvalRun.lm_eval_version / model / model_args / limit (not None → the run used a subset; say so)
    LmEvalRun.results  the `results` object as lm-eval wrote it (every number, as release.json records them)
    LmEvalError        one line: what is wrong and where (e.g. "results.hellaswag: 'acc,none' is NaN")

The format, as lm-eval writes it: `results` maps each task (and group) to {"alias": …, "<metric>,<filter>":
value, "<metric>_stderr,<filter>": value or "N/A"}; `configs` per task (dataset_path, dataset_name,
test_split / validation_split, num_fewshot, metadata.version); `versions`, `n-shot`, `higher_is_better`,
`n-samples` ({original, effective}), `group_subtasks`; `config` (model, model_args, batch_size, limit, seeds);
`lm_eval_version` (newer versions), `git_hash`, `date`, `transformers_version`, `model_name`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.util.jsonio import TooLarge, read_json

MAX_BYTES = 32 * 1024 * 1024  # results files carry task configs (prompts); 32 MB is far above any real one
NOT_METRICS = frozenset({"alias", "name", "sample_len", "samples"})


class LmEvalError(ValueError):
    """An lm-eval results file that cannot be read as one: one line."""


@dataclass(frozen=True)
class LmEvalRow:
    task: str  # the task (or group) name, as lm-eval keys `results`
    metric: str  # e.g. "acc", "acc_norm", "exact_match"
    filter: str  # e.g. "none", "strict-match"
    value: float
    stderr: float | None  # None when lm-eval wrote "N/A" or no stderr
    n_shot: int | None
    alias: str | None = None
    version: str | None = None  # the task's version (`versions`)
    dataset_path: str | None = None  # Hub dataset id from the task config (e.g. "Rowan/hellaswag")
    dataset_name: str | None = None  # its configuration (e.g. "ARC-Challenge")
    data_files: tuple[tuple[str, tuple[str, ...]], ...] = ()  # a local dataset's files per split, file names only
    split: str | None = None  # the split lm-eval scored: test_split, else validation_split
    higher_is_better: bool | None = None
    n_samples: int | None = None  # `n-samples.effective`: documents scored after any limit
    is_group: bool = False  # an aggregate over subtasks (`group_subtasks`)


@dataclass(frozen=True)
class LmEvalRun:
    rows: tuple[LmEvalRow, ...]
    lm_eval_version: str | None
    model: str | None  # config.model, e.g. "hf", "vllm"
    model_args: str | None  # config.model_args as written (a string, or a dict dumped as JSON)
    limit: float | None  # config.limit: None is the full task; anything else a subset
    git_hash: str | None = None
    date: float | None = None
    results: Mapping[str, Any] = field(
        default_factory=dict, repr=False
    )  # `results` as written: what release.json's metrics read


def load_results(path: Path) -> LmEvalRun:
    """Read one `results_*.json`; an oversized file is refused before it is read."""
    try:
        data = read_json(path, max_bytes=MAX_BYTES)  # lm-eval may write NaN; parse_results names it
    except TooLarge as exc:
        raise LmEvalError(
            f"is {exc.size:,} bytes; an lm-eval results file above {MAX_BYTES:,} bytes is not read"
        ) from None
    except UnicodeDecodeError:
        raise LmEvalError("is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise LmEvalError(f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise LmEvalError("nests arrays or objects too deeply to read") from None
    return parse_results(data)


def parse_results(data: Any) -> LmEvalRun:
    """Typed rows from lm-eval's results JSON (already parsed)."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise LmEvalError("has no `results` object; expected lm-evaluation-harness's results_*.json")
    if not data["results"]:
        raise LmEvalError("`results` is empty; the run scored no task")
    configs = _mapping(data, "configs")
    n_shot = _mapping(data, "n-shot")
    versions = _mapping(data, "versions")
    better = _mapping(data, "higher_is_better")
    samples = _mapping(data, "n-samples")
    groups = {g for g, subtasks in _mapping(data, "group_subtasks").items() if subtasks}
    rows = []
    for task, entry in data["results"].items():
        if not isinstance(entry, dict):
            raise LmEvalError(f"results.{task} is {type(entry).__name__}; expected an object of metrics")
        task_config = configs.get(task)
        config: dict[str, Any] = task_config if isinstance(task_config, dict) else {}
        for key, value in entry.items():
            metric, _, filter_ = key.partition(",")
            if metric in NOT_METRICS or metric.endswith("_stderr") or isinstance(value, bool):
                continue
            if not isinstance(value, (int, float)):
                continue  # lm-eval writes " " or "N/A" for a group row without an aggregate
            if not math.isfinite(value):
                raise LmEvalError(f"results.{task}: {key!r} is {value}; expected a finite number")
            rows.append(
                LmEvalRow(
                    task=task,
                    metric=metric,
                    filter=filter_ or "none",
                    value=float(value),
                    stderr=_stderr(entry.get(f"{metric}_stderr,{filter_}" if filter_ else f"{metric}_stderr")),
                    n_shot=_n_shot(task, n_shot.get(task, config.get("num_fewshot"))),
                    alias=entry["alias"].strip() if isinstance(entry.get("alias"), str) else None,
                    version=None if versions.get(task) is None else str(versions[task]),
                    dataset_path=_text(config.get("dataset_path")),
                    dataset_name=_text(config.get("dataset_name")),
                    data_files=_data_files(config.get("dataset_kwargs")),
                    split=_text(config.get("test_split")) or _text(config.get("validation_split")),
                    higher_is_better=_bool(better.get(task, {}), metric),
                    n_samples=_effective(samples.get(task)),
                    is_group=task in groups,
                )
            )
    run_config = _mapping(data, "config")
    model_args = run_config.get("model_args")
    limit = run_config.get("limit")
    return LmEvalRun(
        rows=tuple(rows),
        lm_eval_version=_text(data.get("lm_eval_version")),
        model=_text(run_config.get("model")),
        model_args=model_args
        if isinstance(model_args, str) or model_args is None
        else json.dumps(model_args, sort_keys=True),
        limit=float(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) else None,
        git_hash=_text(data.get("git_hash")),
        date=float(data["date"]) if isinstance(data.get("date"), (int, float)) else None,
        results=data["results"],
    )


def _mapping(data: dict[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LmEvalError(f"`{key}` is {type(value).__name__}; expected an object")
    return value


def _stderr(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None  # "N/A" (lm-eval's word for no stderr), NaN, or absent


def _n_shot(task: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LmEvalError(f"n-shot of {task} is {value!r}; expected a non-negative integer")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _bool(values: Any, metric: str) -> bool | None:
    value = values.get(metric) if isinstance(values, dict) else None
    return value if isinstance(value, bool) else None


def _data_files(kwargs: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`dataset_kwargs.data_files` (a path, a list, or split → path(s)) as (split, file names): what names a local
    dataset, without the folders of the machine it ran on."""
    files = kwargs.get("data_files") if isinstance(kwargs, dict) else None
    by_split = files if isinstance(files, dict) else {"": files} if files else {}
    out = []
    for split, paths in by_split.items():
        names = [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []
        out.append(
            (str(split), tuple(str(p).replace("\\", "/").rsplit("/", 1)[-1] for p in names if isinstance(p, str)))
        )
    return tuple(sorted(out))


def _effective(value: Any) -> int | None:
    effective = value.get("effective") if isinstance(value, dict) else None
    return effective if isinstance(effective, int) and not isinstance(effective, bool) else None
