"""Pickle weights (`torch.save`'s zip: `pytorch_model.bin`, its shards `pytorch_model-0000N-of-0000M.bin`), checked
cheaply and never unpickled: the zip's end record and central directory are present, every entry lies within the
file, and the archive holds the `data.pkl` torch.load reads. A cut or padded file fails here, naming it; what the
pickle would build is left to the library (loading a pickle can run code).

The loading rules transformers applies to the names (pickle weights, their index, a variant's files) are here too,
so that init, build and the card read them alike.
"""

from __future__ import annotations

import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from release.errors import CheckFailed, Problem

# transformers' names: pytorch_model.bin, pytorch_model-00001-of-00002.bin, and a variant's pytorch_model.fp16.bin
PICKLE_WEIGHTS = re.compile(r"^pytorch_model(?:\.(?P<variant>[A-Za-z0-9_]+))?(?:-\d{5}-of-\d{5})?\.bin$")
# a weights index: model.safetensors.index.json, pytorch_model.bin.index.json, and a variant's
# model.safetensors.index.fp16.json (save_pretrained(variant=…) puts the variant before .json)
WEIGHTS_INDEX = re.compile(r"^.+\.(?:safetensors|bin)\.index(?:\.(?P<variant>[A-Za-z0-9_]+))?\.json$")
# a variant's safetensors, as save_pretrained(variant="fp16") names them: model.fp16.safetensors, sharded
# model.fp16-00001-of-00002.safetensors
SAFETENSORS_VARIANT = re.compile(r"^model\.(?P<variant>[A-Za-z0-9_]+)(?:-\d{5}-of-\d{5})?\.safetensors$")
ZIP_MAGIC = b"PK\x03\x04"
MAX_ENTRIES = 1_000_000  # torch.save writes one entry per storage: a 1,000-tensor model has ~1,000
FIX = "save the model again with save_pretrained, or copy the file again if it was cut"


@dataclass(frozen=True)
class PickleWeights:
    """What was read of a pickle weights file without unpickling it: its size and its archive's entries."""

    size: int
    entries: int


def is_torch_zip(path: Path) -> bool:
    """Starts as torch.save's zip does (init gives such a .bin the role weights; an older raw pickle stays extra)."""
    try:
        with path.open("rb") as f:
            return f.read(4) == ZIP_MAGIC
    except OSError:
        return False


def variant_of(name: str) -> str | None:
    """The variant a weights file's or index's name carries (model.fp16.safetensors → fp16), None without one."""
    for pattern in (SAFETENSORS_VARIANT, PICKLE_WEIGHTS, WEIGHTS_INDEX):
        match = pattern.match(name)
        if match is not None:
            return match.group("variant")
    return None


def read_pickle_weights(path: Path, label: str) -> PickleWeights:
    """The zip structure of one pickle weights file (raises CheckFailed naming it); no byte of the pickle is run."""
    try:
        size = path.stat().st_size
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ENTRIES:
                raise CheckFailed(Problem(label, f"holds {len(infos):,} zip entries, more than {MAX_ENTRIES:,}"))
            directory = _directory_offset(path, size)
            for info in infos:
                end = info.header_offset + 30 + len(info.filename.encode()) + info.compress_size
                if info.header_offset < 0 or end > directory:
                    raise CheckFailed(
                        Problem(
                            label,
                            f"zip entry {info.filename} runs past the file's data (ends at {end:,} of "
                            f"{directory:,} bytes); {FIX}",
                        )
                    )
            if not any(i.filename == "data.pkl" or i.filename.endswith("/data.pkl") for i in infos):
                raise CheckFailed(Problem(label, f"is a zip without data.pkl, not torch.save's format; {FIX}"))
    except zipfile.BadZipFile as exc:
        raise CheckFailed(
            Problem(label, f"is not a complete torch.save zip ({exc}: no central directory, the file is cut); {FIX}")
        ) from None
    except OSError as exc:
        raise CheckFailed(Problem(label, f"cannot be read: {exc.strerror or exc}")) from None
    return PickleWeights(size, len(infos))


def _directory_offset(path: Path, size: int) -> int:
    """Where the central directory starts (the entries' data ends there), from the end record zipfile validated."""
    with path.open("rb") as f:
        tail_size = min(size, 65536 + 22)
        f.seek(size - tail_size)
        tail = f.read(tail_size)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return size
    offset = struct.unpack("<I", tail[at + 16 : at + 20])[0]
    if (
        offset == 0xFFFFFFFF
    ):  # zip64: the offset is in the zip64 end record zipfile read; the entries are bounded by size
        return size
    return offset
