"""A full-size (sparse) 2,342,169,824-byte drafter with the real 81-tensor header builds and verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed
from release.kinds.dflash2_drafter.inventory import FULL_SIZE, write_drafter
from release.spec import load_spec
from release.verify import verify_staged
from tests.helpers import edit


@pytest.fixture
def full_size(example: Path) -> Path:
    """The example spec, pointing at a sparse full-size drafter by absolute path (as on a node's disk)."""
    config = json.loads((example.parent / "config.json").read_text())
    drafter = example.parent.parent / "node-disk" / "model.safetensors"
    drafter.parent.mkdir()
    write_drafter(drafter, config, data="sparse", total_size=FULL_SIZE)
    edit(example, 'source = "model.safetensors"', f'source = "{drafter}"')
    edit(example, "check_shapes = false\n", "")
    return example


@pytest.mark.heavy  # 2.3 GB hashed with sha256 and md5, twice: make test-heavy
def test_full_size_drafter_builds_and_verifies(full_size: Path, tmp_path: Path) -> None:
    result = build(load_spec(full_size), tmp_path / "dist")
    weights = result.manifest.file("model.safetensors")
    assert weights is not None and weights.size == FULL_SIZE
    assert verify_staged(result.dist).bytes >= FULL_SIZE


def test_full_size_shapes_are_checked_against_config_before_hashing(full_size: Path, tmp_path: Path) -> None:
    edit(full_size.parent / "config.json", '"intermediate_size": 12952', '"intermediate_size": 12960')
    with pytest.raises(CheckFailed) as exc:
        build(load_spec(full_size), tmp_path / "dist")
    assert any(
        "mlp.up_proj.weight has shape [12952, 4096], config.json implies [12960, 4096]" in p.message
        for p in exc.value.problems
    )
