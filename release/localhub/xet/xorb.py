"""The xorb format (`docs/xet/xorb.md`): chunks, each an 8-byte header and its data, stored as is, as an LZ4
frame, or byte-grouped by 4 then LZ4 (`xet_core_structures/src/xorb_object/compression_scheme.rs`: frames,
not raw blocks). hf_xet appends a footer that starts with `XETBLOB`; the CAS reads the chunks before it and
recomputes every hash itself, so the footer's copy of them is not trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

import lz4.frame

from release.localhub.xet.hashes import chunk_hash, to_hex, xorb_hash

MiB = 1024 * 1024
MAX_XORB_BYTES = 64 * MiB  # the spec's limit on a serialized xorb's chunks
MAX_XORB_FOOTER = 2 * MiB  # hf_xet's footer: about 40 bytes a chunk, past the 64 MiB of chunks
MAX_CHUNK_BYTES = 128 * 1024  # the chunker's largest chunk
MAX_XORB_CHUNKS = MAX_XORB_BYTES // 8  # far above 64 MiB / 8 KiB (the smallest chunk but a file's last)
HEADER_BYTES = 8
FOOTER_IDENT = b"XETBLOB"
SCHEME_NONE, SCHEME_LZ4, SCHEME_BG4_LZ4 = 0, 1, 2


class XorbError(ValueError):
    """A xorb that is not what it claims: malformed, too large, or with another hash."""


@dataclass(frozen=True)
class ChunkRecord:
    """Where a chunk sits in its stored xorb: its hash, its size unpacked, its bytes [start, end) header included."""

    hash: bytes
    size: int
    start: int
    end: int


def decompress(scheme: int, data: bytes, size: int) -> bytes:
    if scheme == SCHEME_NONE:
        raw = data
    elif scheme in (SCHEME_LZ4, SCHEME_BG4_LZ4):
        try:
            raw = lz4.frame.decompress(data)
        except RuntimeError as exc:
            raise XorbError(f"a chunk's LZ4 frame does not decompress: {exc}") from exc
        if scheme == SCHEME_BG4_LZ4:
            raw = _ungroup4(raw)
    else:
        raise XorbError(f"unknown chunk compression scheme {scheme}")
    if len(raw) != size:
        raise XorbError(f"a chunk unpacks to {len(raw)} bytes, its header says {size}")
    return raw


def _ungroup4(grouped: bytes) -> bytes:
    """Undo byte grouping: group g holds the bytes at position g of each 4; the first n % 4 groups hold one more."""
    n = len(grouped)
    out = bytearray(n)
    start = 0
    for g in range(4):
        count = n // 4 + (1 if g < n % 4 else 0)
        out[g::4] = grouped[start : start + count]
        start += count
    return bytes(out)


def read_chunk(body: bytes, offset: int) -> tuple[int, bytes, int]:
    """The chunk at `offset`: (its end, its unpacked bytes, its stored size)."""
    header = body[offset : offset + HEADER_BYTES]
    if len(header) < HEADER_BYTES or header[0] != 0:
        raise XorbError(f"no chunk header version 0 at byte {offset}")
    stored = int.from_bytes(header[1:4], "little")
    size = int.from_bytes(header[5:8], "little")
    if size > MAX_CHUNK_BYTES or stored > MAX_CHUNK_BYTES + 1024:
        raise XorbError(f"a chunk of {size} bytes ({stored} stored) is past the 128 KiB chunk limit")
    end = offset + HEADER_BYTES + stored
    if end > len(body):
        raise XorbError(f"the chunk at byte {offset} runs past the end of the xorb")
    return end, decompress(header[4], body[offset + HEADER_BYTES : end], size), stored


def parse_xorb(body: bytes, claimed: str) -> list[ChunkRecord]:
    """Every chunk of a uploaded xorb, each hash recomputed; XorbError unless its hash is `claimed`."""
    chunks: list[ChunkRecord] = []
    offset = 0
    while offset < len(body) and not body.startswith(FOOTER_IDENT, offset):
        if offset > MAX_XORB_BYTES or len(chunks) >= MAX_XORB_CHUNKS:
            raise XorbError(f"a xorb holds at most {MAX_XORB_BYTES // MiB} MiB of chunks")
        end, raw, _ = read_chunk(body, offset)
        chunks.append(ChunkRecord(chunk_hash(raw), len(raw), offset, end))
        offset = end
    if not chunks:
        raise XorbError("a xorb needs at least one chunk")
    if offset > MAX_XORB_BYTES or len(body) - offset > MAX_XORB_FOOTER:
        raise XorbError(f"a xorb holds at most {MAX_XORB_BYTES // MiB} MiB of chunks")
    actual = to_hex(xorb_hash((c.hash, c.size) for c in chunks))
    if actual != claimed:
        raise XorbError(f"the xorb's chunks hash to {actual}, not {claimed}")
    return chunks


def unpack_range(data: bytes, count: int) -> list[bytes]:
    """The unpacked bytes of `count` consecutive chunks stored in `data` (a byte range of a xorb)."""
    out, offset = [], 0
    for _ in range(count):
        offset, raw, _ = read_chunk(data, offset)
        out.append(raw)
    return out
