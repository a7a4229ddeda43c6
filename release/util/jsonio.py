"""The one JSON reader: every JSON document hf-release reads from a file goes through here, with bounds
(and, at the end, the helpers that write a large document in blocks).

- size: a file is read in chunks and refused as soon as it holds more than `max_bytes` (its stat is
  checked first, and the count again as the bytes arrive: a file growing while read is caught too), so a
  huge or endless file is never loaded whole;
- depth: arrays and objects nested more than MAX_DEPTH deep are refused before the parser recurses into them;
- strict mode (evidence the checks vouch for): NaN/Infinity and duplicate keys are errors, not silently taken.

Errors are the standard ones, so each caller words them as it always has: OSError (FileNotFoundError…),
UnicodeDecodeError, json.JSONDecodeError, ValueError (strict mode's refusals), and TooLarge (a ValueError)
and TooDeep (a RecursionError, what Python raises for nesting too deep to parse).
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import os
import re
import secrets
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring, encode_basestring_ascii  # json's C string encoders
from pathlib import Path
from typing import Any

MAX_BYTES = 256 * 1024 * 1024  # far above any release.json hf-release writes (100,000 files ≈ 40 MB)
MAX_DEPTH = 512  # JSON hf-release reads nests a handful of levels; Python's parser recurses per level
CHUNK = 1024 * 1024
BLOCK_PARTS = 4096  # JSON chunks joined into one block written

_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_STRING = re.compile(rb'"[^"]*"')  # once only quotes and brackets are left: the brackets inside a string
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


class TooLarge(ValueError):
    """The file holds more than the bytes allowed; `size` is what it was seen to hold."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"is {size:,} bytes, more than the {limit:,} read")
        self.size = size
        self.limit = limit


class TooDeep(RecursionError):
    """Arrays or objects nested deeper than the bound."""


def read_bounded(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes, read in chunks; TooLarge once it holds more than `max_bytes`."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise TooLarge(size, max_bytes)
        chunks, total = [], 0
        while chunk := f.read(min(CHUNK, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(total, max_bytes)
            chunks.append(chunk)
    return b"".join(chunks)


def parse(data: bytes | str, *, strict: bool = False, detect_encoding: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """One JSON document. Bytes are UTF-8 (with `detect_encoding`, also UTF-16/32 as json.loads detects them).

    strict: NaN/Infinity, a number that overflows to infinity once parsed (1e400), and a key given twice in
    one object are ValueErrors (messages for a one-line problem)."""
    if detect_encoding and isinstance(data, bytes):
        data = data.decode(json.detect_encoding(data), "surrogatepass")  # what json.loads does with bytes
    check_depth(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"), max_depth)
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if strict:
        return json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_no_duplicates
        )
    return json.loads(text)


def read_json(path: Path, *, max_bytes: int = MAX_BYTES, strict: bool = False, detect_encoding: bool = False) -> Any:
    """Read and parse one JSON file within the bounds (see `parse`)."""
    return parse(read_bounded(path, max_bytes), strict=strict, detect_encoding=detect_encoding)


def read_json_or_none(path: Path, *, max_bytes: int = MAX_BYTES, detect_encoding: bool = False) -> Any:
    """The parsed file, or None when it cannot be read as JSON within the bounds (for readers that only look)."""
    try:
        return read_json(path, max_bytes=max_bytes, detect_encoding=detect_encoding)
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None


def check_depth(data: bytes, max_depth: int = MAX_DEPTH) -> None:
    """TooDeep when arrays and objects nest more than `max_depth` deep (brackets inside strings do not count).

    Counted on UTF-8 bytes, where every bracket, quote and backslash is one ASCII byte, with C-speed bytes
    operations only: the scan of a 40 MB release.json costs a fraction of parsing it."""
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # escaped backslashes, then escaped quotes
    # Keep quotes and brackets only; two adjacent quotes then enclose nothing: dropping them keeps every
    # other quote's parity (inside or outside a string) and leaves few strings for the regex.
    structure = unescaped.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    brackets = _STRING.sub(b"", structure) if b'"' in structure else structure
    steps = brackets.translate(_STEP)  # an opening counts 2, a closing 0: the depth is their sum minus the count
    depth = max(map(operator.sub, itertools.accumulate(steps), itertools.count(1)), default=0)
    if depth > max_depth:
        raise TooDeep(f"nests arrays or objects more than {max_depth} deep")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"holds {name}, which is not a JSON number; write a finite number or null")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # finite as written, infinite as a float: the card would print inf
        raise ValueError(
            f"holds {literal[:40]}, which is beyond a float's range (it reads as {value}); "
            "write a finite number or null"
        )
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice")
        seen[key] = value
    return seen


# --- writing: JSON too large to hold at once (release.json of 50,000 files) -------------------------


class StreamedList(list[dict[str, Any]]):
    """Rows for json_blocks that hold nothing: each row is made as the writer reaches it. release.json's 50,000
    entry dicts would otherwise all exist at once (~20 MB). Each row is a flat dict: str keys, and str, int,
    bool or None values (what a manifest entry is). Only for json_blocks: json's own encoders would see an
    empty list (the C one reads a list's storage) or write the rows at ~30 µs each (the pure-Python one)."""

    def __init__(self, count: int, items: Callable[[], Iterator[dict[str, Any]]]) -> None:
        super().__init__()
        self._count, self._items = count, items

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self._items()


def json_blocks(encoder: json.JSONEncoder, document: Any) -> Iterator[str]:
    """encoder.iterencode(document) joined into blocks of whole lines, a few hundred KB each:
    a secret never spans two (no string value holds a raw newline), so each block can be redacted alone.

    The same text, but each StreamedList is written by `_rows` (json's C string encoder, a row at a time):
    the rest of the document is encoded with a stand-in string where the list's rows go."""
    lists: list[StreamedList] = []
    stand_in = f"\0rows {secrets.token_hex(8)}\0"  # no value of the document can equal it
    marker = encoder.encode(stand_in)

    def with_stand_ins(value: Any) -> Any:
        if isinstance(value, StreamedList) and len(value):
            lists.append(value)
            return [stand_in]
        if isinstance(value, dict):
            return {k: with_stand_ins(v) for k, v in value.items()}
        if isinstance(value, list):
            return [with_stand_ins(v) for v in value]
        return value

    def pieces() -> Iterator[str]:
        rows = iter(lists)
        for part in encoder.iterencode(with_stand_ins(document)):
            if part.endswith(marker):  # "[", the list's newline and indent (none without indent), then its one item
                opening = part[: -len(marker)]
                yield opening
                cut = opening.rfind("\n")
                yield from _rows(encoder, next(rows), opening[cut:] if cut >= 0 else "")
            else:
                yield part

    parts: list[str] = []
    for part in pieces():
        parts.append(part)
        if len(parts) >= BLOCK_PARTS and "\n" in part:
            text = "".join(parts)
            cut = text.rindex("\n")
            parts = [text[cut:]]
            yield text[:cut]
    yield "".join(parts)


def _rows(encoder: json.JSONEncoder, rows: StreamedList, newline_indent: str) -> Iterator[str]:
    """Each row as encoder.iterencode writes it at this indent, the rows separated as a list's items are. A flat
    dict (str keys; str, int, bool or None values: a manifest entry) is written here with json's C string
    encoder; anything else by the encoder itself, re-indented (no string holds a raw newline, so each line's
    indent is all that differs)."""
    step = encoder.indent if isinstance(encoder.indent, str) else " " * (encoder.indent or 0)
    inner, between = newline_indent + step, encoder.item_separator + newline_indent
    string = encode_basestring_ascii if encoder.ensure_ascii else encode_basestring
    key_sep, item_sep = encoder.key_separator, encoder.item_separator + inner

    def flat(row: Any) -> str | None:
        if type(row) is not dict:
            return None
        pairs = []
        for key, value in sorted(row.items()) if encoder.sort_keys else row.items():
            if type(key) is not str:
                return None
            if type(value) is str:
                text = string(value)
            elif type(value) is int:
                text = int.__repr__(value)
            elif value is None or type(value) is bool:
                text = "null" if value is None else "true" if value else "false"
            else:
                return None
            pairs.append(string(key) + key_sep + text)
        return "{" + inner + item_sep.join(pairs) + newline_indent + "}" if pairs else "{}"

    for n, row in enumerate(rows):
        text = flat(row)
        yield (between if n else "") + (text if text is not None else encoder.encode(row).replace("\n", newline_indent))
