"""The shard format (`docs/xet/shard.md`): an upload shard read (files and their terms, the new xorbs), and the
global dedup answer written (a shard with no files, the xorbs holding a chunk, and a footer).

All records are 48 bytes, integers little-endian. An upload shard has no footer.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

# fmt: off
HEADER_TAG = bytes([
    72, 70, 82, 101, 112, 111, 77, 101, 116, 97, 68, 97, 116, 97, 0, 85,
    105, 103, 69, 106, 123, 129, 87, 131, 165, 189, 217, 92, 205, 209, 74, 169,
])
# fmt: on
HEADER_VERSION, FOOTER_VERSION = 2, 1
RECORD = 48
FOOTER_BYTES = 200
BOOKEND = b"\xff" * 32 + bytes(16)
FLAG_VERIFICATION = 1 << 31
FLAG_METADATA_EXT = 1 << 30
MAX_SHARD_BYTES = 64 * 1024 * 1024
MAX_SHARD_FILES = 100_000
DEDUP_ANSWER_LIFETIME = 7 * 24 * 3600


class ShardError(ValueError):
    """A shard that cannot be read, or that breaks the rules of an upload shard."""


@dataclass(frozen=True)
class Term:
    xorb: bytes
    size: int  # unpacked bytes
    start: int  # chunk index, inclusive
    end: int  # chunk index, exclusive


@dataclass(frozen=True)
class FileInfo:
    hash: bytes
    terms: tuple[Term, ...]
    verification: tuple[bytes, ...]  # one per term (required in an upload)
    sha256: bytes | None  # FileMetadataExt (required for git repos), stored as a hash (words little-endian)


@dataclass(frozen=True)
class XorbInfo:
    hash: bytes
    chunks: int
    size: int  # unpacked bytes


@dataclass(frozen=True)
class Shard:
    files: tuple[FileInfo, ...]
    xorbs: tuple[XorbInfo, ...]


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.offset = 0

    def record(self) -> bytes:
        if self.offset + RECORD > len(self.body):
            raise ShardError("the shard ends before its bookend")
        rec = self.body[self.offset : self.offset + RECORD]
        self.offset += RECORD
        return rec


def parse_upload_shard(body: bytes) -> Shard:
    """The files and xorbs an upload shard names; ShardError if it is malformed or past its bounds."""
    if len(body) > MAX_SHARD_BYTES:
        raise ShardError(f"a shard is at most {MAX_SHARD_BYTES // (1024 * 1024)} MiB")
    reader = _Reader(body)
    header = reader.record()
    version, footer_size = struct.unpack("<QQ", header[32:48])
    if header[:32] != HEADER_TAG or version != HEADER_VERSION:
        raise ShardError("not a shard: wrong header tag or version")
    files: list[FileInfo] = []
    while (rec := reader.record())[:32] != BOOKEND[:32]:
        if len(files) >= MAX_SHARD_FILES:
            raise ShardError(f"a shard names at most {MAX_SHARD_FILES} files")
        flags, count = struct.unpack("<II", rec[32:40])
        if count == 0 or count * RECORD > len(body):
            raise ShardError("a file needs at least one term, within the shard")
        terms = []
        for _ in range(count):
            entry = reader.record()
            _, size, start, end = struct.unpack("<IIII", entry[32:48])
            if not start < end:
                raise ShardError("a term's chunk range is empty")
            terms.append(Term(entry[:32], size, start, end))
        checks = tuple(reader.record()[:32] for _ in range(count)) if flags & FLAG_VERIFICATION else ()
        sha256 = reader.record()[:32] if flags & FLAG_METADATA_EXT else None
        files.append(FileInfo(rec[:32], tuple(terms), checks, sha256))
    xorbs: list[XorbInfo] = []
    while (rec := reader.record())[:32] != BOOKEND[:32]:
        _, count, size, _ = struct.unpack("<IIII", rec[32:48])
        if count * RECORD > len(body):
            raise ShardError("a xorb's chunk list runs past the shard")
        reader.offset += count * RECORD
        xorbs.append(XorbInfo(rec[:32], count, size))
    if reader.offset + footer_size != len(body):
        raise ShardError("the shard has bytes after its CAS section that are not its footer")
    return Shard(tuple(files), tuple(xorbs))


def dedup_answer(xorbs: list[tuple[bytes, list[tuple[bytes, int]], int]]) -> bytes:
    """A global dedup answer: no files, and per xorb (hash, [(chunk hash, size)], stored bytes) its chunk list;
    chunk hashes in the clear (an all-zero HMAC key)."""
    out = bytearray(HEADER_TAG + struct.pack("<QQ", HEADER_VERSION, FOOTER_BYTES))
    out += BOOKEND
    cas_offset = len(out)
    for xorb, chunks, stored in xorbs:
        out += xorb + struct.pack("<IIII", 0, len(chunks), sum(s for _, s in chunks), stored)
        start = 0
        for chunk, size in chunks:
            out += chunk + struct.pack("<II", start, size) + bytes(8)
            start += size
    out += BOOKEND
    footer_offset = len(out)
    now = int(time.time())
    out += struct.pack("<QQQ", FOOTER_VERSION, RECORD, cas_offset) + bytes(48) + bytes(32)
    out += struct.pack("<QQ", now, now + DEDUP_ANSWER_LIFETIME) + bytes(72) + struct.pack("<Q", footer_offset)
    return bytes(out)
