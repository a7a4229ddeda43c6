"""The diffusers-lora kind, on the folder diffusers' LoRA training scripts leave (tests/fixtures/libraries/diffusers-
lora: save_lora_weights' pytorch_lora_weights.safetensors and the script's README.md, written by diffusers' own
card functions): `init --files` → `build` gives a diffusers adapter card on its base pipeline, the script's README
is read for its metadata and never published, and a breakage is refused in one line naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from safetensors.numpy import load_file, save_file

from release.builder import build
from release.errors import InputError
from release.init import init_from_files
from release.spec import load_spec
from tests.kinds.test_library_kinds import built_card, folder, front_matter, refusal

REPO = "test-org/tiny-sd-lora"
BASE = "hf-release-test/tiny-sd"
TO_K = "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_k"


def test_a_diffusers_lora_builds_without_edits_as_an_adapter_of_its_base_pipeline(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "diffusers-lora"), REPO)
    text = spec.read_text("utf-8")
    written = tomllib.loads(text)
    assert 'kind = "diffusers-lora"  # detected: the release holds pytorch_lora_weights.safetensors' in text
    roles = {Path(f["source"]).name: f["role"] for f in written["files"]}
    assert roles == {"pytorch_lora_weights.safetensors": "lora-weights", "LICENSE": "license"}
    # the script's README.md: left out (hf-release writes the card), its front matter carried into the spec
    assert "# Left out: README.md — hf-release generates it" in text
    assert written["card"]["metadata"]["base_model"] == BASE
    assert "LoRA text2image fine-tuning" not in card and "TODO" not in card
    meta = front_matter(card)
    assert (meta["library_name"], meta["pipeline_tag"]) == ("diffusers", "text-to-image")
    assert (meta["base_model"], meta["base_model_relation"]) == (BASE, "adapter")
    assert {"lora", "diffusers", "text-to-image"} <= set(meta["tags"])
    for row in (
        "| Method | LoRA |",
        f"| Base pipeline | {BASE} |",
        "| Rank | 2 |",
        "| Adapted layers of `unet` | 32 (`to_k`, `to_out.0`, `to_q`, `to_v`) |",
        "| Parameters | 1,408 (1.41 K) |",
    ):
        assert row in card, row
    assert (
        "from diffusers import DiffusionPipeline\n\n"
        f'pipe = DiffusionPipeline.from_pretrained("{BASE}")\n'
        f'pipe.load_lora_weights("{REPO}", weight_name="pytorch_lora_weights.safetensors", revision="v1")\n'
        'image = pipe("a photo of an astronaut riding a horse on the moon").images[0]\n'
    ) in card
    assert "from transformers" not in card and "a model (transformers)" not in text


def test_without_the_scripts_readme_its_tags_are_the_kinds(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-lora")
    (files / "README.md").unlink()
    spec = init_from_files(tmp_path, "v1", files, REPO).spec
    spec.write_text(spec.read_text("utf-8") + f'\n[card.metadata]\nbase_model = "{BASE}"\n')
    card = (build(load_spec(spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    meta = front_matter(card)
    assert meta["tags"] == ["lora", "diffusers", "text-to-image"] and meta["base_model"] == BASE


def test_the_base_revision_pins_the_base_pipeline(tmp_path: Path) -> None:
    spec = init_from_files(tmp_path, "v1", folder(tmp_path, "diffusers-lora"), REPO).spec
    spec.write_text(
        spec.read_text("utf-8").replace(
            "\n[card.metadata]\n", '\n[card.usage]\nbase_revision = "v1"\n\n[card.metadata]\n'
        )
    )
    card = (build(load_spec(spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    assert f'pipe = DiffusionPipeline.from_pretrained("{BASE}", revision="v1")' in card


def test_a_lora_without_its_base_is_asked_for_in_the_spec(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-lora")
    (files / "README.md").unlink()
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith("pytorch_lora_weights.safetensors: pytorch_lora_weights.safetensors names no base pipeline")
    assert '[card.metadata] base_model = "ORG/NAME"' in line


def test_a_base_that_is_a_local_path_is_refused(tmp_path: Path) -> None:
    """--pretrained_model_name_or_path may be a local folder, which the script writes as base_model."""
    files = folder(tmp_path, "diffusers-lora")
    readme = files / "README.md"
    readme.write_text(readme.read_text().replace(f"base_model: {BASE}", "base_model: /data/sd-v1-5"))
    spec = init_from_files(tmp_path, "v1", files, REPO).spec
    with pytest.raises(InputError) as refused:  # the spec's own rule: base_model is a Hub id
        load_spec(spec)
    assert "card.metadata.base_model: '/data/sd-v1-5' is not valid" in str(refused.value)


def test_a_lora_missing_half_a_pair_is_refused_in_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "diffusers-lora")
    weights = files / "pytorch_lora_weights.safetensors"
    tensors = {k: v for k, v in load_file(weights).items() if k != f"{TO_K}.lora.down.weight"}
    save_file(tensors, weights, metadata={"format": "pt"})
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(f"pytorch_lora_weights.safetensors: module '{TO_K}' has no down (lora_A) half")
