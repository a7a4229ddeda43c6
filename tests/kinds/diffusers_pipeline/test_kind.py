"""The diffusers-pipeline kind, on the folder diffusers' own save_pretrained wrote (tests/fixtures/libraries/diffusers-
sd):
`init --files` → `build` with no edit gives the card the Hub expects of a diffusers repo, and each corruption is
refused in one line naming the file, in diffusers' terms."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tests.kinds.test_library_kinds import built_card, folder, front_matter, refusal

REPO = "test-org/tiny-sd"


def test_a_diffusers_pipeline_builds_without_edits_with_its_components(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "diffusers-sd"), REPO)
    text = spec.read_text("utf-8")
    assert 'kind = "diffusers-pipeline"  # detected: the release holds model_index.json' in text
    roles = {f.get("path_in_repo", Path(f["source"]).name): f["role"] for f in tomllib.loads(text)["files"]}
    assert roles["model_index.json"] == "pipeline-index" and roles["LICENSE"] == "license"
    components = {k: v for k, v in roles.items() if "/" in k}
    assert len(components) == 9 and set(components.values()) == {"component"}  # no "N files have role 'config'"
    assert (
        tomllib.loads(text)["card"]["summary"] == "tiny-sd: a diffusers StableDiffusionPipeline (diffusers-pipeline)."
    )
    meta = front_matter(card)
    assert meta["library_name"] == "diffusers" and meta["pipeline_tag"] == "text-to-image"
    assert "| Pipeline | `StableDiffusionPipeline` |" in card
    for row in (
        "| Component `unet` | diffusers UNet2DConditionModel, ",
        "| Component `vae` | diffusers AutoencoderKL, ",
        "| Component `text_encoder` | transformers CLIPTextModel, ",
        "| Component `scheduler` | diffusers DDIMScheduler |",
        "| Component `tokenizer` | transformers CLIPTokenizer |",
        "| Parameters, the 3 model components together | ",
        "| Not included (optional) | `feature_extractor`, `image_encoder`, `safety_checker` |",
    ):
        assert row in card, row
    assert "a CLIPTextModel model" not in card
    assert (
        f'from diffusers import DiffusionPipeline\n\npipe = DiffusionPipeline.from_pretrained("{REPO}", revision="v1")'
    ) in card
    assert "from transformers" not in card and "AutoModel" not in card  # nothing of the transformers snippet


def test_a_component_folder_model_index_names_but_the_release_lacks_is_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-sd")
    index = json.loads((files / "model_index.json").read_text())
    index["safety_checker"] = ["stable_diffusion", "StableDiffusionSafetyChecker"]
    (files / "model_index.json").write_text(json.dumps(index))
    problems = refusal(tmp_path, files, REPO)
    assert len(problems) == 1, problems
    assert problems[0].startswith("safety_checker/: is missing: model_index.json names component 'safety_checker'")


def test_a_component_without_weights_is_one_line_naming_the_file(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-sd")
    (files / "unet" / "diffusion_pytorch_model.safetensors").unlink()
    problems = refusal(tmp_path, files, REPO)
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        "unet/diffusion_pytorch_model.safetensors: is missing: unet/ has no weights for its "
        "UNet2DConditionModel; save the pipeline again with diffusers' save_pretrained"
    )


def test_a_transformers_component_without_weights_is_worded_for_diffusers(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-sd")
    (files / "text_encoder" / "model.safetensors").unlink()
    problems = refusal(tmp_path, files, REPO)
    assert problems and all("text_encoder/" in p for p in problems), problems
    assert not any("transformers' save_pretrained" in p for p in problems), problems
    assert any("diffusers' save_pretrained" in p for p in problems), problems


def test_only_a_model_index_at_the_root_shows_a_pipeline_and_only_its_named_folders_are_components(
    tmp_path: Path,
) -> None:
    from release.init.detect import scan
    from release.kinds import detect_kind

    assert detect_kind(None, ["model_index.json", "unet/config.json"])[0].name == "diffusers-pipeline"
    assert detect_kind(None, ["sd/model_index.json"])[0].name == "transformers"
    (tmp_path / "unet").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "model_index.json").write_text(
        json.dumps(
            {
                "_class_name": "StableDiffusionPipeline",
                "unet": ["diffusers", "UNet2DConditionModel"],
                "safety_checker": [None, None],
            }
        )
    )
    for name in ("unet/config.json", "notes/config.json"):
        (tmp_path / name).write_text("{}")
    roles = {d.path.relative_to(tmp_path).as_posix(): d.role for d in scan(tmp_path)}
    assert roles == {
        "model_index.json": "pipeline-index",
        "unet/config.json": "component",
        "notes/config.json": "config",
    }
