"""A diffusers LoRA as `save_lora_weights` writes it (StableDiffusionPipeline's, the one diffusers' LoRA training
scripts call): `pytorch_lora_weights.safetensors` (diffusers' LORA_WEIGHT_NAME_SAFE), read from its header only.

Its keys are `<component>.<module>.<half>.weight`: the component a pipeline's LoRA loader hands the weights to
(`unet`, `text_encoder`, `text_encoder_2` for SDXL, `transformer` for the DiT pipelines), the module in that
component's own names, and the half in one of the namings diffusers converts between (diffusers.utils.
state_dict_utils): PEFT's `lora_A`/`lora_B`, diffusers' `lora.down`/`lora.up` (what convert_state_dict_to_diffusers
writes), or the older `lora_linear_layer.down`/`.up`. The down half is [r, in, …], the up half [out, r, …]; diffusers
derives each module's rank from its down half (`get_peft_kwargs`), so both halves must be there and agree on it.
`<module>.alpha` scalars (network alphas) and DoRA's `lora_magnitude_vector` may ride along.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from release.errors import Problem
from release.formats.common import Files, one_line, quote_list
from release.formats.safetensors_header import read_weights

WEIGHTS = "pytorch_lora_weights.safetensors"  # diffusers.loaders.lora_base.LORA_WEIGHT_NAME_SAFE
PICKLE = "pytorch_lora_weights.bin"  # LORA_WEIGHT_NAME: torch.save's pickle, never read here
# the prefixes diffusers' LoRA loaders split a state dict by (unet_name, text_encoder_name, transformer_name)
COMPONENTS = ("unet", "text_encoder", "text_encoder_2", "transformer")
HALVES = {
    "lora_A": ("down", "lora_A/lora_B (PEFT)"),
    "lora_B": ("up", "lora_A/lora_B (PEFT)"),
    "lora.down": ("down", "lora.down/lora.up (diffusers)"),
    "lora.up": ("up", "lora.down/lora.up (diffusers)"),
    "lora_linear_layer.down": ("down", "lora_linear_layer.down/up (diffusers, older)"),
    "lora_linear_layer.up": ("up", "lora_linear_layer.down/up (diffusers, older)"),
}
KEY = re.compile(
    rf"^(?P<component>{'|'.join(COMPONENTS)})\.(?P<module>.+)\.(?P<half>{'|'.join(map(re.escape, HALVES))})\.weight$"
)
EXTRA = re.compile(rf"^(?:{'|'.join(COMPONENTS)})\.(?P<module>.+)\.(?:alpha|lora_magnitude_vector(?:\.weight)?)$")
FIX = "save the LoRA again with the pipeline's save_lora_weights (as diffusers' LoRA training scripts do)"


@dataclass(frozen=True)
class LoraFacts:
    ranks: tuple[int, ...]  # the ranks the modules hold, smallest first (one value: every module alike)
    layers: Mapping[str, int]  # component → how many of its modules the LoRA adapts, in COMPONENTS' order
    targets: Mapping[str, tuple[str, ...]]  # component → the adapted modules' own names (to_q, to_out.0, …)
    namings: tuple[str, ...]  # the key namings the file uses
    parameters: int  # every tensor of the file
    dtype: str | None  # the dtype holding most parameters
    base_model: str | None  # the base pipeline's Hub id (the spec's [card.metadata] base_model)


def target_name(module: str) -> str:
    """The name a LoraConfig's target_modules would give the module: its last part, with the index of an
    nn.Sequential kept (`to_out.0`)."""
    parts = module.split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 and parts[-1].isdigit() else parts[-1]


@one_line
def read_diffusers_lora(files: Files) -> tuple[LoraFacts | None, list[Problem]]:
    """`pytorch_lora_weights.safetensors` at the repo's root: its keys diffusers' LoRA keys, in pairs of one rank."""
    weights, problems = read_weights(files, "", ("pytorch_lora_weights",))
    if weights is None:
        if not problems:
            found = " (only the pickle pytorch_lora_weights.bin is shipped, which hf-release does not read)"
            problems = [Problem(WEIGHTS, f"is missing{found if PICKLE in files else ''}; {FIX}")]
        return None, problems
    if weights.index is not None:
        return None, [Problem(weights.index, f"diffusers writes a LoRA as one file, {WEIGHTS}; {FIX}")]
    pairs: dict[tuple[str, str], dict[str, tuple[int, ...]]] = {}
    namings: set[str] = set()
    strays = []
    for name, info in weights.tensors.items():
        match = KEY.match(name)
        if match is None:
            if not EXTRA.match(name):
                strays.append(name)
            continue
        side, naming = HALVES[match["half"]]
        namings.add(naming)
        pairs.setdefault((match["component"], match["module"]), {})[side] = info.shape
    if strays:
        return None, [
            Problem(
                WEIGHTS,
                f"holds {quote_list(strays, 3)}, not diffusers LoRA keys (<component>.<module>.lora_A/lora_B or "
                f"lora.down/lora.up, the component one of {', '.join(COMPONENTS)}); diffusers' load_lora_weights "
                f"would not load them, so {FIX}",
            )
        ]
    if not pairs:
        return None, [Problem(WEIGHTS, f"holds no LoRA weights; {FIX}")]
    half, flat, uneven = [], [], []
    for (component, module), sides in sorted(pairs.items()):
        key = f"{component}.{module}"
        down, up = sides.get("down"), sides.get("up")
        if down is None or up is None:
            half.append((key, "down (lora_A)" if down is None else "up (lora_B)"))
        elif len(down) < 2 or len(up) < 2:
            flat.append((key, down, up))
        elif down[0] != up[1]:
            uneven.append((key, down, up))
    if half:
        return None, [
            Problem(
                WEIGHTS,
                f"module '{half[0][0]}' has no {half[0][1]} half ({len(half)} such modules): a LoRA layer needs "
                f"both halves, and diffusers cannot load one without the other; {FIX}",
            )
        ]
    if flat:
        key, down, up = flat[0]
        return None, [
            Problem(
                WEIGHTS,
                f"module '{key}' ({len(flat)} such) has a down half {list(down)} and an up half {list(up)}: LoRA needs "
                f"both at least 2-D ([r, in] and [out, r]); a shard not gathered before saving? {FIX}",
            )
        ]
    if uneven:
        key, down, up = uneven[0]
        return None, [
            Problem(
                WEIGHTS,
                f"module '{key}' ({len(uneven)} such) has a down half {list(down)} of rank {down[0]} but an up half "
                f"{list(up)} of rank {up[1]}: diffusers takes the rank from the down half and would fail to load "
                f"the up half into it; {FIX}",
            )
        ]
    layers: dict[str, int] = {}
    targets: dict[str, set[str]] = {}
    for component, module in pairs:
        layers[component] = layers.get(component, 0) + 1
        targets.setdefault(component, set()).add(target_name(module))
    order = sorted(layers, key=COMPONENTS.index)
    return LoraFacts(
        ranks=tuple(sorted({sides["down"][0] for sides in pairs.values()})),
        layers={c: layers[c] for c in order},
        targets={c: tuple(sorted(targets[c])) for c in order},
        namings=tuple(sorted(namings)),
        parameters=weights.parameter_count,
        dtype=weights.dtype,
        base_model=None,
    ), []
