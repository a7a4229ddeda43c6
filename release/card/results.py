"""The card's evaluation results: the lm-evaluation-harness table of a transformers card, and the
`model-index` front matter of every card, both computed from the same parsed evidence.

`model-index` (huggingface_hub's `ModelCardData(eval_results=…)`) holds one result per lm-eval row and
the results of the kind's own card part (release/card/speculative/__init__.py: one per bench cell of the current
series and metric), each with a link to its evidence file at the version's tag. `verify`
loads the staged card's front matter with huggingface_hub's own parser and compares every result with
what `model_index()` recomputes from the staged files (`model_index_problems`). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from release.card.evidence import Evidence, EvidenceMap
from release.card.text import DASH, Table, cell, link
from release.errors import Problem
from release.evidence.lm_eval import LmEvalRow

HUB = "https://huggingface.co"


def evidence_url(repo_id: str, version: str, path_in_repo: str) -> str:
    """The evidence file on the Hub at the version's tag (a tag never moves, so neither does the link)."""
    return f"{HUB}/{repo_id}/blob/{quote(version, safe='')}/{quote(path_in_repo, safe='/._-~')}"


def model_name(repo_id: str) -> str:
    return repo_id.rsplit("/", 1)[-1]


# --- the lm-eval table ---------------------------------------------------------------------------------


def _metric(row: LmEvalRow) -> str:
    return row.metric if row.filter == "none" else f"{row.metric} ({row.filter})"


def _score(value: float) -> str:
    return f"{value:.4f}"  # lm-eval's own table prints 4 decimals; model-index holds the exact value


def lm_eval_table(evidence: Evidence) -> Table | None:
    """One row per lm-eval number: task, metric, value ± stderr, n-shot, harness version (and "limit N" when the
    run scored a subset), and the results file when there are several."""
    rows = []
    several = len(evidence.evals) > 1
    for path, run in sorted(evidence.evals.items()):
        version = cell(run.lm_eval_version) if run.lm_eval_version else DASH
        subset = f" (limit {run.limit:g})" if run.limit is not None else ""
        for row in run.rows:
            rows.append(
                (
                    cell(row.task),
                    cell(_metric(row)),
                    _score(row.value),
                    _score(row.stderr) if row.stderr is not None else DASH,
                    str(row.n_shot) if row.n_shot is not None else DASH,
                    version + subset,
                    *((link(path, path),) if several else ()),
                )
            )
    if not rows:
        return None
    header = ("Task", "Metric", "Value", "± Stderr", "n-shot", "lm-eval", *(("Results file",) if several else ()))
    return Table("lm-eval results", header, tuple(rows), frozenset({2, 3, 4}), key_columns=2)


# --- model-index ---------------------------------------------------------------------------------------


def model_index(emap: EvidenceMap, evidence: Evidence, repo_id: str, version: str) -> list[Any]:
    """The card's eval results (huggingface_hub EvalResult): lm-eval rows, then the kind's (the current bench cells)."""
    from release.evidence.model_index import lm_eval_index  # imports huggingface_hub: lazily

    results: list[Any] = lm_eval_index(
        sorted(evidence.evals.items()), lambda path: evidence_url(repo_id, version, path)
    )
    return results + emap.kind.card_part.model_index(emap, evidence, repo_id, version)


def _key(result: Any) -> tuple[Any, ...]:
    return (result.task_name, result.dataset_type, result.dataset_config, result.dataset_split, result.metric_type)


def _shown(key: tuple[Any, ...]) -> str:
    return " / ".join(str(part) for part in key if part is not None)


# every other field of an EvalResult, compared too: a card's model-index says nothing the evidence does not
FIELDS = (
    "metric_value",
    "metric_name",
    "metric_args",
    "metric_config",
    "dataset_name",
    "dataset_revision",
    "dataset_args",
    "task_type",
    "source_url",
    "source_name",
    "verified",
    "verify_token",
)


def model_index_problems(front_matter: dict[str, Any], expected: list[Any], label: str) -> list[Problem]:
    """Each result of the card's `model-index` that differs from the evidence, named by task / dataset / metric."""
    from huggingface_hub import ModelCardData

    if "model-index" not in front_matter:
        return (
            [Problem(label, f"front matter has no model-index; the evidence gives {len(expected)} result(s)")]
            if expected
            else []
        )
    try:
        shown = ModelCardData(**front_matter).eval_results or []
    except Exception as exc:  # noqa: BLE001 - huggingface_hub's verdict, whatever it raises
        return [Problem(label, f"front matter model-index is not readable by huggingface_hub: {exc}")]
    want = {_key(r): r for r in expected}
    got = {_key(r): r for r in shown}
    problems = []
    for key, result in want.items():
        if key not in got:
            problems.append(
                Problem(
                    label,
                    f"front matter model-index: {_shown(key)} is missing; the evidence gives {result.metric_value!r}",
                )
            )
            continue
        for name in FIELDS:
            a, b = getattr(got[key], name), getattr(result, name)
            if a != b:
                problems.append(
                    Problem(
                        label, f"front matter model-index: {_shown(key)}: {name} is {a!r}, the evidence gives {b!r}"
                    )
                )
    for key in got.keys() - want.keys():
        problems.append(
            Problem(
                label, f"front matter model-index: {_shown(key)} is not in the evidence; remove it or rebuild the card"
            )
        )
    return problems


# --- .eval_results/ (the Hub's evaluation results) ------------------------------------------------------


def eval_results(emap: EvidenceMap, evidence: Evidence, repo_id: str, version: str) -> tuple[list[Any], list[str]]:
    """The entries of .eval_results/lm-eval.yaml the spec's [[card.eval_results]] map, from the lm-eval evidence;
    and a line for each mapping the evidence cannot give, or the Hub's schema refuses."""
    from release.evidence.eval_results import entries, schema_problems

    found, problems = entries(
        sorted(evidence.evals.items()), emap.eval_results, lambda path: evidence_url(repo_id, version, path)
    )
    return found, problems + (schema_problems(found) if found else [])


def eval_results_text(
    emap: EvidenceMap, evidence: Evidence, repo_id: str, version: str, label: str
) -> tuple[str | None, list[Problem]]:
    """The file's text (None: the spec maps no task), or the problems that stop it being written."""
    from release.evidence.eval_results import to_yaml

    if not emap.eval_results:
        return None, []
    found, problems = eval_results(emap, evidence, repo_id, version)
    if problems:
        return None, [Problem(label, p) for p in problems]
    return to_yaml(found), []


def eval_results_problems(
    text: str | None, emap: EvidenceMap | None, evidence: Evidence, repo_id: str, version: str, label: str
) -> list[Problem]:
    """`verify`: the staged file (None: the release has none) against what the evidence gives now, entry by
    entry, and against the Hub's schema."""
    from release.evidence.eval_results import differences, schema_problems
    from release.util.yamlio import load

    mapped = emap is not None and bool(emap.eval_results)
    if text is None:
        return (
            [Problem(label, "is missing; release.json's card maps lm-eval tasks to Hub benchmarks")] if mapped else []
        )
    if emap is None or not mapped:
        return [Problem(label, "is not derived from anything release.json records; rebuild the release")]
    try:
        shown = load(text)
    except Exception as exc:  # noqa: BLE001 - any YAML error is the file's problem, reported on one line
        return [Problem(label, f"is not readable YAML: {str(exc).splitlines()[0]}")]
    expected, problems = eval_results(emap, evidence, repo_id, version)
    return [Problem(label, p) for p in problems + schema_problems(shown) + differences(shown, expected)]
