"""The diffusers-lora kind: a text-to-image LoRA as diffusers' LoRA training scripts leave it
(examples/text_to_image/train_text_to_image_lora.py, examples/dreambooth/train_dreambooth_lora.py):
`pytorch_lora_weights.safetensors`, written by `save_lora_weights`, and the script's README.md.

Checks are the reader's (release/kinds/diffusers_lora/reader.py): diffusers LoRA keys, both halves of each pair,
of one rank. The file names no base pipeline: the base is the spec's [card.metadata] base_model, which init carries
from the script's README.md front matter (the README itself is left out: hf-release writes the card); without a Hub
id there, build asks for it (release/kinds/adapter_base.py, as the peft-adapter kind does). The card: the LoRA's
facts (rank, the components and how many layers of each it adapts, parameters), `library_name: diffusers`,
`base_model` with `base_model_relation: adapter`, `pipeline_tag: text-to-image` for a UNet's LoRA (diffusers' UNet LoRA
loaders are Stable Diffusion's and SDXL's, text-to-image pipelines; a DiT `transformer` LoRA's task is its base's,
which the file does not say), and usage: the base pipeline at [card.usage] base_revision, `load_lora_weights` of this
repo at this version, and a generation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds import diffusers_pipeline
from release.kinds.adapter_base import base_needed, base_revision, given_base, is_hub_id, revision_argument
from release.kinds.diffusers_lora.reader import WEIGHTS, LoraFacts, read_diffusers_lora
from release.kinds.kind import Kind, LoadProof
from release.kinds.own_files import card_part, short
from release.spec import ReleaseSpec

PROMPT = "a photo of an astronaut riding a horse on the moon"


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[LoraFacts | None, list[Problem]]:
    """The LoRA at the repo's root, read and checked; its base pipeline must be a Hub id the spec gives."""
    facts, problems = read_diffusers_lora(files)
    base = given_base(card)
    if not (isinstance(base, str) and is_hub_id(base)):
        what = f"the spec's base_model is {base!r}, not a Hub id" if base else f"{WEIGHTS} names no base pipeline"
        problems.append(base_needed(WEIGHTS, what + " (the training script's README.md gives it as base_model)"))
        return facts, problems
    return (replace(facts, base_model=base) if facts is not None else None), problems


def _text_to_image(facts: LoraFacts) -> bool:
    return "unet" in facts.layers


def facts_rows(facts: LoraFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    rows = [("Method", "LoRA")]
    if facts.base_model:
        rows.append(("Base pipeline", cell(facts.base_model)))
    low, high = facts.ranks[0], facts.ranks[-1]
    rows.append(("Rank", f"{low:,}" if low == high else f"{low:,} to {high:,} (by module)"))
    for component, count in facts.layers.items():
        names = ", ".join(code(t) for t in facts.targets[component])
        rows.append((f"Adapted layers of {code(component)}", f"{count:,} ({names})"))
    rows.append(("Parameters", short(facts.parameters)))
    if facts.dtype:
        rows.append(("Tensor dtype", cell(facts.dtype)))
    rows.append(("Key naming", cell(", ".join(facts.namings))))
    return rows


def metadata(facts: LoraFacts) -> dict[str, Any]:
    out: dict[str, Any] = {"library_name": "diffusers"}
    if _text_to_image(facts):
        out["pipeline_tag"] = "text-to-image"
    if facts.base_model:
        out["base_model"] = facts.base_model
    out["base_model_relation"] = "adapter"
    out["tags"] = ["lora", "diffusers"] + (["text-to-image"] if _text_to_image(facts) else [])
    return out


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """The base pipeline at its pinned revision, this LoRA loaded on it at this version, and a generation."""
    read: LoraFacts | None = facts.kind_facts.read
    if read is None or read.base_model is None:
        return {"diffusers_lora": None}
    pin = revision_argument(base_revision(spec.card))
    lines = [
        "from diffusers import DiffusionPipeline",
        "",
        f'pipe = DiffusionPipeline.from_pretrained("{read.base_model}"{pin})',
        # weight_name: the file of this version; without it diffusers lists the repo's main branch to guess one
        f'pipe.load_lora_weights("{spec.repo_id}", weight_name="{WEIGHTS}", revision="{spec.version}")',
    ]
    if _text_to_image(read):
        lines += [f'image = pipe("{PROMPT}").images[0]', 'image.save("image.png")']
    return {"diffusers_lora": "```python\n" + "\n".join(lines) + "\n```"}


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []  # diffusers' LoRA file has no config.json; one shipped beside it is read as JSON only


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: what the LoRA file is (its base is the README's, carried into the spec, not named here)."""
    return "a diffusers LoRA"


KIND = Kind(
    name="diffusers-lora",
    template="diffusers-lora.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "diffusers"},
    describe=describe,
    card_context=card_context,
    files_check=files_check,
    model_roles=("lora-weights",),
    library_reads=(),  # load_lora_weights reads the LoRA file alone (the base pipeline is its own repo)
    # the base pipeline from this machine's cache, read whole (diffusers loads no meta device): within the real-load
    # bound only; the proof stops at load_lora_weights (not the generation the card then runs)
    load_proof=LoadProof(
        "diffusers",
        "diffusers_lora",
        "diffusers peft transformers torch",
        load_reports=diffusers_pipeline.DIFFUSERS_MODELS,
        meta_device=False,
        loads_from_hub=True,
        loaded_by=r"pipe\.load_lora_weights\(",
    ),
)
