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
from ..safetensors_layout import MAX_HEADER_BYTES
from ..pipeline import Context, Done, Skipped, StepResult
from .config import the_config


@dataclass(frozen=True)
class Tensor:
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class WeightsHeader:
    """The tensors a valid safetensors file holds, read from its header."""

    tensors: dict[str, Tensor]


def read_header(path: Path, label: str, weights_format: str | None = "pt") -> tuple[dict[str, Tensor], dict[str, str]]:
    """Tensors and metadata of a safetensors file, validated by the library without reading tensor data;
    `__metadata__.format` must be `weights_format` (the kind's loader's, release/kinds/kind.py Kind), None: not asked."""
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
    if weights_format is not None and metadata.get("format") != weights_format:
        problems.append(Problem(label, f"__metadata__.format is {metadata.get('format')!r}; transformers expects {weights_format!r}, "
                                       f"so re-save with metadata={{'format': {weights_format!r}}}"))
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


class CheckWeights:
    """Every weights file's header, then the kind's tensor rules: over all shards together when the
    release has a weights index (a sharded model is one model), else per file."""

    name = "check-weights"

    def run(self, ctx: Context) -> StepResult:
        files = ctx.by_role("weights")
        if not files:
            return Skipped("no weights in this release")
        headers: dict[str, WeightsHeader] = {}
        for f in files:
            try:
                tensors, _ = read_header(f.staged, f.path_in_repo, ctx.kind.weights_format)
            except CheckFailed as exc:
                ctx.problems.extend(exc.problems)
                continue
            headers[f.path_in_repo] = WeightsHeader(tensors)
            ctx.parsed.add(f.path_in_repo, headers[f.path_in_repo])
        config = the_config(ctx)
        if config is not None and len(headers) == len(files):
            rules = ctx.kind.tensor_problems
            check_shapes = all(f.spec is None or f.spec.check_shapes for f in files)
            indexes = ctx.by_role("weights-index")
            if indexes:
                union = {name: t for h in headers.values() for name, t in h.tensors.items()}
                ctx.problems.extend(rules(config, union, indexes[0].path_in_repo, check_shapes))
            else:
                for f in files:
                    shapes = f.spec is None or f.spec.check_shapes
                    ctx.problems.extend(rules(config, headers[f.path_in_repo].tensors, f.path_in_repo, shapes))
        return Done(f"{len(headers)}/{len(files)} weights files valid")
