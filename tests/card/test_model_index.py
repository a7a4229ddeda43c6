"""The card's `model-index` and lm-eval table: huggingface_hub's own ModelCard loads the built card's front
matter back with every value equal to the evidence file's, and verify names a value edited in the staged card."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import ModelCard

from release.builder import build
from release.errors import VerifyFailed
from release.spec import load_spec
from release.verify import verify_staged
from tests.evidence.test_lm_eval import FIXTURE
from tests.helpers import TOKEN, edit, local_hub
from tests.kinds.helpers import REPO, make_release

RESULTS = "results_2026-11-30.json"  # the name the transformers fixture's spec ships its eval file under


@pytest.fixture(scope="module")
def transformers_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 3-shard transformers release with the lm-eval fixture as its results file, built once. Read only."""
    root = tmp_path_factory.mktemp("transformers")
    spec = make_release(root / "artifacts" / "v1")
    shutil.copyfile(FIXTURE, spec.parent / RESULTS)
    return build(load_spec(spec), root / "dist").dist


def eval_results(card: Path) -> dict[tuple[str, str | None, str], object]:
    """(task, dataset config, metric type) → EvalResult, as huggingface_hub parses the card."""
    loaded = ModelCard.load(card).data
    return {(e.task_name, e.dataset_config, e.metric_type): e for e in loaded.eval_results}


def test_lm_eval_results_load_back_equal_to_the_results_file(transformers_dist: Path) -> None:
    raw = json.loads(FIXTURE.read_text())
    results = eval_results(transformers_dist / "README.md")
    expected = {}
    for task, metrics in raw["results"].items():
        for key, value in metrics.items():
            metric, _, filter_ = key.partition(",")
            if metric == "alias" or "_stderr" in metric:
                continue
            stderr = metrics.get(f"{metric}_stderr,{filter_}")
            expected[task, metric if filter_ == "none" else key] = (
                value,
                stderr if isinstance(stderr, float) else None,
            )
    assert {(task, metric) for task, _, metric in results} == set(expected)
    source = f"https://huggingface.co/{REPO}/blob/v1/{RESULTS}"
    for (task, _, metric), result in results.items():
        value, stderr = expected[task, metric]
        assert result.metric_value == value and (result.metric_args or {}).get("stderr") == stderr
        assert result.source_url == source and result.source_name == f"lm-evaluation-harness {raw['lm_eval_version']}"
        shots = raw["n-shot"].get(task)
        assert (result.metric_args or {}).get("num_fewshot") == shots
    arc = results["arc_challenge", "ARC-Challenge", "acc_norm"]
    assert (arc.dataset_type, arc.dataset_split, arc.metric_name) == ("allenai/ai2_arc", "test", "acc_norm (25-shot)")


def test_the_transformers_card_shows_the_lm_eval_table(transformers_dist: Path) -> None:
    card = (transformers_dist / "README.md").read_text()
    evaluation = card.split("## Evaluation", 1)[1].split("\n## ", 1)[0]
    assert "| Task | Metric | Value | ± Stderr | n-shot | lm-eval |" in evaluation
    assert "| hellaswag | acc_norm | 0.6017 | 0.0049 | 10 | 0.4.9.1 |" in evaluation
    assert "| gsm8k | exact_match (flexible-extract) | 0.1440 | — | 5 | 0.4.9.1 |" in evaluation  # stderr "N/A"
    verify_staged(transformers_dist)


def test_the_drafter_card_holds_every_bench_cell_of_the_current_version(built: Path) -> None:
    run = json.loads((built / "glm53-v5-champion.json").read_text())
    results = eval_results(built / "README.md")
    source = "https://huggingface.co/spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark/blob/v5/glm53-v5-champion.json"
    assert len(results) == 3 * len(run["results"])  # v4's cells and the rechecks are not this model's results
    for cell in run["results"]:
        config = f"concurrency-{cell['concurrency']}-context-{cell['context_tokens']}"
        for metric, field in (
            ("tokens_per_second", "aggregate_tps"),
            ("acceptance_length", "server_spec_accept_length"),
            ("ttft_mean_seconds", "ttft_avg"),
        ):
            result = results["Speculative decoding serving", config, metric]
            assert result.metric_value == cell[field] and result.source_url == source
            assert result.source_name == f"llm-inference-bench {run['metadata']['version']}"


@pytest.mark.parametrize(
    ("which", "old", "new", "named"),
    [
        (
            "transformers",
            "value: 0.6016729735112527",
            "value: 0.7",
            "hellaswag / Rowan/hellaswag / validation / acc_norm: metric_value is 0.7, the evidence gives "
            "0.6016729735112527",
        ),
        (
            "drafter",
            "value: 51.09\n",
            "value: 52.09\n",
            "Speculative decoding serving / llm-inference-bench / concurrency-1-context-0 / tokens_per_second: "
            "metric_value is 52.09, the evidence gives 51.09",
        ),
        (
            "drafter",
            "blob/v5/glm53-v5-champion.json",
            "blob/v4/glm53-v5-champion.json",
            "source_url is 'https://huggingface.co/",
        ),
    ],
)
def test_an_edited_model_index_value_fails_verify_naming_it(
    which: str, old: str, new: str, named: str, transformers_dist: Path, built: Path, tmp_path: Path
) -> None:
    dist = tmp_path / "dist"
    shutil.copytree(transformers_dist if which == "transformers" else built, dist)
    edit(dist / "README.md", old, new)
    with pytest.raises(VerifyFailed) as caught:
        verify_staged(dist)
    shown = [str(p) for p in caught.value.problems]
    assert any(line.startswith("README.md: front matter model-index: ") and named in line for line in shown), shown


def test_the_acceptance_length_is_named_by_the_convention_the_spec_declares(built: Path) -> None:
    from dataclasses import replace

    from release.card.evidence import EvidenceMap
    from release.card.results import model_index
    from release.card.staged import load_staged_evidence
    from release.kinds import kind_named
    from release.staged.manifest import Manifest

    manifest = Manifest.load(built / "release.json")
    evidence, problems = load_staged_evidence(built, manifest)
    emap = EvidenceMap.from_record(manifest.card, kind_named)
    assert not problems and emap is not None
    names = {
        r.metric_name
        for r in model_index(emap, evidence, manifest.repo_id, "v5")
        if r.metric_type == "acceptance_length"
    }
    assert names == {"Acceptance length (accepted ÷ drafts, no +1)"}
    steps = replace(emap, acceptance_length="tokens-per-step")
    names = {
        r.metric_name
        for r in model_index(steps, evidence, manifest.repo_id, "v5")
        if r.metric_type == "acceptance_length"
    }
    assert names == {"Acceptance length (1 + accepted ÷ drafts)"}


def test_the_local_hub_accepts_the_model_index_and_serves_it_back(transformers_dist: Path, tmp_path: Path) -> None:
    """The local Hub validates front matter as the Hub does (release/localhub/metadata.py); the card read back
    from it at the tag holds the same eval results."""
    from huggingface_hub import hf_hub_download

    from release.publish.push import PushOptions, push

    dist = tmp_path / "v1"
    shutil.copytree(transformers_dist, dist)
    with local_hub(tmp_path / "hub") as hub:
        assert push(dist, PushOptions(endpoint=hub.url, token=TOKEN)).verified
        card = hf_hub_download(
            REPO, "README.md", revision="v1", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "cache"
        )
    assert eval_results(Path(card)) == eval_results(transformers_dist / "README.md")


# --- lm-eval results of any shape: files the harness wrote itself (tests/evidence/fixtures/lm_eval/README.md) ------

HARNESS = Path(__file__).parents[1] / "evidence" / "fixtures" / "lm_eval"
FULL = next((HARNESS / "full").glob("results_*.json"))  # local tasks, a group, a generative task with a filter
LIMIT = next((HARNESS / "limit").glob("results_*.json"))  # the same with --limit 3 --num_fewshot 1


def card_results(evals: dict) -> list:
    """The card's model-index results for these results files, as build and verify compute them."""
    from release.card.evidence import Evidence, EvidenceMap
    from release.card.results import model_index
    from release.kinds import kind_named

    return model_index(EvidenceMap(current=None, kind=kind_named("transformers")), Evidence(evals=evals), REPO, "v1")


@pytest.mark.parametrize("files", [[FULL], [LIMIT], [FULL, LIMIT]], ids=["full", "limit", "both"])
def test_every_task_is_its_own_model_index_entry_and_lints_clean(files: list[Path]) -> None:
    import yaml

    from release.card.results import model_index_problems
    from release.evidence.lm_eval import load_results
    from release.evidence.model_index import card_data

    results = card_results({path.name: load_results(path) for path in files})
    front = yaml.safe_load(card_data("tiny", results).to_yaml())
    assert model_index_problems(front, results, "README.md") == []
    entries = front["model-index"][0]["results"]
    tasks = [e["task"]["name"] for e in entries]
    assert sorted(tasks) == sorted(
        ["tiny_piqa", "tiny_boolq", "tiny_arith", "tiny_suite"] * len(files)
    )  # one entry each
    by_task = {(e["task"]["name"], e["dataset"].get("config")): e for e in entries}
    piqa = by_task["tiny_piqa", FULL.name if len(files) > 1 else None]
    assert (
        piqa["dataset"]["type"] == "tiny_piqa"
        and piqa["dataset"]["name"] == "tiny_piqa (local json data: tiny_piqa.jsonl)"
    )
    assert piqa["dataset"]["args"] == {"dataset_path": "json", "data_files": {"test": ["tiny_piqa.jsonl"]}}
    assert [m["type"] for m in piqa["metrics"]] == ["acc", "acc_norm"]
    arith = next(e for e in entries if e["task"]["name"] == "tiny_arith")
    assert [m["type"] for m in arith["metrics"]] == ["exact_match,remove_whitespace"]  # the filter stays in the name
    suite = next(e for e in entries if e["task"]["name"] == "tiny_suite")
    assert suite["dataset"]["type"] == "tiny_suite" and [m["type"] for m in suite["metrics"]] == [
        "acc"
    ]  # the group's own


def test_a_release_with_the_harness_own_results_builds_and_verifies(tmp_path: Path) -> None:
    spec = make_release(tmp_path / "artifacts" / "v1")
    shutil.copyfile(FULL, spec.parent / RESULTS)
    shutil.copyfile(LIMIT, spec.parent / "results_limit.json")
    spec.write_text(spec.read_text() + '\n[[files]]\nsource = "results_limit.json"\nrole = "eval"\n')
    dist = build(load_spec(spec), tmp_path / "dist").dist  # the card lints clean against its own model-index
    card = (dist / "README.md").read_text()
    assert "| tiny_arith | exact_match (remove_whitespace) | 0.0000 | 0.0000 | 1 | 0.4.13 (limit 3) |" in card
    verify_staged(dist)


def test_two_tasks_on_one_hub_dataset_keep_their_own_entries() -> None:
    import copy

    import yaml

    from release.card.results import model_index_problems
    from release.evidence.lm_eval import parse_results
    from release.evidence.model_index import card_data

    data = json.loads(FIXTURE.read_text())
    # a second prompt over the same Hub dataset, config and split, as a custom task YAML writes it (`include:` arc)
    data["results"]["arc_challenge_chat"] = copy.deepcopy(data["results"]["arc_challenge"]) | {
        "alias": "arc_challenge_chat",
        "acc,none": 0.5,
    }
    data["configs"]["arc_challenge_chat"] = data["configs"]["arc_challenge"] | {"task": "arc_challenge_chat"}
    results = card_results({"r.json": parse_results(data)})
    front = yaml.safe_load(card_data("tiny", results).to_yaml())
    assert model_index_problems(front, results, "README.md") == []
    types = {e["task"]["name"]: e["dataset"] for e in front["model-index"][0]["results"]}
    assert (
        types["arc_challenge_chat"]["type"] == "arc_challenge_chat"
        and types["arc_challenge"]["type"] == "arc_challenge"
    )
    assert types["arc_challenge"]["args"] == {"dataset_path": "allenai/ai2_arc", "dataset_name": "ARC-Challenge"}
    assert types["hellaswag"]["type"] == "Rowan/hellaswag"  # a Hub dataset one task uses keeps its Hub id
