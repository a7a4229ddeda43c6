"""The hub-mixin kind, on the folder huggingface_hub's own PyTorchModelHubMixin.save_pretrained wrote
(tests/fixtures/libraries/hub-mixin/: config.json = TinyNet's constructor arguments, model.safetensors without
`__metadata__`, the mixin's README.md): init detects it and leaves the class as a marked placeholder, build renders
the card from the files with no transformers rule, and a release without weights is refused in one line."""

from __future__ import annotations

import json
import logging
import tomllib
from pathlib import Path

import pytest

from release.builder import build
from release.init import init_from_files
from release.kinds import detect_kind
from release.spec import load_spec
from release.spec.placeholders import kind_placeholders, placeholder_message, placeholders
from tests.helpers import edit, write_summary
from tests.kinds.test_library_kinds import folder, front_matter

REPO = "test-org/tinynet"
PLACEHOLDER = 'model_class = "your_module.YourModelClass"'
CODE = "https://github.com/hf-release-test/tinynet"


def init(tmp_path: Path, files: Path) -> Path:
    return init_from_files(tmp_path, "v1", files, REPO).spec


def built(tmp_path: Path, spec: Path) -> tuple[str, dict]:
    dist = build(load_spec(spec), tmp_path / "dist").dist
    return (dist / "README.md").read_text("utf-8"), json.loads((dist / "release.json").read_text("utf-8"))


def test_init_detects_the_mixin_reads_its_readme_and_leaves_the_class_as_a_placeholder(tmp_path: Path) -> None:
    text = init(tmp_path, folder(tmp_path, "hub-mixin")).read_text("utf-8")
    assert '# kind = "hub-mixin"  # detected: config.json has no architectures/model_type' in text
    written = tomllib.loads(text)
    roles = {Path(f["source"]).name: f["role"] for f in written["files"]}
    assert roles == {"config.json": "config", "model.safetensors": "weights", "LICENSE": "license"}  # no README.md
    assert "# Left out: README.md" in text
    card = written["card"]
    assert card["metadata"] == {
        "library_name": "tinynet",
        "tags": ["image-classification", "model_hub_mixin", "pytorch_model_hub_mixin", "tiny"],
    }
    assert card["usage"]["code_url"] == CODE  # the README's "- Code:" line: the class's repo_url
    assert f"{PLACEHOLDER} # placeholder: the mixin does not write the class" in text
    assert card["summary"] == "tinynet: a PyTorchModelHubMixin model (hub-mixin), weights in 1 safetensors file."


def test_the_card_loads_the_named_class_from_the_hub_at_this_version(tmp_path: Path) -> None:
    spec = init(tmp_path, folder(tmp_path, "hub-mixin"))
    write_summary(spec)
    edit(spec, PLACEHOLDER, 'model_class = "tinynet.model.TinyNet"')
    card, manifest = built(tmp_path, spec)
    front = front_matter(card)
    assert front["library_name"] == "tinynet"
    assert "model_hub_mixin" in front["tags"] and "pytorch_model_hub_mixin" in front["tags"]
    assert "pipeline_tag" not in front
    for row in (
        "| Class | `tinynet.model.TinyNet` |",
        "| Argument `dropout` | `0.1` |",
        "| Argument `hidden` | `16` |",
        "| Argument `in_features` | `8` |",
        "| Argument `num_classes` | `3` |",
        "| Parameters | 195 |",  # 16×8 + 16 + 3×16 + 3
        "| Tensors | 4 |",
        "| Tensor dtype | F32 |",
    ):
        assert row in card, row
    assert (
        f'```python\nfrom tinynet.model import TinyNet\n\nmodel = TinyNet.from_pretrained("{REPO}", revision="v1")\n```'
    ) in card
    assert f"(its code: [`{CODE}`]({CODE}))" in card
    usage = card.split("## How to use this version")[1].split("\n## ")[0]
    assert "transformers" not in usage and "AutoModel" not in usage
    assert "This model has been pushed to the Hub using" not in card  # the mixin's README is not the card
    assert {f["path_in_repo"]: f["role"] for f in manifest["files"]}["README.md"] == "card"  # hf-release's card
    assert manifest["card"]["kind"] == "hub-mixin" and "placeholders" not in manifest["card"]


def test_the_class_placeholder_is_rendered_warned_and_recorded_for_push_to_refuse(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = init(tmp_path, folder(tmp_path, "hub-mixin"))
    write_summary(spec)
    with caplog.at_level(logging.WARNING):
        card, manifest = built(tmp_path, spec)
    assert manifest["card"]["placeholders"] == ["usage.model_class"]  # what push's no-placeholder step reads
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "[card] usage.model_class is still init's placeholder ('your_module.YourModelClass')" in w for w in warnings
    )
    assert "from your_module import YourModelClass" in card  # the author sees the card it makes
    message = placeholder_message("usage.model_class", kind_placeholders("hub-mixin"))
    assert "give the import path of the model's class (module.Class" in message
    assert placeholders({"usage": {"model_class": "tinynet.TinyNet"}}, kind_placeholders("hub-mixin")) == ()


def test_a_release_without_weights_is_refused_in_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "hub-mixin")
    (files / "model.safetensors").unlink()
    spec = init(tmp_path, files)
    text = spec.read_text("utf-8")
    # without model.safetensors only the README's tag shows the mixin: build never sees it, so init names the kind
    assert 'kind = "hub-mixin" # detected: the library\'s README.md is tagged model_hub_mixin' in text
    edit(spec, PLACEHOLDER, 'model_class = "tinynet.TinyNet"')
    from release.errors import CheckFailed

    with pytest.raises(CheckFailed) as failed:
        build(load_spec(spec), tmp_path / "dist")
    problems = [f"{p.file}: {p.message}" for p in failed.value.problems]
    assert len(problems) == 1, problems
    assert problems[0].startswith("model.safetensors: is missing: a release without weights; ")
    assert "PyTorchModelHubMixin.from_pretrained loads the weights from model.safetensors" in problems[0]


def test_a_constructor_argument_named_model_type_is_still_the_mixin_by_its_readme(tmp_path: Path) -> None:
    """A mixin class may well take `model_type`: config.json no longer tells, the README's tag does (and init
    writes the kind into the spec, which build follows)."""
    files = folder(tmp_path, "hub-mixin")
    config = json.loads((files / "config.json").read_text("utf-8"))
    (files / "config.json").write_text(json.dumps({**config, "model_type": "small"}))
    spec = init(tmp_path, files)
    assert tomllib.loads(spec.read_text("utf-8"))["release"]["kind"] == "hub-mixin"
    write_summary(spec)
    edit(spec, PLACEHOLDER, 'model_class = "tinynet.TinyNet"')
    card, _ = built(tmp_path, spec)
    assert '| Argument `model_type` | `"small"` |' in card


def test_a_sharded_checkpoint_is_refused_as_the_mixin_loads_one_file(tmp_path: Path) -> None:
    files = folder(tmp_path, "hub-mixin")
    (files / "model.safetensors").rename(files / "model-00001-of-00001.safetensors")
    (files / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": {"head.bias": "model-00001-of-00001.safetensors"}})
    )
    spec = init(tmp_path, files)
    edit(spec, PLACEHOLDER, 'model_class = "tinynet.TinyNet"')
    problems = refusal_of(tmp_path, spec)
    assert any(
        p.startswith("model.safetensors.index.json: is a sharded checkpoint; PyTorchModelHubMixin.from_pretrained")
        for p in problems
    ), problems


def refusal_of(tmp_path: Path, spec: Path) -> list[str]:
    from release.errors import CheckFailed

    with pytest.raises(CheckFailed) as failed:
        build(load_spec(spec), tmp_path / "dist")
    return [f"{p.file}: {p.message}" for p in failed.value.problems]


def test_detection_needs_the_mixins_config_beside_model_safetensors() -> None:
    mixin = {"hidden": 16, "num_classes": 3}
    assert detect_kind(mixin, ["config.json", "model.safetensors"])[0].name == "hub-mixin"
    assert detect_kind(mixin, ["config.json"])[0].name == "transformers"  # no weights: nothing shows the mixin
    for key in ("architectures", "model_type", "transformers_version", "_class_name"):
        assert detect_kind({**mixin, key: "x"}, ["config.json", "model.safetensors"])[0].name == "transformers", key
    timm = {"architecture": "resnet50", "pretrained_cfg": {}}
    assert detect_kind(timm, ["config.json", "model.safetensors"])[0].name == "timm"
    assert detect_kind(mixin, ["config.json", "model.safetensors"], ["model_hub_mixin"])[0].name == "hub-mixin"
    assert detect_kind({"model_type": "x"}, ["config.json"], ["model_hub_mixin"])[0].name == "hub-mixin"
