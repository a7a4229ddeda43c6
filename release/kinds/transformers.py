"""The transformers kind: any Hugging Face transformers model (one safetensors file, or shards + index).

config.json must name the model (`architectures`, `model_type`); the layers the tensors hold must
agree with `num_hidden_layers` for the namings in LAYER_NAMINGS, the input embedding's shape with
`vocab_size` × `hidden_size`, and the tensors' dtype with the config's.
Tokenizer, generation config, index and lm-evaluation-harness files are checked by role in the core.
The card shows the model's facts, derived from config.json and the safetensors headers; its card part is
the speculative-decoding one (speculative.py), for a spec that gives a bench or a served A/B and a
template that shows them.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import Problem
from ..safetensors_layout import CONFIG_DTYPES
from ..spec import ReleaseSpec
from .kind import Kind
from .speculative import CARD_PART

# Per-layer tensor names whose layer index the check reads (`model.layers.N.…`, the Llama/Mistral/Qwen/
# Gemma naming, and the other common ones). A model named otherwise skips the layer-count check.
LAYER_NAMINGS = (
    re.compile(r"^model\.layers\.(\d+)\."),
    re.compile(r"^model\.language_model\.layers\.(\d+)\."),
    re.compile(r"^model\.decoder\.layers\.(\d+)\."),
    re.compile(r"^transformer\.h\.(\d+)\."),
    re.compile(r"^gpt_neox\.layers\.(\d+)\."),
)
# The input embedding's names in the same namings: its shape is [vocab_size, hidden_size].
EMBEDDINGS = ("model.embed_tokens.weight", "model.language_model.embed_tokens.weight", "model.decoder.embed_tokens.weight",
              "transformer.wte.weight", "gpt_neox.embed_in.weight")


def config_problems(config: dict[str, Any], label: str) -> list[Problem]:
    problems = []
    arch = config.get("architectures")
    if not (isinstance(arch, list) and arch and all(isinstance(a, str) and a for a in arch)):
        problems.append(Problem(label, "has no `architectures` (a list of class names, e.g. [\"LlamaForCausalLM\"]); save it with transformers' save_pretrained"))
    if not (isinstance(config.get("model_type"), str) and config["model_type"]):
        problems.append(Problem(label, "has no `model_type` (e.g. \"llama\"); save it with transformers' save_pretrained"))
    dtypes = {config[k] for k in ("dtype", "torch_dtype") if isinstance(config.get(k), str)}
    if len(dtypes) > 1:
        problems.append(Problem(label, f"dtype and torch_dtype disagree ({' vs '.join(sorted(dtypes))})"))
    return problems


def layer_indices(names: Any) -> set[int] | None:
    """The layer indices the tensor names hold, for the first naming that matches any; None when none does."""
    for naming in LAYER_NAMINGS:
        found = {int(m.group(1)) for m in map(naming.match, names) if m}
        if found:
            return found
    return None


def tensor_problems(config: dict[str, Any], tensors: dict[str, Any], label: str, check_shapes: bool) -> list[Problem]:
    problems = []
    layers = config.get("num_hidden_layers")
    held = layer_indices(tensors)
    if isinstance(layers, int) and held is not None and held != set(range(layers)):
        problems.append(Problem(
            label,
            f"the tensors hold layers {_ranges(held)} but config.json's num_hidden_layers is {layers}; "
            "ship the weights that belong to this config.json",
        ))
    embedding = next((tensors[name] for name in EMBEDDINGS if name in tensors), None)
    if embedding is not None and len(embedding.shape) == 2:
        for key, size in (("vocab_size", embedding.shape[0]), ("hidden_size", embedding.shape[1])):
            if isinstance(config.get(key), int) and config[key] != size:
                problems.append(Problem(label, f"the input embedding is {list(embedding.shape)}, so config.json's {key} {config[key]} "
                                               f"should be {size}; ship the weights that belong to this config.json"))
    want = CONFIG_DTYPES.get(config.get("dtype") or config.get("torch_dtype") or "")
    floats = {n: t.dtype for n, t in tensors.items() if t.dtype in CONFIG_DTYPES.values()}
    wrong = sorted(n for n, d in floats.items() if want and d != want)
    if wrong and len(wrong) == len(floats):
        problems.append(Problem(label, f"the weights are {floats[wrong[0]]}, config.json says {want}; correct torch_dtype or convert"))
    return problems


def _ranges(indices: set[int]) -> str:
    lo, hi = min(indices), max(indices)
    return f"{lo}–{hi}" if len(indices) == hi - lo + 1 else f"{lo}–{hi} with gaps"


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """A transformers snippet pinned to this version: the Auto class the architecture loads with. Without
    config.json transformers cannot load the weights (no snippet); the tokenizer line only when one is shipped."""
    if not facts.architectures:
        return {"transformers": None}
    causal = any(a.endswith("ForCausalLM") for a in facts.architectures)
    auto = "AutoModelForCausalLM" if causal else "AutoModel"
    tokenizer = any(row[-1] == "tokenizer" for row in facts.files.rows)  # the files table's role column
    lines = [f"from transformers import {auto}" + (", AutoTokenizer" if tokenizer else ""), ""]
    if tokenizer:
        lines.append(f'tokenizer = AutoTokenizer.from_pretrained("{spec.repo_id}", revision="{spec.version}")')
    lines.append(f'model = {auto}.from_pretrained("{spec.repo_id}", revision="{spec.version}")')
    return {"transformers": "```python\n" + "\n".join(lines) + "\n```"}


KIND = Kind(
    name="transformers",
    template="transformers.md.j2",
    config_problems=config_problems,
    tensor_problems=tensor_problems,
    card_part=CARD_PART,
    card_defaults={"library_name": "transformers"},
    card_context=card_context,
    model_facts=True,
)
