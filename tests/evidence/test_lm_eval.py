"""lm-evaluation-harness results → typed rows → huggingface_hub EvalResults → a card that ModelCard reads back.

The fixture is written exactly in lm-eval 0.4.x's results_<timestamp>.json layout (json.dumps, indent 2);
its numbers are illustrative, not a measurement.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from release.evidence.lm_eval import LmEvalError, load_results, parse_results
from release.evidence.model_index import bench_results, card_data, lm_eval_results
from tests.helpers import EXAMPLE

FIXTURE = Path(__file__).parent / "fixtures" / "results_2026-11-12T14-06-41.218734.json"
SOURCE = "https://huggingface.co/spark-lab/Tiny-Llama-1B/blob/v1/results_2026-11-12T14-06-41.218734.json"


def fixture() -> dict:
    return json.loads(FIXTURE.read_text())


def test_rows_from_the_results_file() -> None:
    run = load_results(FIXTURE)
    assert (run.lm_eval_version, run.model, run.limit) == ("0.4.9.1", "hf", None)
    assert run.model_args == "pretrained=spark-lab/Tiny-Llama-1B,dtype=bfloat16"
    rows = {(r.task, r.metric, r.filter): r for r in run.rows}
    assert len(rows) == len(run.rows) == 9  # arc 2, gsm8k 2 filters, hellaswag 2, mmlu group + 2 subtasks
    arc = rows["arc_challenge", "acc_norm", "none"]
    assert (arc.value, arc.stderr, arc.n_shot, arc.version) == (0.3703071672354949, 0.014111298751674948, 25, "1.0")
    assert (arc.dataset_path, arc.dataset_name, arc.split, arc.higher_is_better, arc.n_samples) == (
        "allenai/ai2_arc",
        "ARC-Challenge",
        "test",
        True,
        1172,
    )
    flexible = rows["gsm8k", "exact_match", "flexible-extract"]
    assert flexible.stderr is None and flexible.n_shot == 5  # lm-eval wrote "N/A"
    assert rows["hellaswag", "acc", "none"].split == "validation"  # no test split: lm-eval scores validation
    mmlu = rows["mmlu", "acc", "none"]
    assert mmlu.is_group and mmlu.n_shot is None and not rows["mmlu_anatomy", "acc", "none"].is_group
    assert rows["mmlu_anatomy", "acc", "none"].alias == "- anatomy"


def test_a_subset_run_says_so() -> None:
    data = fixture()
    data["config"]["limit"] = 100
    assert parse_results(data).limit == 100.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("results"), "has no `results` object; expected lm-evaluation-harness's results_*.json"),
        (lambda d: d.update(results={}), "`results` is empty; the run scored no task"),
        (lambda d: d["results"].update(hellaswag=[0.5]), "results.hellaswag is list; expected an object of metrics"),
        (
            lambda d: d["results"]["hellaswag"].update({"acc,none": float("nan")}),
            "results.hellaswag: 'acc,none' is nan; expected a finite number",
        ),
        (lambda d: d["n-shot"].update(gsm8k="5"), "n-shot of gsm8k is '5'; expected a non-negative integer"),
        (lambda d: d.update(configs=[]), "`configs` is list; expected an object"),
    ],
)
def test_bad_results_are_one_line(change, message: str) -> None:  # type: ignore[no-untyped-def]
    data = fixture()
    change(data)
    with pytest.raises(LmEvalError) as exc:
        parse_results(data)
    assert str(exc.value) == message


def test_unreadable_files(tmp_path: Path) -> None:
    path = tmp_path / "results_x.json"
    path.write_text('{"results": ')
    with pytest.raises(LmEvalError, match=r"^is not valid JSON: Expecting value at line 1 column 13$"):
        load_results(path)
    path.write_bytes(b"\xff")
    with pytest.raises(LmEvalError, match="^is not UTF-8 text$"):
        load_results(path)


def test_model_index_round_trips_through_huggingface_hub() -> None:
    run = load_results(FIXTURE)
    results = lm_eval_results(run, source_url=SOURCE)
    data = card_data("Tiny-Llama-1B", results, license="apache-2.0")
    card = ModelCard(f"---\n{data.to_yaml()}\n---\n# Tiny-Llama-1B\n")
    loaded = ModelCard(str(card)).data  # parsed back by huggingface_hub's own ModelCard
    assert loaded.model_name == "Tiny-Llama-1B"
    back = {(e.task_name, e.metric_type): e for e in loaded.eval_results}
    assert len(back) == len(run.rows)
    for row in run.rows:
        metric = row.metric if row.filter == "none" else f"{row.metric},{row.filter}"
        result = back[row.task, metric]
        assert result.metric_value == row.value  # exactly: the YAML holds the evidence's number
        args = {k: v for k, v in (("num_fewshot", row.n_shot), ("stderr", row.stderr)) if v is not None}
        assert result.metric_args == (args or None)
        assert (result.source_url, result.source_name) == (SOURCE, "lm-evaluation-harness 0.4.9.1")
    arc = back["arc_challenge", "acc_norm"]
    assert (arc.dataset_type, arc.dataset_config, arc.dataset_split, arc.metric_name) == (
        "allenai/ai2_arc",
        "ARC-Challenge",
        "test",
        "acc_norm (25-shot)",
    )


def test_bench_cells_to_model_index() -> None:
    cells = json.loads((EXAMPLE / "glm53-v5-champion.json").read_text())["results"]
    source = "https://huggingface.co/spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark/blob/v5/glm53-v5-champion.json"
    results = bench_results(cells, source_url=source)
    assert len(results) == 3 * len(cells)
    loaded = ModelCard(f"---\n{card_data('GLM-5.3-Flash-DFlash2-TP4-Spark', results).to_yaml()}\n---\n").data
    values = {(e.dataset_config, e.metric_type): e.metric_value for e in loaded.eval_results}
    for cell in cells:
        key = f"concurrency-{cell['concurrency']}-context-{cell['context_tokens']}"
        assert values[key, "tokens_per_second"] == cell["aggregate_tps"]
        assert values[key, "acceptance_length"] == cell["server_spec_accept_length"]
        assert values[key, "ttft_mean_seconds"] == cell["ttft_avg"]


def test_a_missing_bench_value_is_left_out_not_invented() -> None:
    cell = {"concurrency": 1, "context_tokens": 0, "aggregate_tps": 51.09, "server_spec_accept_length": None}
    [result] = bench_results([cell], source_url="https://example.org/x.json")
    assert (result.metric_type, result.metric_value) == ("tokens_per_second", 51.09)
