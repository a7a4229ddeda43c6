"""The DFlash2 drafter's tensor inventory, kept as data, and a writer of safetensors files for it.

Tensor names and shapes differ between DFlash2 implementations, so they live in
``schemas/dflash2-inventory.json`` rather than in code: each shape entry is a small
expression over ``config.json`` keys that this module evaluates itself (never ``eval``).

Expression syntax: a sum (``+``) of products (``*``) of factors, where a factor is a
non-negative integer literal, a config key, or ``len(key)``. Keys may be dotted paths into
nested objects (``dflash_config.selector_rank``). Spaces are ignored.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from release.formats.safetensors_layout import DTYPE_BYTES, MAX_HEADER_BYTES
from release.util.schemas import load_schema

if TYPE_CHECKING:
    import numpy as np


# Size in bytes of the published v5 drafter (release card: 2,342,169,824 B).
FULL_SIZE = 2_342_169_824


_KEY = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_FACTOR = re.compile(rf"(?P<int>\d+)|len\((?P<len>{_KEY})\)|(?P<key>{_KEY})")

# Random data is produced this many 64-bit words at a time (8 MiB), so memory stays flat
# even for the 2.3 GB full-size file.
_CHUNK_WORDS = 1 << 20


def _lookup(config: dict[str, Any], key: str, tensor: str) -> Any:
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"config key {key!r} is missing (needed for tensor {tensor!r})")
        node = node[part]
    return node


def _evaluate(expr: str, config: dict[str, Any], tensor: str) -> int:
    total = 0
    for term in expr.replace(" ", "").split("+"):
        product = 1
        for factor in term.split("*"):
            match = _FACTOR.fullmatch(factor)
            if match is None:
                raise ValueError(f"bad inventory expression {expr!r} for tensor {tensor!r}")
            if match["int"] is not None:
                value = int(match["int"])
            elif match["len"] is not None:
                seq = _lookup(config, match["len"], tensor)
                if not isinstance(seq, list):
                    raise ValueError(f"config key {match['len']!r} must be a list (for tensor {tensor!r})")
                value = len(seq)
            else:
                value = _lookup(config, match["key"], tensor)
                # bool is an int subclass; a true/false dimension is a config error.
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(
                        f"config key {match['key']!r} must be a non-negative integer "
                        f"(for tensor {tensor!r}), got {value!r}"
                    )
            product *= value
        total += product
    return total


def load_inventory() -> dict[str, Any]:
    """The inventory document (see the module docstring for its expression syntax)."""
    return load_schema("dflash2-inventory.json")


def expected_tensors(config: dict[str, Any]) -> dict[str, tuple[tuple[int, ...], str]]:
    """Tensor name -> (shape, safetensors dtype) that a drafter with ``config`` must hold.

    Raises ValueError naming the config key when an expression cannot be evaluated.
    """
    inventory = load_inventory()
    layers = _evaluate(inventory["layer_count"], config, "<layer count>")
    tensors: dict[str, tuple[tuple[int, ...], str]] = {}
    for spec in inventory["tensors"]:
        names = [spec["name"].format(layer=i) for i in range(layers)] if "{layer}" in spec["name"] else [spec["name"]]
        for name in names:
            shape = tuple(_evaluate(expr, config, name) for expr in spec["shape"])
            tensors[name] = (shape, spec["dtype"])
    return tensors


def _header(tensors: dict[str, tuple[tuple[int, ...], str]], total_size: int | None) -> tuple[bytes, int]:
    """The 8-byte length prefix plus padded JSON header, and the data region's length."""
    entries: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    # Name order fixes the offsets, so the same inventory always gives the same bytes.
    for name in sorted(tensors):
        shape, dtype = tensors[name]
        if dtype not in DTYPE_BYTES:
            raise ValueError(f"tensor {name!r}: unsupported dtype {dtype!r}")
        nbytes = math.prod(shape) * DTYPE_BYTES[dtype]
        entries[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    # safetensors pads the header with spaces to a multiple of 8 so the data is aligned.
    length = -(-len(text) // 8) * 8
    if total_size is not None:
        length = total_size - 8 - offset
        if length < len(text) or length % 8 or length > MAX_HEADER_BYTES:
            raise ValueError(
                f"total_size {total_size} is impossible: data is {offset} bytes and the header "
                f"needs {len(text)}..{MAX_HEADER_BYTES} bytes, a multiple of 8"
            )
    return struct.pack("<Q", length) + text.ljust(length, b" "), offset


def _random_bf16_words(generator: np.random.PCG64, count: int) -> np.ndarray:
    """``count`` uint64 words, each four finite BF16 values of magnitude 2**-10 .. 2**-2.

    Built from the bit generator's raw output (a stream numpy keeps stable across
    versions) with integer arithmetic only, so a seed gives the same bytes everywhere.
    Each 16-bit lane keeps its random sign and 7-bit mantissa and gets an exponent in
    117..124: no NaN, Inf or subnormals, as a checker of real weights would demand.
    """
    import numpy as np

    words = generator.random_raw(count)
    sign_and_mantissa = words & np.uint64(0x807F_807F_807F_807F)
    exponents = (words >> np.uint64(7)) & np.uint64(0x0007_0007_0007_0007)
    biased = (exponents + np.uint64(0x0075_0075_0075_0075)) << np.uint64(7)
    return sign_and_mantissa | biased


def write_drafter(
    path: Path,
    config: dict[str, Any],
    *,
    data: Literal["random", "sparse"],
    seed: int = 0,
    total_size: int | None = None,
) -> None:
    """Write a real-format safetensors drafter holding exactly the inventory of ``config``.

    ``data="random"`` fills the data region with deterministic values from ``seed``
    (finite BF16 patterns; written in chunks). ``data="sparse"`` leaves the data region
    as a filesystem hole (zeros), which is instant and costs no disk for full-size files.
    ``total_size`` pads the header with spaces so the file is exactly that many bytes;
    ValueError if no multiple-of-8 header length can do it.
    """
    if data not in ("random", "sparse"):
        raise ValueError(f"data must be 'random' or 'sparse', got {data!r}")
    header, data_len = _header(expected_tensors(config), total_size)
    with open(path, "wb") as f:
        f.write(header)
        if data == "sparse":
            f.truncate(len(header) + data_len)
            return
        import numpy as np  # only writers of drafters (tests, bench, make_drafter.py) need numpy

        generator = np.random.PCG64(seed)
        remaining = data_len
        while remaining:
            chunk = _random_bf16_words(generator, min(_CHUNK_WORDS, -(-remaining // 8)))
            raw = chunk.astype("<u8").tobytes()[:remaining]
            f.write(raw)
            remaining -= len(raw)
