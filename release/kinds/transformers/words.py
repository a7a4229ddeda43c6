"""The model's facts in the words a reader of a card uses: dtypes as torch names them (float32, not F32), the
generation defaults as what generate() does ("sampling on, temperature 0.6"), the library that saved the model."""

from __future__ import annotations

from typing import Any

# safetensors' dtype names → torch's, which users type (torch_dtype=torch.float16)
DTYPE_WORDS: dict[str, str] = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "F8_E5M2": "float8 (e5m2)",
    "F8_E4M3": "float8 (e4m3)",
    "F8_E8M0": "float8 (e8m0)",
    "F8_E4M3FNUZ": "float8 (e4m3fnuz)",
    "F8_E5M2FNUZ": "float8 (e5m2fnuz)",
    "I16": "int16",
    "U16": "uint16",
    "F16": "float16",
    "BF16": "bfloat16",
    "I32": "int32",
    "U32": "uint32",
    "F32": "float32",
    "I64": "int64",
    "U64": "uint64",
    "F64": "float64",
}


def dtype_words(dtype: str) -> str:
    return DTYPE_WORDS.get(dtype, dtype)


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


# generation_config.json's keys, each as a phrase (the value filled in); do_sample and num_beams have their own
PHRASES: dict[str, str] = {
    "temperature": "temperature {}",
    "top_p": "top-p {}",
    "top_k": "top-k {}",
    "min_p": "min-p {}",
    "typical_p": "typical-p {}",
    "repetition_penalty": "repetition penalty {}",
    "no_repeat_ngram_size": "no repeated {}-grams",
    "max_new_tokens": "up to {} new tokens",
    "max_length": "up to {} tokens in all",
}


def generation_words(defaults: dict[str, Any]) -> str:
    """What generate() does with these defaults, in words: "sampling on, temperature 0.6, top-p 0.9"."""
    words = []
    for key, value in defaults.items():
        if key == "do_sample":
            words.append("sampling on" if value else "sampling off (greedy)")
        elif key == "num_beams":
            words.append(f"beam search, {value} beams" if isinstance(value, int) and value > 1 else "no beam search")
        elif key in PHRASES:
            words.append(PHRASES[key].format(_number(value)))
        else:
            words.append(f"{key} {value}")
    return ", ".join(words)


def saved_with(config: dict[str, Any]) -> str | None:
    """ "transformers 4.57.1": the version that wrote config.json (`transformers_version`), not a requirement."""
    version = config.get("transformers_version")
    return f"transformers {version}" if isinstance(version, str) and version.strip() else None
