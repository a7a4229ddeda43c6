"""release/kinds/diffusers_lora/reader.py on the LoRA diffusers' save_lora_weights wrote (tests/fixtures/libraries/
diffusers-lora: rank 2 on the tiny UNet's to_q/to_k/to_v/to_out.0), and copies damaged through the safetensors
library: each damage is one line naming the file, in diffusers' terms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

from release.kinds.diffusers_lora.reader import WEIGHTS, read_diffusers_lora, target_name
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files

TO_K = "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_k"


def lora(tmp_path: Path, drop: tuple[str, ...] = (), add: dict[str, Any] | None = None) -> Path:
    """A copy of the fixture with tensors dropped or added (replaced), written again by the safetensors library."""
    folder = copy_fixture("diffusers-lora", tmp_path)
    weights = folder / WEIGHTS
    tensors = {k: v for k, v in load_file(weights).items() if k not in drop}
    save_file({**tensors, **(add or {})}, weights, metadata={"format": "pt"})
    return folder


def read_lora(folder: Path) -> Any:
    return read_diffusers_lora(release_files(folder))


def test_the_fixture_reads_as_a_rank_2_lora_of_the_unet() -> None:
    facts, problems = read_lora(FIXTURES / "diffusers-lora")
    assert problems == [] and facts is not None
    assert facts.ranks == (2,) and dict(facts.layers) == {"unet": 32}
    assert facts.targets["unet"] == ("to_k", "to_out.0", "to_q", "to_v")
    assert facts.namings == ("lora.down/lora.up (diffusers)",) and facts.dtype == "F32"
    # 4 transformer blocks × (attn1, attn2) × 4 projections; a down [2, in] and an up [out, 2]: in 8 (32 for
    # attn2's to_k/to_v, which read the text encoder's hidden states), out 8
    assert facts.parameters == 4 * 4 * (2 * 8 + 8 * 2) + 4 * (2 * (2 * 8 + 8 * 2) + 2 * (2 * 32 + 8 * 2)) == 1408


def test_peft_naming_reads_alike(tmp_path: Path) -> None:
    """lora_A/lora_B, the naming PEFT's state dict and diffusers' newer scripts save, is diffusers' too."""
    folder = copy_fixture("diffusers-lora", tmp_path)
    tensors = load_file(folder / WEIGHTS)
    renamed = {k.replace(".lora.down.", ".lora_A.").replace(".lora.up.", ".lora_B."): v for k, v in tensors.items()}
    save_file(renamed, folder / WEIGHTS, metadata={"format": "pt"})
    facts, problems = read_lora(folder)
    assert problems == [] and facts is not None and facts.namings == ("lora_A/lora_B (PEFT)",)
    assert facts.parameters == read_lora(FIXTURES / "diffusers-lora")[0].parameters


def test_a_missing_half_is_one_line(tmp_path: Path) -> None:
    _, problems = read_lora(lora(tmp_path, drop=(f"{TO_K}.lora.up.weight",)))
    only_problem(problems, WEIGHTS, f"module '{TO_K}' has no up (lora_B) half (1 such modules)", "save_lora_weights")


def test_halves_of_different_ranks_are_one_line(tmp_path: Path) -> None:
    up = np.zeros((8, 4), dtype=np.float32)  # rank 4, while its down half is rank 2
    _, problems = read_lora(lora(tmp_path, add={f"{TO_K}.lora.up.weight": up}))
    only_problem(
        problems,
        WEIGHTS,
        f"module '{TO_K}' (1 such) has a down half [2, 8] of rank 2 but an up half [8, 4] of rank 4",
        "diffusers takes the rank from the down half",
    )


def test_a_1d_half_is_one_line(tmp_path: Path) -> None:
    _, problems = read_lora(lora(tmp_path, add={f"{TO_K}.lora.down.weight": np.zeros(16, dtype=np.float32)}))
    only_problem(problems, WEIGHTS, f"module '{TO_K}' (1 such) has a down half [16]", "at least 2-D")


def test_a_key_that_is_no_diffusers_lora_key_is_one_line(tmp_path: Path) -> None:
    """A kohya-style key (lora_unet_…), or PEFT's own base_model.model. prefix: not what load_lora_weights reads as
    diffusers' format."""
    stray = {"lora_unet_down_blocks_1_attentions_0_proj_in.lora_down.weight": np.zeros((2, 8), dtype=np.float32)}
    _, problems = read_lora(lora(tmp_path, add=stray))
    only_problem(problems, WEIGHTS, "holds 'lora_unet_down_blocks_1_attentions_0_proj_in.lora_down.weight'", "unet")


def test_network_alphas_ride_along(tmp_path: Path) -> None:
    facts, problems = read_lora(lora(tmp_path, add={f"{TO_K}.alpha": np.array(2.0, dtype=np.float32)}))
    assert problems == [] and facts is not None and facts.layers == {"unet": 32}


def test_only_the_pickle_is_named(tmp_path: Path) -> None:
    folder = copy_fixture("diffusers-lora", tmp_path)
    (folder / WEIGHTS).rename(folder / "pytorch_lora_weights.bin")
    _, problems = read_lora(folder)
    only_problem(problems, WEIGHTS, "is missing (only the pickle pytorch_lora_weights.bin is shipped")


def test_target_names_keep_a_sequential_index() -> None:
    assert target_name("down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_out.0") == "to_out.0"
    assert target_name("mid_block.attentions.0.transformer_blocks.0.attn2.to_q") == "to_q"


def test_every_damaged_copy_is_one_line_or_read(tmp_path: Path) -> None:
    assert damage_every_file(tmp_path, "diffusers-lora", read_diffusers_lora) > 0
