"""release/kinds/timm_model/reader.py on the test_convnext (10 Imagenette classes) timm's save_for_hf wrote, and
damaged copies;
with timm installed, the facts against the model timm builds from the folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.kinds.timm_model.reader import read_timm_model
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files
from tests.helpers import edit_config

TIMM = FIXTURES / "timm"


def read_timm(folder: Path) -> Any:
    return read_timm_model(release_files(folder))


def test_the_fixture_reads_with_its_facts() -> None:
    facts, problems = read_timm(TIMM)
    assert problems == [] and facts is not None
    assert (facts.architecture, facts.num_classes, facts.num_features, facts.classifier) == (
        "test_convnext",
        10,
        64,
        ("head.fc",),
    )
    assert (facts.input_size, facts.mean, facts.std, facts.interpolation, facts.crop_pct) == (
        (3, 160, 160),
        (0.5, 0.5, 0.5),
        (0.5, 0.5, 0.5),
        "bicubic",
        0.95,
    )
    assert facts.label_names[:2] == ("tench", "English springer") and len(facts.label_names) == 10
    assert (facts.parameter_count, facts.license, facts.warnings) == (207_778, "apache-2.0", ())


def test_num_classes_disagreeing_with_the_head_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("timm", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["num_classes"] = config["model_args"]["num_classes"] = config["pretrained_cfg"]["num_classes"] = 11
    config["label_names"].append("extra")
    (folder / "config.json").write_text(json.dumps(config))
    only_problem(
        read_timm(folder)[1],
        "config.json",
        "num_classes is 11, but the classifier 'head.fc.weight' in model.safetensors is [10, 64] (10 classes)",
        "timm would fail to load it",
    )


def test_a_features_only_config_over_a_head_and_disagreeing_model_args_are_named(tmp_path: Path) -> None:
    folder = copy_fixture("timm", tmp_path)
    edit_config(folder, num_classes=0, label_names=[])
    _, problems = read_timm(folder)
    assert {p.message.split(";")[0] for p in problems} == {
        "model_args.num_classes is 10 but num_classes is 0",
        "num_classes is 0 (no classifier), but model.safetensors holds 'head.fc.weight' [10, 64]",
    }


def test_label_names_of_the_wrong_count_are_named(tmp_path: Path) -> None:
    folder = copy_fixture("timm", tmp_path)
    edit_config(folder, label_names=["a", "b"])
    only_problem(read_timm(folder)[1], "config.json", "label_names has 2 names for 10 classes")


def test_a_pickle_beside_the_safetensors_is_a_warning_and_alone_a_problem(tmp_path: Path) -> None:
    folder = copy_fixture("timm", tmp_path)
    (folder / "pytorch_model.bin").write_bytes(b"PK\3\4")
    facts, problems = read_timm(folder)
    assert (
        problems == []
        and len(facts.warnings) == 1
        and facts.warnings[0].startswith("pytorch_model.bin: a pickle shipped beside")
    )
    (folder / "model.safetensors").unlink()
    only_problem(read_timm(folder)[1], "model.safetensors", "only the pickle pytorch_model.bin is shipped")


def test_a_transformers_config_is_not_a_timm_one(tmp_path: Path) -> None:
    only_problem(read_timm(FIXTURES / "llama")[1], "config.json", "has no architecture (the timm model name")
    assert read_timm_model({})[1][0].message.startswith("is missing; timm.create_model")


def test_the_older_single_dict_config_timm_still_reads(tmp_path: Path) -> None:
    folder = copy_fixture("timm", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    flat = {**config.pop("pretrained_cfg"), **{k: v for k, v in config.items() if k != "model_args"}}
    (folder / "config.json").write_text(json.dumps(flat))
    facts, problems = read_timm(folder)
    assert problems == [] and (facts.classifier, facts.input_size, facts.num_classes) == (
        ("head.fc",),
        (3, 160, 160),
        10,
    )


@pytest.mark.parametrize("fixture", ["timm"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_timm_model, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with timm (its own venv: timm needs torchvision built for its torch) ---


def load_with_timm(folder: Path) -> Any:
    timm = pytest.importorskip("timm")
    return timm.create_model(f"local-dir:{folder}", pretrained=True)


def test_timm_builds_the_model_with_the_facts_read_here() -> None:
    model = load_with_timm(TIMM)
    facts, _ = read_timm(TIMM)
    assert model.num_classes == facts.num_classes and model.num_features == facts.num_features
    assert sum(p.numel() for p in model.state_dict().values()) == facts.parameter_count
    assert tuple(model.pretrained_cfg["input_size"]) == facts.input_size
    assert model.pretrained_cfg["classifier"] == facts.classifier[0]
    assert tuple(model.get_classifier().weight.shape) == (facts.num_classes, facts.num_features)


def test_timm_fails_on_the_num_classes_flagged_here(tmp_path: Path) -> None:
    pytest.importorskip("timm")
    folder = copy_fixture("timm", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["num_classes"] = config["model_args"]["num_classes"] = 11
    (folder / "config.json").write_text(json.dumps(config))
    assert read_timm(folder)[1]
    with pytest.raises(RuntimeError, match="size mismatch"):
        load_with_timm(folder)
