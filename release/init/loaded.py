"""Roles by the ML libraries' own loading rules, for files init would otherwise leave `extra`: the code files a
config's `auto_map` names (and what they import relatively), processor configs, pickle weights and their index, a
variant's index. A file a library loads is checked and carded, never `extra`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from release.formats.custom_code import AUTO_MAP_FILES, code_files_named
from release.formats.pickle_weights import PICKLE_WEIGHTS, WEIGHTS_INDEX, is_torch_zip
from release.util.jsonio import read_json_or_none

# transformers' AutoProcessor / AutoImageProcessor / AutoFeatureExtractor / AutoVideoProcessor read these
PROCESSOR_FILES = {
    "preprocessor_config.json": "feature extractor / image processor config",
    "processor_config.json": "processor config (AutoProcessor)",
    "video_preprocessor_config.json": "video processor config",
}
READ_LIMIT = 8 * 1024 * 1024


def loaded_role(path: Path, index: Any) -> tuple[str, str] | None:
    """(role, why) of a file a library loads by its name; `index`: the file's JSON when it is an index, else None."""
    name = path.name
    if name in PROCESSOR_FILES:
        return "processor", PROCESSOR_FILES[name]
    if PICKLE_WEIGHTS.match(name):
        if is_torch_zip(path):
            return "weights", "pickle weights (torch.save zip), transformers' pytorch_model.bin"
        return None
    if WEIGHTS_INDEX.match(name) and isinstance(index, dict) and "weight_map" in index:
        return "weights-index", "weight_map"
    return None


def code_roles(folder: Path, paths: list[Path]) -> dict[Path, str]:
    """The code files the auto_map of each config (config.json, tokenizer and processor configs) reaches → why."""
    exists = {p.relative_to(folder).as_posix(): p for p in paths}
    configs = [
        (rel, data)
        for rel, p in exists.items()
        if p.name in AUTO_MAP_FILES and isinstance(data := read_json_or_none(p, max_bytes=READ_LIMIT), dict)
    ]
    reached, _ = code_files_named(configs, exists)  # what is wrong is build's to say
    return {exists[rel]: why for rel, why in reached.items()}
