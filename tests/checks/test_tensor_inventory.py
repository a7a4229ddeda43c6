"""The weights' tensor inventory against what config.json implies: names, count, dtype, shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.formats.safetensors_header import read_header
from release.kinds.dflash2_drafter import tensor_problems
from release.kinds.dflash2_drafter.inventory import FULL_SIZE, expected_tensors, write_drafter
from tests.checks.helpers import check_problems, real_config, write_sparse
from tests.helpers import edit

LABEL = "model.safetensors"


@pytest.fixture(scope="module")
def real_shaped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real 2.3 GB drafter layout as a sparse file (instant, no disk)."""
    path = tmp_path_factory.mktemp("drafter") / "model.safetensors"
    write_drafter(path, real_config(), data="sparse", total_size=FULL_SIZE)
    return path


def inventory(path: Path) -> list[str]:
    tensors = read_header(path, LABEL).tensors
    return [p.message for p in tensor_problems(real_config(), tensors, LABEL, True)]


def test_real_shaped_drafter_passes_with_shapes(real_shaped: Path) -> None:
    assert real_shaped.stat().st_size == FULL_SIZE
    assert inventory(real_shaped) == []


def test_missing_tensor(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    del tensors["norm.weight"]
    write_sparse(tmp_path / "m.safetensors", tensors)
    assert inventory(tmp_path / "m.safetensors") == [
        "has 80 tensors, config.json implies 81: missing 1 (norm.weight); these weights do not belong to this "
        "config.json"
    ]


def test_many_missing_tensors_are_summarised(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    for name in [n for n in tensors if n.startswith("layers.4.")]:
        del tensors[name]
    write_sparse(tmp_path / "m.safetensors", tensors)
    [message] = inventory(tmp_path / "m.safetensors")
    assert message.startswith("has 66 tensors, config.json implies 81: missing 15 (layers.4.")
    assert message.endswith(", … 12 more); these weights do not belong to this config.json")


def test_unexpected_tensor(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    tensors["lm_head.weight"] = ((4, 4), "BF16")
    write_sparse(tmp_path / "m.safetensors", tensors)
    assert inventory(tmp_path / "m.safetensors") == [
        "has 82 tensors, config.json implies 81: unexpected 1 (lm_head.weight); these weights do not belong to this "
        "config.json"
    ]


def test_renamed_tensor_is_missing_and_unexpected(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    tensors["model.fc.weight"] = tensors.pop("fc.weight")
    write_sparse(tmp_path / "m.safetensors", tensors)
    assert inventory(tmp_path / "m.safetensors") == [
        "has 81 tensors, config.json implies 81: missing 1 (fc.weight); unexpected 1 (model.fc.weight); these weights "
        "do not belong to this config.json"
    ]


def test_wrong_dtype(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    tensors["fc.weight"] = (tensors["fc.weight"][0], "F16")
    write_sparse(tmp_path / "m.safetensors", tensors)
    assert inventory(tmp_path / "m.safetensors") == [
        "1 tensors are not BF16 as config.json says (fc.weight); convert them or correct the dtype"
    ]


def test_dtype_follows_the_config(real_shaped: Path) -> None:
    config = real_config()
    config["dtype"] = "float32"
    tensors = read_header(real_shaped, LABEL).tensors
    [problem] = tensor_problems(config, tensors, LABEL, True)
    assert problem.message.startswith("81 tensors are not F32 as config.json says (")


def test_wrong_shape_when_check_shapes(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    tensors["fc.weight"] = ((4096, 4096), "BF16")
    write_sparse(tmp_path / "m.safetensors", tensors)
    [message] = inventory(tmp_path / "m.safetensors")
    assert (
        message == "tensor fc.weight has shape [4096, 4096], config.json implies "
        f"{list(expected_tensors(real_config())['fc.weight'][0])}; the weights and config.json disagree"
    )


def test_wrong_shape_ignored_without_check_shapes(tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    tensors["fc.weight"] = ((4096, 4096), "BF16")
    write_sparse(tmp_path / "m.safetensors", tensors)
    found = read_header(tmp_path / "m.safetensors", LABEL).tensors
    assert tensor_problems(real_config(), found, LABEL, False) == []


def test_config_that_cannot_give_an_inventory() -> None:
    config = real_config()
    del config["dflash_config"]["selector_rank"]
    [problem] = tensor_problems(config, {}, LABEL, True)
    assert problem.file == LABEL
    assert problem.message.startswith(
        "cannot derive the tensor inventory from config.json: config key 'dflash_config.selector_rank' is missing"
    )


# Through the check steps: the example ships a small stand-in with check_shapes = false.


def test_example_checks_clean(example: Path, tmp_path: Path) -> None:
    assert check_problems(example, tmp_path / "stage") == []


def test_check_shapes_true_on_the_small_example(example: Path, tmp_path: Path) -> None:
    edit(example, "check_shapes = false\n", "check_shapes = true\n")
    problems = check_problems(example, tmp_path / "stage")
    assert problems and all(
        p.startswith("model.safetensors: tensor ") and " config.json implies " in p for p in problems
    )
    assert (
        "model.safetensors: tensor fc.weight has shape [16, 80], config.json implies [4096, 20480]; the weights and "
        "config.json disagree" in problems
    )


def test_wrong_inventory_through_the_checks(example: Path, tmp_path: Path) -> None:
    tensors = expected_tensors(real_config())
    kept = {name: tensors[name] for name in ("fc.weight", "hidden_norm.weight", "norm.weight")}
    kept["fc.weight"] = ((1, 1), "BF16")
    write_sparse(example.parent / "model.safetensors", kept)
    edit(example, "check_shapes = false\n", "check_shapes = true\n")
    problems = check_problems(example, tmp_path / "stage")
    assert problems == [
        "model.safetensors: has 3 tensors, config.json implies 81: missing 78 "
        "(candidate_selector.hidden_projection.weight, "
        "candidate_selector.predecessor_codebook, candidate_selector.successor_codebook, … 75 more); these weights do "
        "not belong to this config.json",
        "model.safetensors: tensor fc.weight has shape [1, 1], config.json implies [4096, 20480]; the weights and "
        "config.json disagree",
    ]
