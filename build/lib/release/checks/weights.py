"""Check safetensors weights through the safetensors library, reading the header only.

safetensors validates the layout (offsets contiguous and covering the file, sizes matching
dtype × shape, header length); it silently keeps the last of duplicate names, so the raw
header is also read once here to catch those and to check `__metadata__`.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from safetensors import SafetensorError, safe_open

from ..errors import CheckFailed, Problem
from ..inventory import MAX_HEADER_BYTES, expected_tensors
from ..pipeline import Context, Done, Skipped, StepResult
from .config import the_config

CONFIG_DTYPES = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}


@dataclass(frozen=True)
class Tensor:
    dtype: str
    shape: tuple[int, ...]


def read_header(path: Path, label: str) -> tuple[dict[str, Tensor], dict[str, str]]:
    """Tensors and metadata of a safetensors file, validated by the library without reading tensor data."""
    try:
        with safe_open(path, framework="np") as f:
            tensors = {}
            for name in f.keys():
                tensor_slice = f.get_slice(name)
                tensors[name] = Tensor(tensor_slice.get_dtype(), tuple(tensor_slice.get_shape()))
            metadata = f.metadata() or {}
    except SafetensorError as exc:
        raise CheckFailed(Problem(label, f"is not a valid safetensors file: {exc}; re-save it with safetensors, or copy it again if it was cut short")) from None
    except (OSError, ValueError) as exc:
        raise CheckFailed(Problem(label, f"cannot be read as safetensors: {exc}; point the spec at the weights file itself")) from None
    problems = _raw_header_problems(path, label)
    if metadata.get("format") != "pt":
        problems.append(Problem(label, f"__metadata__.format is {metadata.get('format')!r}; transformers expects 'pt', so re-save with metadata={{'format': 'pt'}}"))
    if problems:
        raise CheckFailed(problems)
    return tensors, metadata


def _raw_header_problems(path: Path, label: str) -> list[Problem]:
    """What the library lets through: duplicate tensor names and non-string metadata."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        raw = f.read(min(length, MAX_HEADER_BYTES))
    objects: list[tuple[dict[str, Any], list[str]]] = []  # every JSON object with its repeated keys; the header is last

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        counts = Counter(k for k, _ in items)
        obj = dict(items)
        objects.append((obj, sorted(k for k, n in counts.items() if n > 1)))
        return obj

    header = json.loads(raw, object_pairs_hook=pairs)
    problems = [Problem(label, f"tensor name {name!r} appears twice in the header; loaders keep only one, so re-save with unique names") for name in objects[-1][1]]
    metadata = header.get("__metadata__", {})
    problems += [
        Problem(label, f"__metadata__ key {key!r} appears twice in the header; re-save with one value per key")
        for obj, repeated in objects
        if obj is metadata
        for key in repeated
    ]
    if isinstance(metadata, dict):
        bad = sorted(k for k, v in metadata.items() if not isinstance(v, str))
        if bad:
            problems.append(Problem(label, f"__metadata__ values must be strings: {', '.join(bad)}"))
    return problems


def inventory_problems(
    tensors: dict[str, Tensor], config: dict[str, Any], label: str, *, check_shapes: bool
) -> list[Problem]:
    """Names, count, dtypes and (optionally) shapes against what config.json implies."""
    try:
        expected = expected_tensors(config)
    except ValueError as exc:
        return [Problem(label, f"cannot derive the tensor inventory from config.json: {exc}")]
    problems = []
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        detail = []
        if missing:
            detail.append(f"missing {len(missing)} ({_few(missing)})")
        if unexpected:
            detail.append(f"unexpected {len(unexpected)} ({_few(unexpected)})")
        problems.append(
            Problem(label, f"has {len(tensors)} tensors, config.json implies {len(expected)}: {'; '.join(detail)}; these weights do not belong to this config.json")
        )
    want_dtype = CONFIG_DTYPES.get(config.get("dtype") or config.get("torch_dtype", ""), None)
    wrong_dtype = sorted(n for n, t in tensors.items() if want_dtype and t.dtype != want_dtype)
    if wrong_dtype:
        problems.append(Problem(label, f"{len(wrong_dtype)} tensors are not {want_dtype} as config.json says ({_few(wrong_dtype)}); convert them or correct the dtype"))
    if check_shapes:
        for name in sorted(set(expected) & set(tensors)):
            shape = expected[name][0]
            if tensors[name].shape != shape:
                problems.append(
                    Problem(label, f"tensor {name} has shape {list(tensors[name].shape)}, config.json implies {list(shape)}; the weights and config.json disagree")
                )
    return problems


def _few(names: list[str], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f", … {len(names) - limit} more" if len(names) > limit else "")


class CheckWeights:
    name = "check-weights"

    def run(self, ctx: Context) -> StepResult:
        files = ctx.by_role("weights")
        if not files:
            return Skipped("no weights in this release")
        config = the_config(ctx)
        headers = {}
        for f in files:
            try:
                tensors, _ = read_header(f.staged, f.path_in_repo)
            except CheckFailed as exc:
                ctx.problems.extend(exc.problems)
                continue
            headers[f.path_in_repo] = tensors
            if config is not None and f.spec is not None:
                ctx.problems.extend(inventory_problems(tensors, config, f.path_in_repo, check_shapes=f.spec.check_shapes))
        ctx.evidence["weights"] = headers
        return Done(f"{len(headers)}/{len(files)} weights files valid")
