"""The Xet hashes (`docs/xet/hashing.md`): chunk, xorb, file and term-verification hashes, and their strings.

A hash is 32 bytes. As a string (`docs/xet/api.md`) each 8-byte word is written as a little-endian u64 in hex.
The merkle tree's shape is not in the spec: a node ends after child i (2 <= i < 9) whose hash's last word is
0 mod 4, or after 9 children (xet-core `merklehash/aggregated_hashes.rs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from blake3 import blake3

# fmt: off
DATA_KEY = bytes([
    102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28,
    157, 228, 33, 16, 155, 235, 43, 88, 180, 208, 176, 75, 147, 173, 242, 41,
])
INTERNAL_NODE_KEY = bytes([
    1, 126, 197, 199, 165, 71, 41, 150, 253, 148, 102, 102, 180, 138, 2, 230,
    93, 221, 83, 111, 55, 199, 109, 210, 248, 99, 82, 230, 74, 83, 113, 63,
])
VERIFICATION_KEY = bytes([
    127, 24, 87, 214, 206, 86, 237, 102, 18, 127, 249, 19, 231, 165, 195, 243,
    164, 205, 38, 213, 181, 219, 73, 230, 65, 36, 152, 127, 40, 251, 148, 195,
])
# fmt: on
ZERO_KEY = bytes(32)
HASH_HEX_RE = re.compile(r"[0-9a-f]{64}")
_BRANCHING = 4  # the tree's mean branching factor
_MAX_CHILDREN = 2 * _BRANCHING + 1


def to_hex(raw: bytes) -> str:
    """The spec's string of a hash: each 8-byte word as a little-endian u64 in 16 hex digits."""
    return "".join(raw[i : i + 8][::-1].hex() for i in range(0, 32, 8))


def from_hex(text: str) -> bytes:
    """The raw hash of its string; ValueError unless 64 lowercase hex digits."""
    if not HASH_HEX_RE.fullmatch(text):
        raise ValueError(f"not a Xet hash: {text[:80]!r}")
    return b"".join(bytes.fromhex(text[i : i + 16])[::-1] for i in range(0, 64, 16))


def chunk_hash(data: bytes) -> bytes:
    return blake3(data, key=DATA_KEY).digest()


def _merged(nodes: Sequence[tuple[bytes, int]]) -> tuple[bytes, int]:
    text = "".join(f"{to_hex(h)} : {size}\n" for h, size in nodes)
    return blake3(text.encode(), key=INTERNAL_NODE_KEY).digest(), sum(size for _, size in nodes)


def _next_cut(nodes: Sequence[tuple[bytes, int]]) -> int:
    if len(nodes) <= 2:
        return len(nodes)
    end = min(_MAX_CHILDREN, len(nodes))
    for i in range(2, end):
        if int.from_bytes(nodes[i][0][24:32], "little") % _BRANCHING == 0:
            return i + 1
    return end


def merkle_root(chunks: Iterable[tuple[bytes, int]]) -> bytes:
    """The root over (chunk hash, chunk size) pairs; all zeros for none."""
    level = list(chunks)
    if not level:
        return ZERO_KEY
    while len(level) > 1:
        merged, start = [], 0
        while start < len(level):
            cut = start + _next_cut(level[start:])
            merged.append(_merged(level[start:cut]))
            start = cut
        level = merged
    return level[0][0]


def xorb_hash(chunks: Iterable[tuple[bytes, int]]) -> bytes:
    return merkle_root(chunks)


def file_hash(chunks: Iterable[tuple[bytes, int]]) -> bytes:
    """The merkle root hashed again with an all-zero key (all zeros for an empty file)."""
    pairs = list(chunks)
    if not pairs:
        return ZERO_KEY
    return blake3(merkle_root(pairs), key=ZERO_KEY).digest()


def verification_hash(chunk_hashes: Iterable[bytes]) -> bytes:
    """A term's verification hash: its raw chunk hashes concatenated, keyed with VERIFICATION_KEY."""
    return blake3(b"".join(chunk_hashes), key=VERIFICATION_KEY).digest()
