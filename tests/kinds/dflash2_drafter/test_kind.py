"""The DFlash2 drafter kind: the example builds as before (detected from config.json), also sharded."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed
from release.formats.safetensors_header import read_header
from release.formats.safetensors_layout import DTYPE_BYTES
from release.spec import load_spec
from tests.checks.helpers import write_sparse
from tests.helpers import edit
from tests.kinds.helpers import shards

WEIGHTS = '[[files]]\nsource = "model.safetensors"\nrole = "weights"\ndigests = ["md5"]\ncheck_shapes = false\n'
SHARDED = (
    '[[files]]\nsource = "model-*.safetensors"\nrole = "weights"\ncheck_shapes = false\n\n'
    '[[files]]\nsource = "model.safetensors.index.json"\nrole = "weights-index"\n'
)


def shard_the_drafter(example: Path, drop: int = 0) -> None:
    """Split the example drafter (BF16, which numpy cannot hold) into 2 real-format shards + index,
    leaving out its first `drop` tensors."""
    folder = example.parent
    tensors = read_header(folder / "model.safetensors", "model.safetensors").tensors
    kept = sorted(tensors)[drop:]
    weight_map = {}
    for i, group in enumerate(shards(kept, 2), start=1):
        name = f"model-{i:05d}-of-00002.safetensors"
        write_sparse(folder / name, {n: (tensors[n].shape, tensors[n].dtype) for n in group})
        weight_map.update(dict.fromkeys(group, name))
    total = sum(math.prod(tensors[n].shape) * DTYPE_BYTES[tensors[n].dtype] for n in kept)
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map})
    )
    (folder / "model.safetensors").unlink()
    edit(example, WEIGHTS, SHARDED)


def test_the_drafter_split_in_two_shards_builds(example: Path, built: Path, tmp_path: Path) -> None:
    shard_the_drafter(example)
    result = build(load_spec(example), tmp_path / "dist")
    names = {f.path_in_repo for f in result.manifest.files}
    assert {
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
    } <= names
    assert result.manifest.card is not None and result.manifest.card["kind"] == "dflash2-drafter"
    card = (result.dist / "README.md").read_text("utf-8")
    before = (built / "README.md").read_text("utf-8")
    assert (
        card.split("## Files")[0].split("-->", 1)[1] == before.split("## Files")[0].split("-->", 1)[1]
    )  # same sections up to the files


def test_a_shard_missing_a_tensor_is_caught_by_the_inventory_over_all_shards(example: Path, tmp_path: Path) -> None:
    shard_the_drafter(example, drop=1)
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(example), tmp_path / "dist")
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("model.safetensors.index.json: has 80 tensors, config.json implies 81: missing 1 (")


def test_the_drafter_kind_requires_its_honest_note(example: Path, tmp_path: Path) -> None:
    text = example.read_text()
    start, end = text.index("[card.honest_note]"), text.index("[card.serving]")
    example.write_text(text[:start] + text[end:])
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(example), tmp_path / "dist")
    assert [str(p) for p in caught.value.problems] == [
        "release.toml card: the dflash2-drafter kind needs [card.honest_note]; add it (see the README's release kinds)"
    ]


def test_optional_parts_are_optional(example: Path, tmp_path: Path) -> None:
    """No ledger → no ledger section; no [card.bench] → no benchmark section or bench chart; no base model → no key."""
    from release.verify import verify_staged

    text = example.read_text()
    text = text.replace('[[files]]\nsource = "results.tsv"\nrole = "ledger"\n\n', "")
    start, end = text.index("[card.bench]"), text.index("[card.usage]")
    text = text[:start] + text[end:]
    text = text.replace('base_model = "incoai/GLM-5.3-Flash-DFlash2"\nbase_model_relation = "finetune"\n', "")
    example.write_text(text)
    result = build(load_spec(example), tmp_path / "dist")
    card = (result.dist / "README.md").read_text("utf-8")
    assert "## Ledger" not in card and "## Benchmark" not in card and "bench.png" not in card
    assert "base_model" not in card.split("---")[1]
    assert "## Honest note" in card and "## Serving config" in card
    # the honest note's served evidence is still drawn: only its picture is left in assets/
    assert [p.name for p in (result.dist / "assets").iterdir()] == ["honest-note.png"]
    verify_staged(result.dist)
