"""What a transformers checkpoint's safetensors headers say beyond the config: mixture-of-experts and quantization.

- MoE: the experts per layer (`num_local_experts` / `num_experts` / `n_routed_experts`, through the model type's
  names) and per token (`num_experts_per_tok`), checked against the expert tensors in either layout a checkpoint
  uses — per expert (`….experts.E.w1/w2/w3`, Mixtral's file) or fused (`….experts.gate_up_proj` of shape
  [experts, …]); active parameters = total − Σ over MoE layers of (experts − active) × one expert's parameters.
- Quantization (`quantization_config.quant_method`): the dtypes each method stores — fp8: F8_E4M3 weights with
  F32 `weight_scale_inv`; gptq/awq: I32 `qweight`/`qzeros` with F16 `scales`; bitsandbytes: U8 (4-bit) or I8
  (8-bit) weights; compressed-tensors by its format. The config's dtype is then the compute dtype, not the stored one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.errors import Problem
from release.formats.common import as_int, one_line
from release.formats.safetensors_header import TensorInfo
from release.formats.transformers_sizes import size

PER_EXPERT = re.compile(r"^(?P<block>.+)\.experts\.(?P<expert>\d+)\.")
FUSED = re.compile(r"^(?P<block>.+)\.experts\.(?P<param>[A-Za-z_]+)(?:\.weight)?$")
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k", "top_k")

# quant_method → (what it stores, in words; [(tensor suffix, dtypes), …] that must exist; [(suffix, sibling suffix,
# sibling dtypes)]: every tensor ending in suffix has that sibling)
QUANT_LAYOUTS: dict[str, tuple[str, list[tuple[str, set[str]]], list[tuple[str, str, set[str]]]]] = {
    "fp8": (
        "F8_E4M3 weights with F32 weight_scale_inv",
        [(".weight", {"F8_E4M3"})],
        [(".weight", ".weight_scale_inv", {"F32"})],
    ),
    "gptq": (
        "I32 qweight/qzeros with F16 scales",
        [(".qweight", {"I32"})],
        [(".qweight", ".qzeros", {"I32"}), (".qweight", ".scales", {"F16", "BF16"})],
    ),
    "awq": (
        "I32 qweight/qzeros with F16 scales",
        [(".qweight", {"I32"})],
        [(".qweight", ".qzeros", {"I32"}), (".qweight", ".scales", {"F16", "BF16"})],
    ),
    "bitsandbytes-4bit": (
        "U8 packed 4-bit weights with absmax and quant_state",
        [(".weight", {"U8"})],
        [(".weight", ".weight.absmax", {"F32", "U8"})],
    ),
    "bitsandbytes-8bit": ("I8 weights with F32 SCB", [(".weight", {"I8"})], [(".weight", ".SCB", {"F32"})]),
    "compressed-tensors:pack-quantized": (
        "I32 weight_packed with weight_scale",
        [(".weight_packed", {"I32"})],
        [(".weight_packed", ".weight_scale", {"F16", "BF16", "F32"})],
    ),
    "compressed-tensors:float-quantized": (
        "F8_E4M3 weights with weight_scale",
        [(".weight", {"F8_E4M3"})],
        [(".weight", ".weight_scale", {"F16", "BF16", "F32"})],
    ),
    "compressed-tensors:int-quantized": (
        "I8 weights with weight_scale",
        [(".weight", {"I8"})],
        [(".weight", ".weight_scale", {"F16", "BF16", "F32"})],
    ),
    "compressed-tensors:nvfp4-pack-quantized": (
        "U8 weight_packed with F8_E4M3 weight_scale",
        [(".weight_packed", {"U8"})],
        [(".weight_packed", ".weight_scale", {"F8_E4M3"})],
    ),
}


@dataclass(frozen=True)
class MoEFacts:
    experts: int  # per MoE layer, from the config
    experts_key: str  # where the config keeps it ("num_local_experts", "n_routed_experts", …)
    experts_per_token: int | None
    layout: str | None  # "per-expert", "fused", or None when no expert tensor was found
    moe_layers: int  # blocks holding experts
    expert_parameters: int  # every expert of every layer
    total_parameters: int
    active_parameters: int | None  # None when the experts of a layer differ in size


@dataclass(frozen=True)
class QuantizationFacts:
    method: str  # quant_method, e.g. "gptq"; "bitsandbytes-4bit"; "compressed-tensors:pack-quantized"
    bits: int | None
    stores: str | None  # what the method stores, in words (None: a method whose layout is not checked here)
    quantized_tensors: int  # tensors in the method's quantized layout


def _first_int(config: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[int, str] | None:
    for key in keys:
        found = size(config, key)
        if found is not None:
            return found.value, found.key
    return None


@one_line
def moe_facts(
    config: Mapping[str, Any], tensors: Mapping[str, TensorInfo], config_label: str, weights_label: str
) -> tuple[MoEFacts | None, list[Problem]]:
    """None for a dense model (no expert count above 1 in the config)."""
    found = _first_int(config, EXPERT_KEYS)
    if found is None or found[0] <= 1:
        return None, []
    experts, key = found
    top = _first_int(config, TOP_K_KEYS)
    top_k = top[0] if top else None
    problems = []
    if top_k is not None and not 1 <= top_k <= experts:
        problems.append(
            Problem(
                config_label,
                f"routes each token to {top_k} experts ({top[1] if top else ''}) of {experts}; fix config.json",
            )
        )
    per_expert: dict[str, dict[int, int]] = {}
    fused: dict[str, int] = {}
    misfit: list[str] = []
    for name, info in tensors.items():
        if (m := PER_EXPERT.match(name)) is not None:
            counts = per_expert.setdefault(m["block"], {})
            counts[int(m["expert"])] = counts.get(int(m["expert"]), 0) + info.numel
        elif (m := FUSED.match(name)) is not None and len(info.shape) >= 2:
            if info.shape[0] != experts:
                misfit.append(name)
            fused[m["block"]] = fused.get(m["block"], 0) + info.numel
    if misfit:
        more = f" (and {len(misfit) - 1} more)" if len(misfit) > 1 else ""
        problems.append(
            Problem(
                config_label,
                f"{key} is {experts}, but {weights_label} holds '{misfit[0]}'{more} for "
                f"{tensors[misfit[0]].shape[0]:,} experts; fix config.json or save the model again",
            )
        )
    uniform = True
    blocks: dict[str, int] = dict(fused)
    for block, sizes in per_expert.items():
        uniform = uniform and len(set(sizes.values())) == 1
        blocks[block] = blocks.get(block, 0) + sum(sizes.values())
    wrong = [
        (name, sorted(held))
        for name, held in per_expert.items()
        if not (len(held) == experts and min(held) == 0 and max(held) == experts - 1)
    ]
    if wrong:
        first, indices = wrong[0]
        more = f" (and {len(wrong) - 1} more layers)" if len(wrong) > 1 else ""
        problems.append(
            Problem(
                config_label,
                f"{key} is {experts}, but {weights_label} holds {len(indices)} experts "
                f"({indices[0]}–{indices[-1]}) in '{first}'{more}; fix config.json or save the model again",
            )
        )
    uniform = uniform and all(total % experts == 0 for total in blocks.values())
    total = sum(t.numel for t in tensors.values())
    inactive = sum(params // experts * (experts - top_k) for params in blocks.values()) if top_k and uniform else None
    layout = "per-expert" if per_expert else "fused" if fused else None
    return MoEFacts(
        experts,
        key,
        top_k,
        layout,
        len(blocks),
        sum(blocks.values()),
        total,
        total - inactive if inactive is not None and blocks else None,
    ), problems


def _layout_key(qc: Mapping[str, Any]) -> str:
    method = str(qc.get("quant_method", "")).lower()
    if method == "bitsandbytes":
        return "bitsandbytes-8bit" if qc.get("load_in_8bit") is True else "bitsandbytes-4bit"
    if method == "compressed-tensors":
        formats = {qc.get("format")} | {
            g.get("format") for g in (qc.get("config_groups") or {}).values() if isinstance(g, dict)
        }
        formats = {f for f in formats if isinstance(f, str)}
        return f"compressed-tensors:{formats.pop()}" if len(formats) == 1 else method
    return method


@one_line
def quantization_facts(
    config: Mapping[str, Any], tensors: Mapping[str, TensorInfo], config_label: str, weights_label: str
) -> tuple[QuantizationFacts | None, list[Problem]]:
    """None when the config has no quantization_config; else the method and whether the tensors are stored its way."""
    qc = config.get("quantization_config")
    if qc is None:
        return None, []
    if not isinstance(qc, dict) or not isinstance(qc.get("quant_method"), str):
        return None, [
            Problem(
                config_label,
                "quantization_config has no quant_method; transformers cannot tell how the weights are "
                "stored, so export the model again with the quantizer that made it",
            )
        ]
    method = _layout_key(qc)
    bits = as_int(qc.get("bits")) or (
        4 if method == "bitsandbytes-4bit" else 8 if method == "bitsandbytes-8bit" else None
    )
    if method not in QUANT_LAYOUTS:
        return QuantizationFacts(method, bits, None, 0), []
    stores, required, siblings = QUANT_LAYOUTS[method]
    problems = []
    quantized = 0
    for suffix, dtypes in required:
        matching = [n for n, t in tensors.items() if n.endswith(suffix) and t.dtype in dtypes]
        quantized += len(matching)
        if not matching:
            problems.append(
                Problem(
                    config_label,
                    f"quantization_config says {method} ({stores}), but {weights_label} holds no "
                    f"{'/'.join(sorted(dtypes))} '…{suffix}' tensor; export the model again with "
                    "the quantizer that made it, or remove quantization_config",
                )
            )
        for base, sibling, sibling_dtypes in siblings:
            if base != suffix:
                continue
            lacking = [
                n
                for n in matching
                if tensors.get(n[: -len(base)] + sibling) is None
                or tensors[n[: -len(base)] + sibling].dtype not in sibling_dtypes
            ]
            if lacking:
                problems.append(
                    Problem(
                        weights_label,
                        f"'{lacking[0]}' ({len(lacking):,} such) has no "
                        f"{'/'.join(sorted(sibling_dtypes))} '{lacking[0][: -len(base)] + sibling}' "
                        f"beside it, which {method} stores with each; export the model again",
                    )
                )
    return QuantizationFacts(method, bits, stores, quantized), problems
