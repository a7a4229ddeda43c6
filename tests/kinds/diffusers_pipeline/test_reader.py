"""release/kinds/diffusers_pipeline/reader.py on the folder StableDiffusionPipeline.save_pretrained wrote (UNet, VAE,
CLIP text
encoder, CLIPTokenizer, DDIMScheduler) and damaged copies; with diffusers installed, the facts against the loaded
pipeline and the tag table against diffusers' own text-to-image / image-to-image / inpainting tables."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from release.kinds.diffusers_pipeline.reader import pipeline_tag_for, read_diffusers_pipeline
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files
from tests.helpers import edit_json

SD = FIXTURES / "diffusers-sd"


def read_pipeline(folder: Path, prefix: str = "") -> Any:
    return read_diffusers_pipeline(release_files(folder, prefix), prefix)


def test_the_fixture_reads_with_facts_per_component() -> None:
    facts, problems = read_pipeline(SD)
    assert problems == [] and facts is not None
    assert (facts.pipeline_class, facts.diffusers_version, facts.pipeline_tag) == (
        "StableDiffusionPipeline",
        "0.42.1",
        "text-to-image",
    )
    assert facts.absent == ("feature_extractor", "image_encoder", "safety_checker")
    by_name = {c.name: c for c in facts.components}
    assert {n: (c.library, c.class_name, c.role) for n, c in by_name.items()} == {
        "scheduler": ("diffusers", "DDIMScheduler", "scheduler"),
        "text_encoder": ("transformers", "CLIPTextModel", "model"),
        "tokenizer": ("transformers", "CLIPTokenizer", "tokenizer"),
        "unet": ("diffusers", "UNet2DConditionModel", "model"),
        "vae": ("diffusers", "AutoencoderKL", "model"),
    }
    assert {n: c.parameter_count for n, c in by_name.items() if c.role == "model"} == {
        "text_encoder": 42_304,
        "unet": 18_464,
        "vae": 11_827,
    }
    assert facts.parameter_count == 42_304 + 18_464 + 11_827 and by_name["unet"].dtype == "F32"
    assert by_name["scheduler"].config_file == "scheduler/scheduler_config.json"
    assert by_name["unet"].weight_files == ("unet/diffusion_pytorch_model.safetensors",)


def test_a_pipeline_in_a_subfolder_names_its_files_by_their_repo_paths() -> None:
    facts, problems = read_pipeline(SD, "pipeline")
    assert problems == [] and facts is not None
    assert {c.name: c.config_file for c in facts.components}["vae"] == "pipeline/vae/config.json"


def test_a_model_index_naming_a_missing_folder_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    edit_json(folder / "model_index.json", controlnet=["diffusers", "ControlNetModel"])
    _, problems = read_pipeline(folder)
    only_problem(
        problems,
        "controlnet/",
        "model_index.json names component 'controlnet' (diffusers ControlNetModel)",
        "set 'controlnet' to [null, null]",
    )


def test_a_component_without_weights_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    (folder / "vae" / "diffusion_pytorch_model.safetensors").unlink()
    _, problems = read_pipeline(folder)
    only_problem(
        problems,
        "vae/diffusion_pytorch_model.safetensors",
        "vae/ has no weights for its AutoencoderKL",
        "diffusers' save_pretrained",
    )


def test_a_variant_is_weights_and_a_pickle_is_named(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    (folder / "vae" / "diffusion_pytorch_model.safetensors").rename(
        folder / "vae" / "diffusion_pytorch_model.fp16.safetensors"
    )
    facts, problems = read_pipeline(folder)
    assert problems == [] and {c.name: c.variant for c in facts.components}["vae"] == "fp16"
    (folder / "vae" / "diffusion_pytorch_model.fp16.safetensors").rename(folder / "vae" / "diffusion_pytorch_model.bin")
    _, problems = read_pipeline(folder)
    only_problem(problems, "vae/diffusion_pytorch_model.safetensors", "only a pickle .bin")


def test_each_components_config_is_checked(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    edit_json(folder / "unet" / "config.json", _class_name="AutoencoderKL")
    (folder / "scheduler" / "scheduler_config.json").unlink()
    (folder / "tokenizer" / "tokenizer.json").unlink()
    _, problems = read_pipeline(folder)
    assert sorted(p.file for p in problems) == [
        "scheduler/",
        "tokenizer/tokenizer.json",
        "unet/config.json",
    ]  # scheduler/ is empty now
    messages = {p.file: p.message for p in problems}
    assert (
        "has _class_name 'AutoencoderKL', but model_index.json names 'unet' a UNet2DConditionModel"
        in messages["unet/config.json"]
    )
    assert "transformers' CLIPTokenizer has no vocabulary" in messages["tokenizer/tokenizer.json"]


def test_the_text_encoder_is_checked_as_a_transformers_model(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    edit_json(folder / "text_encoder" / "config.json", num_hidden_layers=3)
    _, problems = read_pipeline(folder)
    only_problem(problems, "text_encoder/config.json", "num_hidden_layers is 3", "holds layers 0–1 (encoder.layers.N.)")


def test_a_broken_model_index_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-sd", tmp_path)
    edit_json(folder / "model_index.json", unet=["diffusers"])
    only_problem(read_pipeline(folder)[1], "model_index.json", "component 'unet' is ['diffusers']", "[library, class]")
    edit_json(folder / "model_index.json", _class_name=None)
    only_problem(read_pipeline(folder)[1], "model_index.json", "has no _class_name")
    assert read_diffusers_pipeline({})[1][0].message.startswith("is missing")


@pytest.mark.parametrize(
    ("pipeline", "tag"),
    [
        ("StableDiffusionPipeline", "text-to-image"),
        ("StableDiffusionXLPipeline", "text-to-image"),
        ("FluxPipeline", "text-to-image"),
        ("PixArtSigmaPipeline", "text-to-image"),
        ("StableDiffusionImg2ImgPipeline", "image-to-image"),
        ("StableDiffusionInpaintPipeline", "image-to-image"),
        ("DDPMPipeline", "unconditional-image-generation"),
        ("StableVideoDiffusionPipeline", "image-to-video"),
        ("WanPipeline", "text-to-video"),
        ("AudioLDM2Pipeline", "text-to-audio"),
        ("MyOwnPipeline", None),
    ],
)
def test_the_pipeline_tag_comes_from_the_pipeline_class(pipeline: str, tag: str | None) -> None:
    assert pipeline_tag_for(pipeline) == tag


@pytest.mark.parametrize("fixture", ["diffusers-sd"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_diffusers_pipeline, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with diffusers ---


def test_diffusers_loads_the_pipeline_with_the_components_and_parameters_read_here() -> None:
    diffusers = pytest.importorskip("diffusers")
    pipe = diffusers.DiffusionPipeline.from_pretrained(SD)
    facts, _ = read_pipeline(SD)
    assert type(pipe).__name__ == facts.pipeline_class
    for component in facts.components:
        loaded = getattr(pipe, component.name)
        assert type(loaded).__name__ == component.class_name
        if component.role == "model":
            assert sum(p.numel() for p in loaded.parameters()) == component.parameter_count
    for name in facts.absent:
        assert getattr(pipe, name) is None


def test_diffusers_fails_on_a_missing_folder_and_missing_weights_too(tmp_path: Path) -> None:
    diffusers = pytest.importorskip("diffusers")
    folder = copy_fixture("diffusers-sd", tmp_path)
    (folder / "vae" / "diffusion_pytorch_model.safetensors").unlink()
    with pytest.raises(OSError, match="diffusion_pytorch_model"):
        diffusers.DiffusionPipeline.from_pretrained(folder)
    shutil.rmtree(folder / "vae")
    with pytest.raises((OSError, ValueError)):
        diffusers.DiffusionPipeline.from_pretrained(folder)


def test_the_tag_table_agrees_with_diffusers_task_tables() -> None:
    pytest.importorskip("diffusers")
    from diffusers.pipelines import auto_pipeline as auto

    tables = {
        "text-to-image": auto.AUTO_TEXT2IMAGE_PIPELINES_MAPPING,
        "image-to-image": auto.AUTO_IMAGE2IMAGE_PIPELINES_MAPPING,
        "inpainting": auto.AUTO_INPAINT_PIPELINES_MAPPING,
    }
    tasks: dict[str, set[str]] = {}  # a class may be in several tables (Flux2 does both)
    for task, table in tables.items():
        for cls in table.values():
            tasks.setdefault(cls.__name__, set()).add("image-to-image" if task == "inpainting" else task)
    # Where the Hub's tag is not the AutoPipeline table diffusers lists the class in:
    hub = {
        "FluxKontextPipeline": "image-to-image",  # black-forest-labs/FLUX.1-Kontext-dev is tagged image-to-image
        "ZImageControlNetInpaintPipeline": "image-to-image",
    }  # an inpainting pipeline, listed under text-to-image
    wrong = [
        (name, sorted(allowed), pipeline_tag_for(name))
        for name, allowed in sorted(tasks.items())
        if pipeline_tag_for(name) not in allowed and pipeline_tag_for(name) != hub.get(name)
    ]
    assert wrong == [] and len(tasks) > 90
