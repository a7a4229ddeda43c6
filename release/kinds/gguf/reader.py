"""GGUF (llama.cpp's format), read from its header without memory-mapping the file or loading the vocabulary.

Layout (versions 2 and 3, little-endian): magic `GGUF`, u32 version, u64 tensor count, u64 key/value count;
each key/value is a string key (u64 length + UTF-8), a u32 value type and the value (arrays: u32 item type,
u64 count, items); then per tensor: name, u32 n_dims, n_dims × u64 dims, u32 ggml type, u64 offset relative
to the data section, which starts at the next multiple of `general.alignment` (default 32). llama.cpp
expects each tensor at the previous one's end padded to the alignment, a name under 64 bytes, at most 4
dims, and the first dim a multiple of the type's block size.

Bounds: key/values, tensors, strings, arrays (items in all, nesting) — see the constants; token and merge
arrays are skipped over, only their lengths kept. Split models (`NAME-00001-of-0000N.gguf`) are read as a
set: every part present, `split.no`/`split.count` agreeing with the names, `split.tensors.count` with the
tensors of all parts. `gguf.GGUFReader` (which loads the whole vocabulary into memory) checks it in tests.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.formats.common import Files, one_line, open_regular
from release.util.schemas import load_schema

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_KV = 65_536  # real files have ~30–60
MAX_TENSORS = 1_000_000  # a 1T-parameter MoE split in parts has a few thousand per part
MAX_STRING = 64 * 1024 * 1024  # one metadata string; longer is refused
KEEP_STRING = 1024 * 1024  # a string value kept in the facts (chat templates are a few KB); longer: its length only
KEEP_ARRAY = 64  # arrays this short are kept (tags, languages); longer ones (tokens, merges): their length only
MAX_ARRAY_ITEMS = 32_000_000  # items in all arrays of a file (a 256k vocabulary + merges + scores is ~1M)
MAX_ARRAY_DEPTH = 3
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NAME = 64  # GGML_MAX_NAME, terminating NUL included
CHUNK = 1024 * 1024

_TABLES = load_schema("gguf-types.json")
# ggml type id → (name, elements per block, bytes per block); general.file_type → its name (e.g. "Q4_K_M")
GGML_TYPES: dict[int, tuple[str, int, int]] = {int(k): (v[0], v[1], v[2]) for k, v in _TABLES["ggml_types"].items()}
FILE_TYPES: dict[int, str] = {int(k): v for k, v in _TABLES["file_types"].items()}
# GGUF value type → struct format of a scalar (8: string, 9: array)
SCALARS: dict[int, str] = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
STRING, ARRAY = 8, 9
SPLIT_NAME = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")
FIX = "convert the model again with llama.cpp's convert_hf_to_gguf.py (or the gguf package's GGUFWriter)"


@dataclass(frozen=True)
class GGUFTensor:
    name: str
    ggml_type: str
    shape: tuple[int, ...]  # as GGUF stores it: the fastest-varying dimension first
    offset: int  # relative to the data section
    n_elements: int
    n_bytes: int


@dataclass(frozen=True)
class GGUFFile:
    """What one GGUF file's header says."""

    label: str
    version: int
    alignment: int
    data_offset: int  # where the data section starts in the file
    file_size: int
    metadata: Mapping[str, Any]  # scalars, strings up to KEEP_STRING, arrays up to KEEP_ARRAY items (as tuples)
    array_lengths: Mapping[str, int]  # every array key → its item count (tokens, merges… kept only as this)
    tensors: tuple[GGUFTensor, ...]

    def get(self, key: str) -> Any:
        return self.metadata.get(key)

    @property
    def architecture(self) -> str | None:
        value = self.get("general.architecture")
        return value if isinstance(value, str) else None

    def arch_value(self, name: str) -> int | None:
        value = self.get(f"{self.architecture}.{name}") if self.architecture else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None


# llama.cpp's architectures that encode and do not generate (gguf-py's MODEL_ARCH names)
ENCODERS = frozenset(
    {
        "bert",
        "nomic-bert",
        "nomic-bert-moe",
        "jina-bert-v2",
        "jina-bert-v3",
        "neo-bert",
        "modern-bert",
        "t5encoder",
        "clip",
        "wavtokenizer-dec",
    }
)


@dataclass(frozen=True)
class GGUFModel:
    """One model: a single GGUF file, or the parts of a split one read together. Facts come from the first
    part's metadata (llama.cpp's gguf-split writes it there) and every part's tensors."""

    files: tuple[str, ...]  # paths in the repo, in part order
    architecture: str | None
    name: str | None  # general.name
    context_length: int | None  # {arch}.context_length
    embedding_length: int | None
    block_count: int | None
    file_type: int | None  # general.file_type
    file_type_name: str | None  # e.g. "Q4_K_M", from llama_ftype
    tensor_types: Mapping[str, int]  # ggml type → number of tensors of that type
    parameter_count: int  # elements of every tensor of every part
    chat_template: bool  # tokenizer.chat_template present and non-empty
    vocab_size: int | None  # length of tokenizer.ggml.tokens
    split_count: int  # 1 for a single file
    pooling_type: int | None = None  # {arch}.pooling_type: an embedding model's (llama.cpp's --embedding)

    @property
    def language_model(self) -> bool:
        """A model that generates text: a vocabulary, no pooling, and not one of llama.cpp's encoder-only
        architectures (an embedding model, a vision projector)."""
        return bool(self.vocab_size) and self.pooling_type is None and (self.architecture or "") not in ENCODERS


class _Stop(Exception):
    """A header that cannot be read further: its one problem."""


class _Cursor:
    """Sequential reads of a header through a 1 MiB window; skipped bytes are never read."""

    def __init__(self, f: Any, size: int) -> None:
        self.f, self.size, self.pos, self.window, self.start, self.items = f, size, 0, b"", 0, 0

    def skip(self, n: int, what: str) -> None:
        if self.pos + n > self.size:
            raise _Stop(
                f"is cut short: {what} at byte {self.pos:,} needs {n:,} bytes, but the file ends at {self.size:,}; "
                "copy the file again"
            )
        self.pos += n

    def take(self, n: int, what: str) -> bytes:
        self.skip(n, what)
        if not (self.start <= self.pos - n and self.pos <= self.start + len(self.window)):
            self.f.seek(self.pos - n)
            self.window, self.start = self.f.read(max(n, CHUNK)), self.pos - n
        return self.window[self.pos - n - self.start : self.pos - self.start]

    def unpack(self, fmt: str, what: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str, keep: int) -> str | None:
        length = self.unpack("<Q", what)
        if length > MAX_STRING:
            raise _Stop(
                f"{what} at byte {self.pos - 8:,} claims {length:,} bytes, more than a GGUF string may hold here; {FIX}"
            )
        if length > keep:
            self.skip(length, what)
            return None
        return self.take(length, what).decode("utf-8", errors="replace")

    def value(self, vtype: int, key: str, depth: int = 0) -> tuple[Any, int | None]:
        """(the value, or None when only its length is kept; the array length, or None)."""
        if vtype in SCALARS:
            return self.unpack(SCALARS[vtype], f"the value of '{key}'"), None
        if vtype == STRING:
            return self.string(f"the value of '{key}'", KEEP_STRING), None
        if vtype != ARRAY or depth >= MAX_ARRAY_DEPTH:
            raise _Stop(
                f"key '{key}' has value type {vtype}, which GGUF does not define; {FIX}"
                if vtype != ARRAY
                else f"key '{key}' nests arrays deeper than {MAX_ARRAY_DEPTH} levels; {FIX}"
            )
        item_type, count = (
            self.unpack("<I", f"the array type of '{key}'"),
            self.unpack("<Q", f"the array length of '{key}'"),
        )
        smallest = (
            struct.calcsize(SCALARS[item_type]) if item_type in SCALARS else 8 if item_type in (STRING, ARRAY) else 1
        )
        if count * smallest > self.size - self.pos:
            raise _Stop(
                f"is cut short or damaged: array '{key}' claims {count:,} items, more than the rest of the file "
                f"({self.size - self.pos:,} bytes; the file ends at {self.size:,}) can hold; copy the file again"
            )
        self.items += count
        if self.items > MAX_ARRAY_ITEMS:
            raise _Stop(
                f"its arrays hold more than {MAX_ARRAY_ITEMS:,} items in all, more than hf-release reads; {FIX}"
            )
        keep = count <= KEEP_ARRAY
        if item_type in SCALARS and not keep:
            self.skip(count * smallest, f"array '{key}'")
            return None, count
        items = []
        for _ in range(count):  # a vocabulary: 8 bytes read and the rest skipped per token, nothing kept
            item = (
                self.string(f"an item of '{key}'", KEEP_STRING if keep else -1)
                if item_type == STRING
                else self.value(item_type, key, depth + 1)[0]
            )
            if keep:
                items.append(item)
        return (tuple(items) if keep else None), count


@one_line
def read_gguf(path: Path, label: str) -> tuple[GGUFFile | None, list[Problem]]:
    """One GGUF file's header, metadata and tensor infos, checked against the file's size."""
    size, problem = open_regular(path, label)
    if problem is not None or size is None:
        return None, [problem] if problem else []
    try:
        with open(path, "rb") as f:
            return _read(_Cursor(f, size), label)
    except _Stop as stop:
        return None, [Problem(label, str(stop))]
    except OSError as exc:
        return None, [Problem(label, f"cannot be read ({exc.strerror or exc}); check the file's permissions")]


def _read(c: _Cursor, label: str) -> tuple[GGUFFile | None, list[Problem]]:
    magic = c.take(4, "the magic number")
    if magic != MAGIC:
        raise _Stop(f"is not a GGUF file: it starts with {magic!r}, not b'GGUF'; {FIX}")
    version = c.unpack("<I", "the version")
    if (swapped := struct.unpack(">I", struct.pack("<I", version))[0]) in VERSIONS:
        raise _Stop(
            f"is a big-endian GGUF file (version {swapped}); "
            "llama.cpp reads little-endian files on the machines the Hub serves, so convert it again without "
            "--bigendian"
        )
    if version not in VERSIONS:
        raise _Stop(f"is GGUF version {version}; llama.cpp reads versions 2 and 3, so {FIX}")
    tensor_count, kv_count = c.unpack("<Q", "the tensor count"), c.unpack("<Q", "the key/value count")
    for count, limit, what in ((kv_count, MAX_KV, "metadata key/values"), (tensor_count, MAX_TENSORS, "tensors")):
        if count > limit:
            raise _Stop(
                f"claims {count:,} {what}, more than hf-release reads ({limit:,}); the header is damaged, so {FIX}"
            )
    metadata: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    types: dict[str, int] = {}
    for _ in range(kv_count):
        key = c.string("a metadata key", MAX_NAME * 1024)
        if not key:
            raise _Stop(f"has an empty or over-long metadata key at byte {c.pos:,}; {FIX}")
        if key in types:
            raise _Stop(f"has metadata key '{key}' twice; llama.cpp refuses duplicate keys, so {FIX}")
        types[key] = c.unpack("<I", f"the type of '{key}'")
        value, length = c.value(types[key], key)
        metadata[key] = value
        if length is not None:
            lengths[key] = length
    alignment = DEFAULT_ALIGNMENT
    if "general.alignment" in metadata:
        alignment = metadata["general.alignment"]
        if types["general.alignment"] != 4 or alignment == 0 or alignment & (alignment - 1):
            raise _Stop(f"general.alignment is {alignment!r}; GGUF needs a u32 power of two, so {FIX}")
    infos = []
    for _ in range(tensor_count):
        name = c.string("a tensor name", MAX_NAME * 1024)
        if name is None:
            raise _Stop(f"has a tensor name over {MAX_NAME * 1024:,} bytes at byte {c.pos:,}; {FIX}")
        n_dims = c.unpack("<I", f"the dimension count of '{name}'")
        if n_dims > MAX_DIMS:
            raise _Stop(f"tensor '{name}' has {n_dims:,} dimensions; ggml allows at most {MAX_DIMS}, so {FIX}")
        dims = tuple(c.unpack("<Q", f"a dimension of '{name}'") for _ in range(n_dims))
        infos.append((name, dims, c.unpack("<I", f"the type of '{name}'"), c.unpack("<Q", f"the offset of '{name}'")))
    data_offset = -(-c.pos // alignment) * alignment
    tensors, problems = _tensors(infos, data_offset, alignment, c.size, label)
    return GGUFFile(label, version, alignment, data_offset, c.size, metadata, lengths, tensors), problems


def _tensors(
    infos: list[tuple[str, tuple[int, ...], int, int]], data_offset: int, alignment: int, size: int, label: str
) -> tuple[tuple[GGUFTensor, ...], list[Problem]]:
    problems: list[Problem] = []
    tensors: list[GGUFTensor] = []
    seen: set[str] = set()
    expected = 0
    past_end: list[GGUFTensor] = []
    for name, dims, type_id, offset in infos:
        if type_id not in GGML_TYPES:
            problems.append(
                Problem(label, f"tensor '{name}' has ggml type {type_id}, which llama.cpp does not know; {FIX}")
            )
            continue
        type_name, block, type_size = GGML_TYPES[type_id]
        n_elements = 1
        for dim in dims:
            n_elements *= dim
        tensor = GGUFTensor(name, type_name, dims, offset, n_elements, n_elements // block * type_size)
        if name in seen:
            problems.append(Problem(label, f"has tensor '{name}' twice; llama.cpp refuses duplicate names, so {FIX}"))
        seen.add(name)
        if len(name.encode()) >= MAX_NAME:
            problems.append(
                Problem(
                    label,
                    f"tensor name '{name}' is {len(name.encode())} bytes; llama.cpp allows at most {MAX_NAME - 1}",
                )
            )
        if dims and dims[0] % block:
            problems.append(
                Problem(
                    label,
                    f"tensor '{name}' ({type_name}) has a first dimension of {dims[0]:,}, not a multiple of "
                    f"its block size {block}; {FIX}",
                )
            )
        end = data_offset + offset + tensor.n_bytes
        if offset == expected and end > size:
            past_end.append(tensor)
        elif end > size:
            problems.append(
                Problem(
                    label,
                    f"tensor '{name}' claims data at offset {offset:,}, ending at byte {end:,}, past the end of "
                    f"the file at {size:,}; the header is damaged, so {FIX}",
                )
            )
        elif offset != expected:
            problems.append(
                Problem(
                    label,
                    f"tensor '{name}' is at data offset {offset:,}; llama.cpp expects {expected:,} (right after "
                    f"the tensor before it, padded to {alignment}), so {FIX}",
                )
            )
        expected = offset + -(-tensor.n_bytes // alignment) * alignment
        tensors.append(tensor)
    if past_end:
        first = past_end[0]
        more = f" (and {len(past_end) - 1:,} tensors after it)" if len(past_end) > 1 else ""
        problems.append(
            Problem(
                label,
                f"is cut short: tensor '{first.name}' ({first.ggml_type}, {first.n_bytes:,} bytes){more} ends at "
                f"byte {data_offset + first.offset + first.n_bytes:,}, past the end of the file at "
                f"{size:,}; copy the file again (llama.cpp refuses it: tensor data is not within the file bounds)",
            )
        )
    return tuple(tensors), problems


@one_line
def read_gguf_files(files: Files) -> tuple[tuple[GGUFModel, ...], list[Problem]]:
    """Every model among a release's `.gguf` files: each single file, and each split set read as one."""
    problems: list[Problem] = []
    sets: dict[tuple[str, int], dict[int, str]] = {}
    singles = []
    for name in sorted(n for n in files if n.endswith(".gguf")):
        match = SPLIT_NAME.match(name)
        if match:
            sets.setdefault((match["stem"], int(match["count"])), {})[int(match["no"])] = name
        else:
            singles.append(name)
    models = []
    for name in singles:
        gguf, file_problems = read_gguf(files[name], name)
        problems += file_problems
        if gguf is not None:
            count = gguf.get("split.count")
            if isinstance(count, int) and count > 1:
                problems.append(
                    Problem(
                        name,
                        f"is part of a model split in {count} files (split.count) but is not named as a part; "
                        "keep llama.cpp's gguf-split names (NAME-00001-of-0000N.gguf)",
                    )
                )
            elif not file_problems:
                models.append(_model((gguf,)))
    for (stem, count), parts in sorted(sets.items()):
        model, set_problems = _read_set(files, stem, count, parts)
        problems += set_problems
        if model is not None:
            models.append(model)
    return tuple(models), problems


def _read_set(files: Files, stem: str, count: int, parts: dict[int, str]) -> tuple[GGUFModel | None, list[Problem]]:
    first = f"{stem}-00001-of-{count:05d}.gguf"
    missing = [no for no in range(1, count + 1) if no not in parts][:6]  # count ≤ 99,999 (five digits in the name)
    problems = [
        Problem(
            f"{stem}-{no:05d}-of-{count:05d}.gguf",
            f"is missing: part {no} of the {count} parts of {first}; "
            "add every part (llama.cpp loads a split model from all of them)",
        )
        for no in missing[:5]
    ]
    if len(missing) > 5:
        problems.append(
            Problem(first, f"{count - len(parts):,} of its {count} parts are missing in all; add every part")
        )
    problems += [
        Problem(name, f"is numbered past the part count {count} in its name; rename it or remove it")
        for no, name in parts.items()
        if not 1 <= no <= count
    ]
    read: list[GGUFFile] = []
    for no in sorted(p for p in parts if 1 <= p <= count):
        gguf, file_problems = read_gguf(files[parts[no]], parts[no])
        problems += file_problems
        if gguf is None or file_problems:
            continue
        read.append(gguf)
        if gguf.get("split.count") != count or gguf.get("split.no") != no - 1:
            problems.append(
                Problem(
                    gguf.label,
                    f"has split.count {gguf.get('split.count')!r} and split.no {gguf.get('split.no')!r}; "
                    f"its name makes it part {no} of {count} (split.no {no - 1}); keep the names "
                    "llama.cpp's gguf-split gave the parts",
                )
            )
    if problems:
        return None, problems
    total = read[0].get("split.tensors.count")
    held = sum(len(g.tensors) for g in read)
    if total != held:
        problems.append(
            Problem(
                first,
                f"says the parts hold {total!r} tensors (split.tensors.count) but they hold {held:,}; "
                "split the model again with llama.cpp's gguf-split",
            )
        )
    names = Counter(t.name for g in read for t in g.tensors)
    twice = sorted(n for n, k in names.items() if k > 1)
    if twice:
        problems.append(
            Problem(first, f"tensor '{twice[0]}' is in more than one part ({len(twice):,} such); split the model again")
        )
    return (None, problems) if problems else (_model(tuple(read)), [])


def _model(parts: tuple[GGUFFile, ...]) -> GGUFModel:
    head = parts[0]
    types: Counter[str] = Counter(t.ggml_type for g in parts for t in g.tensors)
    raw_type = head.get("general.file_type")
    file_type = raw_type if isinstance(raw_type, int) and not isinstance(raw_type, bool) else None
    name = head.get("general.name")
    template = head.get("tokenizer.chat_template")
    return GGUFModel(
        files=tuple(g.label for g in parts),
        architecture=head.architecture,
        name=name if isinstance(name, str) else None,
        context_length=head.arch_value("context_length"),
        embedding_length=head.arch_value("embedding_length"),
        block_count=head.arch_value("block_count"),
        file_type=file_type,
        file_type_name=FILE_TYPES.get(file_type) if file_type is not None else None,
        tensor_types=dict(sorted(types.items())),
        parameter_count=sum(t.n_elements for g in parts for t in g.tensors),
        chat_template=bool(template) or ("tokenizer.chat_template" in head.metadata and template is None),
        vocab_size=head.array_lengths.get("tokenizer.ggml.tokens"),
        split_count=len(parts),
        pooling_type=head.arch_value("pooling_type"),
    )
