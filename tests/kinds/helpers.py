"""A typical Hugging Face release folder, made with the safetensors library: a tiny Llama-architecture
model in 3 shards + model.safetensors.index.json, tokenizer files, generation config, an Apache-2.0
LICENSE and lm-evaluation-harness results. Sizes are a few KB; nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save_file

REPO = "test-org/tiny-llama"
LAYERS = 2
HIDDEN, VOCAB = 8, 32

SPEC = f"""[release]
repo_id = "{REPO}"
version = "v1"

[[files]]
source = "model-*.safetensors"
role = "weights"

[[files]]
source = "model.safetensors.index.json"
role = "weights-index"

[[files]]
source = "config.json"
role = "config"

[[files]]
source = "generation_config.json"
role = "generation-config"

[[files]]
source = "tokenizer*.json"
role = "tokenizer"

[[files]]
source = "special_tokens_map.json"
role = "tokenizer"

[[files]]
source = "LICENSE"
role = "license"

[[files]]
source = "results_2026-11-30.json"
role = "eval"

[card]
title = "Tiny Llama (v1)"
summary = "A tiny Llama-architecture model, trained from scratch for tests."

[card.license]
id = "apache-2.0"
text = "Apache License 2.0; see [LICENSE](LICENSE)."
"""


def tensors() -> dict[str, np.ndarray]:
    """name → tensor of a tiny Llama (float16), in the usual `model.layers.N.` naming."""
    rng = np.random.default_rng(0)
    out = {
        "model.embed_tokens.weight": (VOCAB, HIDDEN),
        "model.norm.weight": (HIDDEN,),
        "lm_head.weight": (VOCAB, HIDDEN),
    }
    for n in range(LAYERS):
        for part in ("self_attn.q_proj", "self_attn.k_proj", "mlp.down_proj"):
            out[f"model.layers.{n}.{part}.weight"] = (HIDDEN, HIDDEN)
        out[f"model.layers.{n}.input_layernorm.weight"] = (HIDDEN,)
    return {name: rng.standard_normal(shape).astype(np.float16) for name, shape in out.items()}


def shards(names: list[str], count: int = 3) -> list[list[str]]:
    return [names[i::count] for i in range(count)]


def write_sharded(
    folder: Path, all_tensors: dict[str, np.ndarray], count: int = 3, prefix: str = "model"
) -> dict[str, Any]:
    """Shards `prefix-0000i-of-0000n.safetensors` and their index, as save_pretrained writes them."""
    weight_map: dict[str, str] = {}
    for i, group in enumerate(shards(sorted(all_tensors), count), start=1):
        name = f"{prefix}-{i:05d}-of-{count:05d}.safetensors"
        save_file({k: all_tensors[k] for k in group}, str(folder / name), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(group, name))
    index = {
        "metadata": {"total_size": sum(t.nbytes for t in all_tensors.values())},
        "weight_map": dict(sorted(weight_map.items())),
    }
    (folder / f"{prefix}.safetensors.index.json").write_text(json.dumps(index, indent=2))
    return index


def apache_license() -> str:
    from identify.vendor.licenses import LICENSES

    return "Copyright 2026 Test Org\n\n" + dict(LICENSES)["Apache-2.0"]


def make_release(folder: Path) -> Path:
    """The release folder with its spec; returns the spec's path."""
    folder.mkdir(parents=True, exist_ok=True)
    write_sharded(folder, tensors())
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "vocab_size": VOCAB,
        "max_position_embeddings": 4096,
        "torch_dtype": "float16",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "generation_config.json").write_text(
        json.dumps({"bos_token_id": 1, "eos_token_id": 2, "max_new_tokens": 64})
    )
    tokenizer = {
        "version": "1.0",
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
        "added_tokens": [],
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 4096})
    )
    (folder / "special_tokens_map.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>"}))
    (folder / "LICENSE").write_text(apache_license())
    results = {
        "results": {
            "arc_easy": {"alias": "arc_easy", "acc,none": 0.25, "acc_stderr,none": 0.0125},
            "hellaswag": {"alias": "hellaswag", "acc_norm,none": 0.26, "acc_norm_stderr,none": 0.004},
        },
        "configs": {},
        "versions": {"arc_easy": 1.0, "hellaswag": 1.0},
        "n-shot": {"arc_easy": 0, "hellaswag": 0},
        "config": {"model": "hf", "model_args": "pretrained=test-org/tiny-llama"},
        "lm_eval_version": "0.4.8",
    }
    (folder / "results_2026-11-30.json").write_text(json.dumps(results, indent=2))
    spec = folder / "release.toml"
    spec.write_text(SPEC)
    return spec
