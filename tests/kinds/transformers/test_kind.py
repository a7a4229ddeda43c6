"""The transformers kind end to end: a typical Hub release builds, verifies and pushes; each way its
shards and index can disagree fails naming the index or the shard."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from release.builder import build
from release.errors import CheckFailed
from release.publish.push import PushOptions, push
from release.spec import load_spec
from release.staged.manifest import Manifest
from release.verify import verify_staged
from tests.helpers import TOKEN, local_hub
from tests.kinds.helpers import REPO, make_release, tensors, write_sharded

INDEX = "model.safetensors.index.json"
DRAFTER_WORDS = (
    "drafter",
    "vllm",
    "vLLM",
    "acceptance",
    "Accept length",
    "speculative",
    "dflash",
    "Honest note",
    "Ledger",
)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "artifacts" / "v1")


def problems(spec: Path, tmp_path: Path) -> list[str]:
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(spec), tmp_path / "dist")
    return [str(p) for p in caught.value.problems]


def test_a_typical_release_builds_verifies_and_pushes(release: Path, tmp_path: Path) -> None:
    result = build(load_spec(release), tmp_path / "dist")
    card = (result.dist / "README.md").read_text("utf-8")
    for word in DRAFTER_WORDS:
        assert word not in card, word
    assert "| Architecture | LlamaForCausalLM |" in card
    count = sum(t.size for t in tensors().values())
    assert f"| Parameters | {count:,} |" in card and "| Tensor dtype | float16 |" in card
    assert "| Context length | 4,096 |" in card and "| Vocabulary size | 32 |" in card
    assert "[model-00002-of-00003.safetensors](model-00002-of-00003.safetensors)" in card
    assert "(2 tasks: arc_easy, hellaswag)" in card
    front = card.split("---")[1]
    assert "base_model" not in front and "library_name: transformers" in front and "license: apache-2.0" in front
    manifest = Manifest.load(result.dist / "release.json")
    assert manifest.card is not None and manifest.card["kind"] == "transformers"
    assert "acceptance_length" not in manifest.card  # nothing of a drafter's bench in a plain model's record
    assert {f.role for f in manifest.files} >= {
        "weights",
        "weights-index",
        "config",
        "generation-config",
        "tokenizer",
        "eval",
        "license",
    }

    verify_staged(result.dist)
    with local_hub(tmp_path / "hub") as hub:
        pushed = push(result.dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert pushed.tag == "v1" and pushed.verified and REPO


def test_an_edited_parameter_count_fails_verify(release: Path, tmp_path: Path) -> None:
    from release.card.staged import lint_staged

    dist = build(load_spec(release), tmp_path / "dist").dist
    card = dist / "README.md"
    count = f"{sum(t.size for t in tensors().values()):,}"
    card.write_text(card.read_text("utf-8").replace(f"| Parameters | {count}", "| Parameters | 7,000,000,000"), "utf-8")
    found = [str(p) for p in lint_staged(dist, Manifest.load(dist / "release.json"))]
    assert any("column 'Value': the card shows '7,000,000,000" in p for p in found), found


def _index(folder: Path) -> dict:
    return json.loads((folder / INDEX).read_text())


def _write_index(folder: Path, index: dict) -> None:
    (folder / INDEX).write_text(json.dumps(index))


def test_a_tensor_missing_from_weight_map(release: Path, tmp_path: Path) -> None:
    index = _index(release.parent)
    holder = index["weight_map"].pop("model.norm.weight")
    _write_index(release.parent, index)
    found = problems(release, tmp_path)
    assert [p for p in found if "weight_map" in p] == [
        f"{holder}: tensor model.norm.weight is missing from {INDEX}'s weight_map"
    ]


def test_a_weight_map_entry_pointing_at_a_shard_not_in_the_release(release: Path, tmp_path: Path) -> None:
    index = _index(release.parent)
    index["weight_map"]["lm_head.weight"] = "model-00004-of-00003.safetensors"
    _write_index(release.parent, index)
    found = problems(release, tmp_path)
    assert any(
        p.startswith(
            f"{INDEX}: weight_map points 1 tensor(s) at model-00004-of-00003.safetensors, which is not a weights file"
        )
        for p in found
    ), found


def test_a_wrong_total_size(release: Path, tmp_path: Path) -> None:
    index = _index(release.parent)
    index["metadata"]["total_size"] += 2
    _write_index(release.parent, index)
    [problem] = problems(release, tmp_path)
    assert problem.startswith(f"{INDEX}: metadata.total_size is ") and "regenerate the index" in problem


def test_a_missing_shard(release: Path, tmp_path: Path) -> None:
    (release.parent / "model-00002-of-00003.safetensors").unlink()
    found = problems(release, tmp_path)
    assert any(
        p.startswith(f"{INDEX}: weight_map points ")
        and "model-00002-of-00003.safetensors, which is not a weights file" in p
        for p in found
    ), found


def test_a_tensor_in_two_shards(release: Path, tmp_path: Path) -> None:
    shard = release.parent / "model-00001-of-00003.safetensors"
    from safetensors.numpy import load_file

    held = load_file(str(shard))
    held["model.norm.weight"] = np.ones(8, dtype=np.float16)
    save_file(held, str(shard), metadata={"format": "pt"})
    found = problems(release, tmp_path)
    assert any("tensor model.norm.weight is also in" in p and p.startswith("model-0000") for p in found), found


def test_num_hidden_layers_must_match_the_layers_the_tensors_hold(release: Path, tmp_path: Path) -> None:
    config = json.loads((release.parent / "config.json").read_text())
    config["num_hidden_layers"] = 3
    (release.parent / "config.json").write_text(json.dumps(config))
    [problem] = problems(release, tmp_path)
    assert problem == (
        f"config.json: num_hidden_layers is 3, but {INDEX} holds layers 0–1 (model.layers.N.); "
        "save it with transformers' save_pretrained (or fix config.json to match the weights)"
    )


def test_vocab_size_must_match_the_input_embedding(release: Path, tmp_path: Path) -> None:
    config = json.loads((release.parent / "config.json").read_text())
    config["vocab_size"] = 64
    (release.parent / "config.json").write_text(json.dumps(config))
    assert problems(release, tmp_path) == [
        (
            f"config.json: vocab_size is 64, but {INDEX}'s input embedding 'model.embed_tokens.weight' has 32 rows; "
            "save it with transformers' save_pretrained (or fix config.json to match the weights)"
        )
    ]


def test_a_license_id_that_disagrees_with_the_license_text(release: Path, tmp_path: Path) -> None:
    spec = release.read_text().replace('id = "apache-2.0"', 'id = "mit"')
    release.write_text(spec)
    [problem] = problems(release, tmp_path)
    assert (
        problem
        == "LICENSE: is the apache-2.0 license text, but the spec declares license id 'mit'; set card.license.id = "
        "'apache-2.0' or ship the right LICENSE"
    )


def test_a_hub_model_license_is_recognised_by_its_heading(release: Path, tmp_path: Path) -> None:
    release.write_text(release.read_text().replace('id = "apache-2.0"', 'id = "llama3.1"'))
    [problem] = problems(release, tmp_path)
    assert problem.startswith("LICENSE: is the apache-2.0 license text, but the spec declares license id 'llama3.1'")
    (release.parent / "LICENSE").write_text(
        "LLAMA 3.1 COMMUNITY LICENSE AGREEMENT\nLlama 3.1 Version Release Date: July 23, 2024\n…\n"
    )
    assert build(load_spec(release), tmp_path / "dist2").dist.is_dir()


def test_the_kind_can_be_declared_and_an_eval_file_must_be_lm_eval(release: Path, tmp_path: Path) -> None:
    release.write_text(release.read_text().replace('version = "v1"', 'version = "v1"\nkind = "transformers"'))
    (release.parent / "results_2026-11-30.json").write_text(json.dumps({"acc": 0.5}))
    [problem] = problems(release, tmp_path)
    assert problem == (
        "results_2026-11-30.json: has no `results` object; expected lm-evaluation-harness's results_*.json; "
        "ship the harness's results_*.json as it wrote it"
    )


def test_unsharded_weights_without_an_index(release: Path, tmp_path: Path) -> None:
    folder = release.parent
    for p in folder.glob("model-*.safetensors"):
        p.unlink()
    (folder / INDEX).unlink()
    save_file(tensors(), str(folder / "model.safetensors"), metadata={"format": "pt"})
    spec = release.read_text().replace('source = "model-*.safetensors"', 'source = "model.safetensors"')
    release.write_text(
        spec.replace('[[files]]\nsource = "model.safetensors.index.json"\nrole = "weights-index"\n\n', "")
    )
    assert build(load_spec(release), tmp_path / "dist").dist.is_dir()
    assert write_sharded  # the sharded writer is shared with the drafter test


def test_a_plain_vllm_launcher_is_read_without_speculative_decoding(release: Path, tmp_path: Path) -> None:
    """Any model may ship its vLLM launcher: the serving flags are quoted; no speculative config is demanded."""
    (release.parent / "serve.sh").write_text(
        '#!/usr/bin/env bash\nset -euo pipefail\nMODEL="${MODEL:-test-org/tiny-llama}"\n'
        'exec vllm serve "$MODEL" --revision v1 --tensor-parallel-size 2 --max-model-len 4096\n'
    )
    release.write_text(
        release.read_text().replace("[card]\n", '[[files]]\nsource = "serve.sh"\nrole = "launcher"\n\n[card]\n', 1)
    )
    card = (build(load_spec(release), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    assert "| `--tensor-parallel-size` | `2` |" in card and "| `--max-model-len` | `4096` |" in card
    for word in ("speculative", "drafter", "dflash", "Accept length"):
        assert word not in card, word


def test_the_usage_snippet_loads_only_what_is_shipped(release: Path, tmp_path: Path) -> None:
    """Weights alone cannot be loaded by transformers: no snippet; no tokenizer shipped: no tokenizer line."""
    text = release.read_text()
    for block in (
        '[[files]]\nsource = "tokenizer*.json"\nrole = "tokenizer"\n\n',
        '[[files]]\nsource = "special_tokens_map.json"\nrole = "tokenizer"\n\n',
    ):
        assert block in text
        text = text.replace(block, "")
    release.write_text(text)
    card = (build(load_spec(release), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    assert "AutoModelForCausalLM.from_pretrained" in card and "AutoTokenizer" not in card
    release.write_text(text.replace('[[files]]\nsource = "config.json"\nrole = "config"\n\n', ""))
    card = (build(load_spec(release), tmp_path / "dist2").dist / "README.md").read_text("utf-8")
    assert "from_pretrained" not in card and "Load it with transformers" not in card and "snapshot_download" in card
