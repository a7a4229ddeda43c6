"""Role `code` for the files a config's `auto_map` names (and what they import relatively): transformers loads them
with trust_remote_code. The roles the libraries give by a file's name are release/checks/library_roles.py's."""

from __future__ import annotations

from pathlib import Path

from release.formats.custom_code import AUTO_MAP_FILES, code_files_named
from release.util.jsonio import read_json_or_none

READ_LIMIT = 8 * 1024 * 1024


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
