"""The Hub's evaluation results: `[[card.eval_results]]` maps lm-eval tasks (the harness's own results files,
tests/evidence/fixtures/lm_eval/) to Hub benchmarks; build writes .eval_results/lm-eval.yaml into the release,
hashed like every file, valid against the Hub's schema; verify re-derives it and names a changed value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from release.builder import build
from release.errors import CheckFailed, VerifyFailed
from release.spec import load_spec
from release.staged.manifest import Manifest, write_manifest
from release.verify import verify_staged
from tests.card.test_model_index import FULL, LIMIT
from tests.helpers import edit
from tests.kinds.helpers import REPO, make_release

NAME = ".eval_results/lm-eval.yaml"
MAPPING = """
[[card.eval_results]]
task = "tiny_boolq"
dataset = "acme/tiny-boolq"
task_id = "boolq"

[[card.eval_results]]
task = "tiny_arith"
metric = "exact_match,remove_whitespace"
dataset = "acme/tiny-arith"
task_id = "arith"
revision = "0123abc"
"""


def release_with(root: Path, mapping: str = MAPPING) -> Path:
    """The transformers test release with the harness's two results files (full, --limit 3) and `mapping`."""
    spec = make_release(root / "artifacts" / "v1")
    (spec.parent / "results_2026-11-30.json").unlink()
    shutil.copyfile(FULL, spec.parent / "results_full.json")
    shutil.copyfile(LIMIT, spec.parent / "results_limit.json")
    text = spec.read_text().replace("results_2026-11-30.json", "results_*.json")
    spec.write_text(text + mapping)
    return spec


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eval-results")
    return build(load_spec(release_with(root)), root / "dist").dist


def test_the_file_holds_each_mapped_result_with_its_source_date_and_notes(staged: Path) -> None:
    written = yaml.safe_load((staged / NAME).read_text())
    full, limit = json.loads(FULL.read_text()), json.loads(LIMIT.read_text())
    url = f"https://huggingface.co/{REPO}/blob/v1/"
    assert written == [
        {
            "dataset": {"id": "acme/tiny-boolq", "task_id": "boolq"},
            "value": full["results"]["tiny_boolq"]["acc,none"],
            "date": "2026-12-01T12:16:19Z",
            "source": {"url": url + "results_full.json", "name": "lm-evaluation-harness 0.4.13"},
            "notes": "lm-eval acc, 0-shot",
        },
        {
            "dataset": {"id": "acme/tiny-boolq", "task_id": "boolq"},
            "value": limit["results"]["tiny_boolq"]["acc,none"],
            "date": "2026-12-01T12:17:43Z",
            "source": {"url": url + "results_limit.json", "name": "lm-evaluation-harness 0.4.13"},
            "notes": "lm-eval acc, 1-shot, limit 3 (a subset of the task)",
        },
        {
            "dataset": {"id": "acme/tiny-arith", "task_id": "arith", "revision": "0123abc"},
            "value": full["results"]["tiny_arith"]["exact_match,remove_whitespace"],
            "date": "2026-12-01T12:16:19Z",
            "source": {"url": url + "results_full.json", "name": "lm-evaluation-harness 0.4.13"},
            "notes": "lm-eval exact_match,remove_whitespace, 0-shot",
        },
        {
            "dataset": {"id": "acme/tiny-arith", "task_id": "arith", "revision": "0123abc"},
            "value": limit["results"]["tiny_arith"]["exact_match,remove_whitespace"],
            "date": "2026-12-01T12:17:43Z",
            "source": {"url": url + "results_limit.json", "name": "lm-evaluation-harness 0.4.13"},
            "notes": "lm-eval exact_match,remove_whitespace, 1-shot, limit 3 (a subset of the task)",
        },
    ]


def test_the_file_is_in_the_manifest_hashed_and_valid_against_the_hubs_schema(staged: Path) -> None:
    from release.evidence.eval_results import schema_problems

    manifest = Manifest.load(staged / "release.json")
    entry = manifest.file(NAME)
    assert entry is not None and entry.role == "eval-results" and entry.generated
    import hashlib

    assert entry.sha256 == hashlib.sha256((staged / NAME).read_bytes()).hexdigest()
    assert NAME in (staged / "SHA256SUMS").read_text()
    assert schema_problems(yaml.safe_load((staged / NAME).read_text())) == []
    assert verify_staged(staged).files == len(manifest.files)  # round-trips through verify


def test_the_schema_refuses_what_the_hub_refuses() -> None:
    from release.evidence.eval_results import schema_problems

    good = {"dataset": {"id": "cais/hle", "task_id": "default"}, "value": 20.9}
    assert schema_problems([good]) == []
    assert schema_problems([{"dataset": {"id": "cais/hle"}, "value": 1}]) == [
        "0/dataset: 'task_id' is a required property"
    ]
    assert schema_problems([{**good, "value": "high"}]) == ["0/value: 'high' is not of type 'number'"]
    assert schema_problems([{**good, "source": {"name": "logs"}}]) == ["0/source: 'url' is a required property"]


def test_the_schema_transcribes_the_vendored_hub_specification() -> None:
    """Every field of the Hub's eval_results.yaml (vendored verbatim) is in the JSON Schema, required exactly where
    the specification's comment says Required."""
    import re

    from release.util.schemas import load_schema

    vendored = (Path(__file__).parents[2] / "release" / "schemas" / "eval_results.yaml").read_text()
    fields = {}
    for line in vendored.split("# or, with only")[0].splitlines():
        found = re.match(r"^(\s*)(?:- )?(\w+):.*?#\s*(Required|Optional)", line)
        if found:
            fields[found.group(2)] = found.group(3) == "Required"
    schema = load_schema("eval-results.schema.json")["items"]
    dataset, source = schema["properties"]["dataset"], schema["properties"]["source"]
    transcribed = {*schema["properties"], *dataset["properties"], *source["properties"]} - {"dataset"}
    required = {*schema["required"], *dataset["required"], *source["required"]} - {"dataset"}
    assert set(fields) == transcribed
    assert {name for name, needed in fields.items() if needed} == required == {"id", "task_id", "value", "url"}


def test_a_changed_value_is_caught_by_verify(staged: Path, tmp_path: Path) -> None:
    """Edited in the staged file and its digest recorded again (release.json and SHA256SUMS rewritten), the
    value is still caught: verify re-derives it from the lm-eval results."""
    from dataclasses import replace

    from release.staged.manifest import git_blob_id

    dist = tmp_path / "v1"
    shutil.copytree(staged, dist)
    path = dist / NAME
    text = path.read_text()
    edit(path, "value: 0.4\n", "value: 0.9\n")
    assert text != path.read_text()
    body = path.read_bytes()
    import hashlib

    manifest = Manifest.load(dist / "release.json")
    files = tuple(
        replace(f, size=len(body), sha256=hashlib.sha256(body).hexdigest(), git_blob_id=git_blob_id(body))
        if f.path_in_repo == NAME
        else f
        for f in manifest.files
    )
    write_manifest(dist, replace(manifest, files=files))
    with pytest.raises(VerifyFailed) as caught:
        verify_staged(dist)
    assert any(
        str(p).startswith(f"{NAME}: entry 1 (acme/tiny-boolq / boolq): value is 0.9, the evidence gives 0.4")
        for p in caught.value.problems
    ), caught.value.problems


def test_a_mapping_no_results_file_holds_fails_the_build(tmp_path: Path) -> None:
    spec = release_with(tmp_path, MAPPING.replace('task = "tiny_boolq"', 'task = "boolq"'))
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(spec), tmp_path / "dist")
    assert any(
        "maps task 'boolq', which no lm-eval results file of the release holds" in str(p) for p in caught.value.problems
    )


def test_no_mapping_no_file(tmp_path: Path) -> None:
    dist = build(load_spec(release_with(tmp_path, "")), tmp_path / "dist").dist
    assert not (dist / ".eval_results").exists()
    assert Manifest.load(dist / "release.json").file(NAME) is None


def test_the_local_hub_takes_the_file_and_lists_it_at_the_tag(staged: Path, tmp_path: Path) -> None:
    from huggingface_hub import HfApi

    from release.publish.push import PushOptions, push
    from tests.helpers import TOKEN, local_hub

    dist = tmp_path / "v1"
    shutil.copytree(staged, dist)
    with local_hub(tmp_path / "hub") as hub:
        assert push(dist, PushOptions(endpoint=hub.url, token=TOKEN)).verified
        api = HfApi(endpoint=hub.url, token=TOKEN)
        assert NAME in api.list_repo_files(REPO, revision="v1")
        served = api.hf_hub_download(REPO, NAME, revision="v1", cache_dir=tmp_path / "cache")
    assert Path(served).read_bytes() == (staged / NAME).read_bytes()


def test_the_local_hub_refuses_a_file_the_schema_refuses(tmp_path: Path) -> None:
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from tests.helpers import TOKEN, local_hub

    with local_hub(tmp_path / "hub") as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        api.create_repo(REPO)
        bad = CommitOperationAdd(NAME, b"- dataset: {id: cais/hle}\n  value: 1\n")
        with pytest.raises(HfHubHTTPError, match="dataset: 'task_id' is a required property"):
            api.create_commit(REPO, [bad], commit_message="eval results")
        good = CommitOperationAdd(NAME, b"- dataset: {id: cais/hle, task_id: default}\n  value: 1\n")
        api.create_commit(REPO, [good], commit_message="eval results")
        assert NAME in api.list_repo_files(REPO)


def test_init_proposes_the_tasks_on_hub_datasets_commented_and_they_build(tmp_path: Path) -> None:
    """A results file naming Hub datasets needs no mapping written by hand: init proposes one per task, commented
    (which datasets are registered benchmarks cannot be known offline); uncommented, they build. The harness's
    local-data fixture gets none."""
    from release.init import init_from_files
    from tests.evidence.test_lm_eval import FIXTURE
    from tests.helpers import transformers_folder, write_summary

    files = transformers_folder(tmp_path / "node-disk")
    (files / "results_2026-11-30.json").unlink()
    shutil.copyfile(FIXTURE, files / "results_hub.json")
    shutil.copyfile(FULL, files / "results_local.json")
    spec = init_from_files(tmp_path, "v1", files, "acme/llama-mini").spec
    text = spec.read_text()
    assert "cannot tell offline" in text and "\n# [[card.eval_results]]\n" in text
    assert "[[card.eval_results]]\n" not in text.replace("# [[card.eval_results]]\n", "")  # only proposed
    proposed = text[text.index("# [[card.eval_results]]") :]
    assert (
        '# task = "arc_challenge"\n# metric = "acc"\n# dataset = "allenai/ai2_arc"\n# task_id = "ARC-Challenge"\n'
        in (proposed)
    )
    assert (
        '# task = "hellaswag"\n# metric = "acc"\n# dataset = "Rowan/hellaswag"\n# task_id = "hellaswag"\n' in proposed
    )
    assert "tiny_" not in proposed  # local json data: no Hub dataset to propose
    spec.write_text(text.replace(proposed, proposed.replace("# ", "").replace("#\n", "\n")))
    write_summary(spec)
    dist = build(load_spec(spec), tmp_path / "dist").dist
    written = yaml.safe_load((dist / NAME).read_text())
    arc = next(e for e in written if e["dataset"]["id"] == "allenai/ai2_arc")
    raw = json.loads(FIXTURE.read_text())
    assert arc["value"] == raw["results"]["arc_challenge"]["acc,none"] and arc["notes"] == "lm-eval acc, 25-shot"
    verify_staged(dist)


def test_the_card_command_keeps_the_file_and_verify_still_passes(tmp_path: Path) -> None:
    """`hf-release card` re-renders README.md from the staged files: the .eval_results/ file stays as built."""
    from release.card.staged import render_card

    spec = release_with(tmp_path)
    dist = build(load_spec(spec), tmp_path / "dist").dist
    before = (dist / NAME).read_bytes()
    edit(spec, 'summary = "', 'summary = "Re-rendered. ')
    result = render_card(load_spec(spec), dist)
    assert result.previous != result.text and (dist / NAME).read_bytes() == before
    assert Manifest.load(dist / "release.json").file(NAME) is not None
    verify_staged(dist)
