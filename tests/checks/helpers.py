"""Helpers for the artifact-check tests: hand-built safetensors bytes and a run of the check steps."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from release.builder.collect import Collect, resolve_sources
from release.builder.hashing import Digest
from release.checks.config import load_config as load_any_config
from release.checks.order import CONTENT_CHECKS, DIGEST_CHECKS
from release.errors import CheckFailed
from release.formats.safetensors_layout import DTYPE_BYTES
from release.kinds.dflash2_drafter import config_problems
from release.pipeline import Context, run_steps
from release.spec import load_spec
from tests.helpers import EXAMPLE

REPO_ID = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"
LAUNCHER = "launch-glm53-dflash2-tp4-v5.sh"
SPEC_CONFIG = '{"method":"dflash","model":"spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark","num_speculative_tokens":7}'
BENCH_FILES = sorted(p.name for p in EXAMPLE.glob("glm53-v*.json"))


def load_config(path: Path, label: str) -> Any:
    """config.json under the drafter kind's rules."""
    return load_any_config(path, label, config_problems)


def refusal_messages(load: Callable[[Path, str], object], path: Path, label: str) -> list[str]:
    """What `load` refuses the file with (it must refuse): each problem names the file as `label`."""
    with pytest.raises(CheckFailed) as exc:
        load(path, label)
    assert all(p.file == label for p in exc.value.problems), exc.value.problems
    return [p.message for p in exc.value.problems]


def real_config() -> dict[str, Any]:
    return json.loads((EXAMPLE / "config.json").read_text())


def tiny_config() -> dict[str, Any]:
    """The real config with small dimensions, consistent with itself (so it passes the config check)."""
    config = real_config()
    config.update(
        hidden_size=16, intermediate_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=8, vocab_size=64
    )
    config["dflash_config"].update(selector_rank=8, mask_token_id=63)
    return config


def safetensors_bytes(header: dict[str, Any] | bytes, data: bytes | int = b"", *, length: int | None = None) -> bytes:
    """A safetensors file: 8-byte little-endian header length, the header, the data region.

    `header` is a dict (dumped as JSON) or raw bytes; `data` is bytes or a count of zero bytes;
    `length` overrides the header length written in the prefix.
    """
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    raw = raw.ljust(-(-len(raw) // 8) * 8, b" ")
    data = bytes(data) if isinstance(data, int) else data
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def valid_header(**tensors: tuple[str, list[int]]) -> tuple[dict[str, Any], int]:
    """A header laying `name=(dtype, shape)` tensors out back to back; returns it and the data length."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return header, offset


def write_sparse(
    path: Path, tensors: dict[str, tuple[tuple[int, ...], str]], *, metadata: dict[str, str] | None = None
) -> None:
    """A real-format safetensors file for any inventory, its data region a filesystem hole (instant)."""
    header: dict[str, Any] = {"__metadata__": metadata if metadata is not None else {"format": "pt"}}
    offset = 0
    for name in sorted(tensors):
        shape, dtype = tensors[name]
        size = math.prod(shape) * DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = safetensors_bytes(header)
    with open(path, "wb") as f:
        f.write(raw)
        f.truncate(len(raw) + offset)


def check_problems(spec_path: Path, stage: Path) -> list[str]:
    """Collect, check, hash and compare digests as the build does, without its gates: every problem, one string each."""
    stage.mkdir(parents=True, exist_ok=True)
    spec = load_spec(spec_path)
    ctx = Context(spec=spec, stage=stage, sources=resolve_sources(spec))
    run_steps(ctx, (Collect(), *CONTENT_CHECKS, Digest(), *DIGEST_CHECKS))
    return [str(p) for p in sorted(set(ctx.problems))]
