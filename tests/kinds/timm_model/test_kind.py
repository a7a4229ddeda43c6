"""The timm kind, on the folder timm's own save_for_hf wrote (tests/fixtures/libraries/timm/: config.json with
`architecture` + `pretrained_cfg`, model.safetensors without `__metadata__`): `init --files` → `build` with no edit
gives the card the Hub expects for timm; num_classes disagreeing with the head is refused in one line naming
config.json; a pickle beside the safetensors is a warning naming it."""

from __future__ import annotations

import dataclasses
import json
import logging
import tomllib
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed
from release.init import init_from_files
from release.spec import load_spec
from tests.kinds.test_library_kinds import built_card, folder, front_matter, refusal

REPO = "test-org/tiny-convnext"


def test_a_timm_model_builds_without_edits_as_timm_image_classification(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "timm"), REPO)
    text = spec.read_text("utf-8")
    assert 'kind = "timm"  # detected: config.json has architecture and pretrained_cfg' in text
    roles = {Path(f["source"]).name: f["role"] for f in tomllib.loads(text)["files"]}
    assert roles == {"config.json": "config", "model.safetensors": "weights", "LICENSE": "license"}
    front = front_matter(card)
    assert front["library_name"] == "timm"
    assert front["pipeline_tag"] == "image-classification"
    assert "a test_convnext model (timm), weights in 1 safetensors file." in card
    assert "| Architecture | `test_convnext` |" in card
    assert "| Classes | 10 |" in card
    assert "| Input size | 3 × 160 × 160 |" in card
    assert "| Parameters | " in card
    assert "tench, English springer, cassette player" in card
    assert f'timm.create_model("hf-hub:{REPO}@v1", pretrained=True)' in card
    assert "transformers" not in card.split("## How to use this version")[1].split("## ")[0].lower()
    assert "AutoModel" not in card and "from_pretrained" not in card


def test_num_classes_disagreeing_with_the_head_is_refused_in_one_line_naming_config_json(tmp_path: Path) -> None:
    files = folder(tmp_path, "timm")
    config = json.loads((files / "config.json").read_text("utf-8"))
    config["num_classes"] = config["model_args"]["num_classes"] = config["pretrained_cfg"]["num_classes"] = 12
    config["label_names"] = config["label_names"] + ["extra-1", "extra-2"]
    (files / "config.json").write_text(json.dumps(config, indent=2))
    problems = refusal(tmp_path, files, REPO)
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        "config.json: num_classes is 12, but the classifier 'head.fc.weight' in model.safetensors is [10, 64]"
    )
    assert "\n" not in problems[0]


def test_safetensors_without_metadata_format_is_still_refused_for_transformers(tmp_path: Path) -> None:
    """The format 'pt' rule is the transformers kind's: timm's weights named transformers in the spec are refused."""
    files = folder(tmp_path, "timm")
    spec = init_from_files(tmp_path, "v1", files, REPO).spec
    text = spec.read_text("utf-8")
    detected = next(line for line in text.splitlines() if line.startswith('# kind = "timm"'))
    spec.write_text(text.replace(detected, 'kind = "transformers"'))
    with pytest.raises(CheckFailed) as failed:
        build(load_spec(spec), tmp_path / "dist")
    lines = [f"{p.file}: {p.message}" for p in failed.value.problems]
    assert any("__metadata__.format is None; transformers expects 'pt'" in line for line in lines), lines


def test_a_pickle_beside_the_safetensors_is_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = folder(tmp_path, "timm")
    (files / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    with caplog.at_level(logging.WARNING):
        _, card = built_card(tmp_path, files, REPO)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        w.startswith("warning: pytorch_model.bin: a pickle shipped beside model.safetensors") for w in warnings
    ), warnings
    assert front_matter(card)["library_name"] == "timm"


def test_only_architecture_with_pretrained_cfg_shows_timm() -> None:
    """timm's config.json holds both; a config with only one of them stays the transformers default's to refuse."""
    from release.kinds import detect_kind

    assert detect_kind({"architecture": "resnet50", "pretrained_cfg": {}})[0].name == "timm"
    assert detect_kind({"architecture": "resnet50"})[0].name == "transformers"
    assert detect_kind({"architectures": ["LlamaForCausalLM"], "pretrained_cfg": {}})[0].name == "transformers"


def test_label_names_are_shown_only_when_few(tmp_path: Path) -> None:
    """ImageNet's 1,000 names would swamp the facts table: the card shows the count only."""
    from release.kinds.timm_model import facts_rows
    from release.kinds.timm_model.reader import read_timm_model

    files = folder(tmp_path, "timm")
    facts, problems = read_timm_model({p.name: p for p in files.iterdir()})
    assert facts is not None and not problems, problems
    assert "Labels" in dict(facts_rows(facts))
    many = dataclasses.replace(facts, num_classes=1000, label_names=tuple(f"c{i}" for i in range(1000)))
    rows = dict(facts_rows(many))
    assert "Labels" not in rows and rows["Classes"] == "1,000"
