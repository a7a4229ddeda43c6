"""A safetensors header, read without reading tensor data: the one reader of safetensors files.

Layout: 8 bytes little-endian N, N bytes of JSON `{name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}`,
then the data buffer. The safetensors library (`safe_open`) reads the tensors and the metadata, and refuses what
breaks its layout rules: N ≤ 100,000,000, offsets (relative to the buffer) contiguous from 0 with no hole or
overlap, each tensor's bytes = numel × dtype bits / 8, and the last end to be the end of the file. What it lets
through is caught here from the header's own JSON, read within the same bound: duplicate names (the library
silently keeps the last). `__metadata__` is optional (timm and diffusers' own writers may leave it out): checking
what a library requires of it is the caller's business.

Two wordings of a refusal, both kept as they were when there were two readers: `read_safetensors_header` (the
format readers) names the damage itself — which tensor, which offset — and bounds a tensor's dimensions
(MAX_DIMS) before the library reads the file; `read_header` (the build's check-weights and verify's re-read)
quotes the library's own words and asks for the kind's `__metadata__.format`.

Sharded weights (`model.safetensors.index.json`, `diffusion_pytorch_model.safetensors.index.json`) are read
as one set: every shard the index names is in the release, and every tensor is where the index says.
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safetensors import SafetensorError, safe_open

from release.errors import CheckFailed, Problem
from release.formats.common import Files, as_int, join, one_line, open_regular, read_json_object
from release.formats.safetensors_layout import DTYPE_BYTES, MAX_HEADER_BYTES

DTYPE_BITS: dict[str, int] = {
    **{name: 8 * width for name, width in DTYPE_BYTES.items()},
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
}
MAX_DIMS = 16
MAX_INDEX_BYTES = 64 * 1024 * 1024  # a 1,000-shard MoE index is ~10 MB
FIX = "re-save it with safetensors (save_file, or the library's save_pretrained), or copy it again if it was cut short"


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count


@dataclass(frozen=True)
class SafetensorsHeader:
    tensors: Mapping[str, TensorInfo]
    metadata: Mapping[str, str] | None  # None: the file has no __metadata__ (as timm writes it)

    @property
    def parameter_count(self) -> int:
        return sum(t.numel for t in self.tensors.values())


@dataclass(frozen=True)
class Weights:
    """One model's weights: a single file or the shards of an index, as one set of tensors."""

    files: tuple[str, ...]  # the safetensors files read, paths in the repo
    index: str | None  # the index, when sharded
    tensors: Mapping[str, TensorInfo] = field(repr=False)

    @property
    def parameter_count(self) -> int:
        return sum(t.numel for t in self.tensors.values())

    @property
    def parameters_by_dtype(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for t in self.tensors.values():
            counts[t.dtype] += t.numel
        return dict(counts.most_common())

    @property
    def dtype(self) -> str | None:
        """The dtype holding the most parameters (the Hub shows the same breakdown)."""
        by_dtype = self.parameters_by_dtype
        return next(iter(by_dtype), None)


def _bad(label: str, what: str) -> Problem:
    return Problem(label, f"is not a valid safetensors file: {what}; {FIX}")


def _library_read(path: Path) -> SafetensorsHeader:
    """The tensors and metadata as the library reads them (raises SafetensorError, OSError or ValueError)."""
    with safe_open(path, framework="np") as f:
        tensors = {}
        for name in f.keys():
            tensor_slice = f.get_slice(name)
            tensors[name] = TensorInfo(tensor_slice.get_dtype(), tuple(tensor_slice.get_shape()))
        return SafetensorsHeader(tensors, f.metadata())


def _parse_header(raw: bytes | str) -> tuple[Any, list[tuple[dict[str, Any], list[str]]]]:
    """The header's JSON with every object's repeated keys (what the library lets through); the header is last."""
    objects: list[tuple[dict[str, Any], list[str]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        counts = Counter(k for k, _ in items)
        obj = dict(items)
        objects.append((obj, sorted(k for k, n in counts.items() if n > 1)))
        return obj

    return json.loads(raw, object_pairs_hook=pairs), objects


@one_line
def read_safetensors_header(path: Path, label: str) -> tuple[SafetensorsHeader | None, list[Problem]]:
    """The header of one safetensors file, validated against the file's size; tensor data is not read.
    Each damage is named in the reader's own words; the library then reads the tensors and metadata."""
    size, problem = open_regular(path, label)
    if problem is not None or size is None:
        return None, [problem] if problem else []
    if size < 8:
        return None, [_bad(label, f"it has {size} bytes, fewer than the 8-byte header length")]
    try:
        with open(path, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            if length > MAX_HEADER_BYTES:
                return None, [
                    _bad(
                        label,
                        f"its header length is {length:,} bytes, above the library's limit of {MAX_HEADER_BYTES:,}",
                    )
                ]
            if 8 + length > size:
                return None, [
                    Problem(
                        label,
                        f"is cut short: its header claims {length:,} bytes but only {size - 8:,} follow "
                        "the length; copy the file again",
                    )
                ]
            raw = f.read(length)
    except OSError as exc:
        return None, [Problem(label, f"cannot be read ({exc.strerror or exc}); check the file's permissions")]
    try:
        header, objects = _parse_header(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, [_bad(label, "its header is not UTF-8")]
    except (ValueError, RecursionError) as exc:
        return None, [_bad(label, f"its header is not JSON ({' '.join(str(exc).split())[:120]})")]
    if not isinstance(header, dict):
        return None, [_bad(label, "its header is not a JSON object")]
    repeated = sorted({key for _, keys in objects for key in keys})
    problems = [
        Problem(
            label, f"names '{name}' twice in its header; loaders keep only the last, so re-save it with unique names"
        )
        for name in repeated
    ]
    problems += _layout_problems(header, size - 8 - length, label)
    if problems:
        return None, problems
    try:
        return _library_read(path), []
    except (SafetensorError, OSError, ValueError) as exc:  # what the library refuses and the layout above does not name
        return None, [_bad(label, " ".join(str(exc).split())[:200])]


def _layout_problems(header: dict[str, Any], buffer: int, label: str) -> list[Problem]:
    """What is wrong with the header's metadata, then the first thing wrong with its layout (none: both hold)."""
    problems = []
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        problems.append(_bad(label, "__metadata__ must map strings to strings"))
    return problems + _tensor_layout_problems(header, buffer, label)


def _tensor_layout_problems(header: dict[str, Any], buffer: int, label: str) -> list[Problem]:
    spans: list[tuple[int, int, str]] = []
    for name, entry in header.items():
        if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= set(
            entry
        ):  # the library ignores extra keys
            return [_bad(label, f"tensor '{name}' is not {{dtype, shape, data_offsets}}")]
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in DTYPE_BITS:
            return [_bad(label, f"tensor '{name}' has dtype {dtype!r}, which safetensors does not define")]
        if not (
            isinstance(shape, list) and len(shape) <= MAX_DIMS and all(as_int(d) is not None and d >= 0 for d in shape)
        ):
            return [_bad(label, f"tensor '{name}' has shape {str(shape)[:80]}, not a list of sizes")]
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(as_int(o) is not None for o in offsets)
            and 0 <= offsets[0] <= offsets[1]
        ):
            return [_bad(label, f"tensor '{name}' has data_offsets {str(offsets)[:80]}, not [begin, end]")]
        bits = TensorInfo(dtype, tuple(shape)).numel * DTYPE_BITS[dtype]
        if bits % 8 or offsets[1] - offsets[0] != bits // 8:
            return [
                _bad(
                    label,
                    f"tensor '{name}' ({dtype} {list(shape)}) needs {bits / 8:,.0f} bytes "
                    f"but its data_offsets span {offsets[1] - offsets[0]:,}",
                )
            ]
        spans.append((offsets[0], offsets[1], name))
    spans.sort()
    end = 0
    for begin, stop, name in spans:
        if begin != end:
            what = (
                "overlaps the tensor before it"
                if begin < end
                else f"starts at {begin:,}, leaving a hole after byte {end:,}"
            )
            return [_bad(label, f"tensor '{name}' {what}")]
        end = stop
    if end > buffer:
        return [
            Problem(
                label,
                f"is cut short: its tensors need {end:,} bytes of data but the file holds {buffer:,}; "
                "copy the file again",
            )
        ]
    if end < buffer:
        return [_bad(label, f"{buffer - end:,} bytes after the last tensor are not covered by any tensor")]
    return []


def read_header(path: Path, label: str, weights_format: str | None = "pt") -> SafetensorsHeader:
    """The header as the library validates it, its refusal in its own words (raises CheckFailed), then what it lets
    through; `__metadata__.format` must be `weights_format` (the kind's loader's, release/kinds/kind.py Kind), None: not
    asked."""
    try:
        header = _library_read(path)
    except SafetensorError as exc:
        raise CheckFailed(
            Problem(
                label,
                f"is not a valid safetensors file: {exc}; re-save it with safetensors, or copy it again if it was cut "
                "short",
            )
        ) from None
    except (OSError, ValueError) as exc:
        raise CheckFailed(
            Problem(label, f"cannot be read as safetensors: {exc}; point the spec at the weights file itself")
        ) from None
    with open(path, "rb") as f:  # the library has checked the length against its limit and the file's size
        (length,) = struct.unpack("<Q", f.read(8))
        raw, objects = _parse_header(f.read(min(length, MAX_HEADER_BYTES)))
    problems = [
        Problem(
            label,
            f"tensor name {name!r} appears twice in the header; loaders keep only one, so re-save with unique names",
        )
        for name in objects[-1][1]
    ]
    metadata = raw.get("__metadata__", {})
    problems += [
        Problem(label, f"__metadata__ key {key!r} appears twice in the header; re-save with one value per key")
        for obj, repeated in objects
        if obj is metadata
        for key in repeated
    ]
    found = (header.metadata or {}).get("format")
    if weights_format is not None and found != weights_format:
        problems.append(
            Problem(
                label,
                f"__metadata__.format is {found!r}; transformers expects {weights_format!r}, "
                f"so re-save with metadata={{'format': {weights_format!r}}}",
            )
        )
    if problems:
        raise CheckFailed(problems)
    return header


SHARD = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.safetensors$")


@one_line
def read_weights(
    files: Files, folder: str = "", stems: tuple[str, ...] = ("model",)
) -> tuple[Weights | None, list[Problem]]:
    """The weights in `folder`: for the first stem found, `{stem}.safetensors`, else `{stem}.safetensors.index.json`
    with its shards. (None, []) when the folder holds neither: the caller says what that library expects."""
    for stem in stems:
        single = join(folder, f"{stem}.safetensors")
        if single in files:
            header, problems = read_safetensors_header(files[single], single)
            if header is None:
                return None, problems
            return Weights((single,), None, header.tensors), []
        index = join(folder, f"{stem}.safetensors.index.json")
        if index in files:
            return _read_sharded(files, folder, index)
    return None, []


def _read_sharded(files: Files, folder: str, index: str) -> tuple[Weights | None, list[Problem]]:
    data, problem = read_json_object(files[index], index, max_bytes=MAX_INDEX_BYTES)
    if problem is not None or data is None:
        return None, [problem] if problem else []
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        return None, [
            Problem(
                index, "has no weight_map of tensor name → shard file; re-save the model with the library that wrote it"
            )
        ]
    problems: list[Problem] = []
    tensors: dict[str, TensorInfo] = {}
    shards = sorted(set(weight_map.values()))
    holds: dict[str, set[str]] = {}
    for shard in shards:
        name = join(folder, shard)
        if "/" in shard or name not in files:
            problems.append(
                Problem(index, f"names shard '{shard}', which is not in the release; add it (or re-save the model)")
            )
            continue
        header, shard_problems = read_safetensors_header(files[name], name)
        problems += shard_problems
        if header is None:
            continue
        holds[shard] = set(header.tensors)
        twice = [t for t in header.tensors if t in tensors]
        if twice:
            problems.append(
                Problem(name, f"holds {len(twice):,} tensors another shard holds too ('{twice[0]}'); re-save the model")
            )
        unmapped = [t for t in header.tensors if weight_map.get(t) != shard]
        if unmapped:
            problems.append(
                Problem(
                    index,
                    f"does not map {len(unmapped):,} tensors to '{shard}', the shard that holds them "
                    f"('{unmapped[0]}'); loaders would not load them, so re-save the model",
                )
            )
        tensors.update(header.tensors)
    missing = [t for t, shard in weight_map.items() if shard in holds and t not in holds[shard]]
    if missing:
        problems.append(
            Problem(
                index,
                f"maps {len(missing):,} tensors to shards that do not hold them ('{missing[0]}' → "
                f"'{weight_map[missing[0]]}'); re-save the model",
            )
        )
    if problems:
        return None, problems
    return Weights(tuple(join(folder, s) for s in shards), index, tensors), []
