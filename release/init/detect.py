"""What a folder of files is: each file's role and the release kind, from names and (small) contents.

`hf-release init` writes its spec from this. Names are the agreed ones (see coordination in the README): roles weights,
weights-index, config, generation-config, tokenizer, eval, launcher, ledger, bench, license, extra, plus the roles the
kinds' own files take, by the registry's rules (release/kinds/registry.py: by name, by path, or to every file in a
folder an index file names); the kind by the rule build uses too (release/kinds/). Only small files are opened (at
most READ_LIMIT bytes each): a multi-GB shard is recognised by its name and its header length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from release.checks.library_roles import library_role
from release.checks.license import identify_license
from release.init.loaded import code_roles
from release.kinds import detect_kind as detect_release_kind
from release.kinds import folder_roles
from release.kinds.kind import Kind
from release.util.jsonio import read_json_or_none
from release.util.schemas import load_schema

READ_LIMIT = 8 * 1024 * 1024  # bytes read from one file to recognise it
MAX_FILES = 10_000

LICENSE_NAMES = re.compile(r"^(LICEN[SC]E|COPYING)(\.(md|txt))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Detected:
    path: Path
    role: str
    why: str  # what gave the role away, for the spec's comment
    license_id: str | None = None


def detect_role(path: Path, in_repo: str | None = None) -> Detected:
    """The role of one file, from its name (and its path in the repo, when known) and, for small files, its contents."""
    name = path.name
    loaded = library_role(path, in_repo)  # a kind's own file, or one a library loads, by the libraries' rules
    if loaded is not None:
        return Detected(path, *loaded)
    if LICENSE_NAMES.match(name):
        license_id = identify_license(path)
        return Detected(path, "license", f"license text ({license_id or 'not recognised'})", license_id)
    if name.endswith(".tsv") and _is_ledger(_text(path) or ""):
        return Detected(path, "ledger", "autoresearch ledger header")
    if name.endswith(".sh") and re.search(r"\bvllm\s+serve\b", _text(path) or ""):
        return Detected(path, "launcher", "runs `vllm serve`")
    if name.endswith(".json"):
        data = _json(path)
        if _is_bench(data):
            return Detected(path, "bench", "llm-inference-bench result")
        if _is_lm_eval(data):
            return Detected(path, "eval", "lm-evaluation-harness results")
    return Detected(path, "extra", "not recognised")


def detect_kind(
    files: list[Detected], folder: Path | None = None, readme_tags: list[str] | None = None
) -> tuple[Kind, str]:
    """The release kind and why, from the folder's files and its config.json (the rule build uses), and the tags of
    the README.md a library wrote beside them (which build never sees: init writes such a kind into the spec)."""
    names = [f.path.relative_to(folder).as_posix() if folder else f.path.name for f in files]
    return detect_release_kind(
        next((_json(f.path) for f in files if f.role == "config"), None), names, readme_tags or ()
    )


def list_files(folder: Path) -> list[Path]:
    """Every regular file under `folder` (hidden ones skipped), in path order."""
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if len(files) > MAX_FILES:
        raise ValueError(f"holds {len(files)} files, more than {MAX_FILES}")
    return files


def scan(folder: Path, files: list[Path] | None = None) -> list[Detected]:
    """Each of `files` (default: every regular file under `folder`, hidden ones skipped), in path order, with its
    role."""
    files = list_files(folder) if files is None else files
    # the folders an index file at the root names: their files take its kind's role, whatever their names
    claimed = folder_roles(lambda index: _json(folder / index) if (folder / index).is_file() else None)
    code = code_roles(folder, files)  # the files an auto_map names: the model's own code
    return [
        Detected(p, *owned)
        if (owned := _claimed(p, folder, claimed))
        else Detected(p, "code", code[p])
        if p in code
        else detect_role(p, p.relative_to(folder).as_posix())
        for p in files
    ]


def _claimed(path: Path, folder: Path, claimed: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The role (and why) the file's top folder gives it, None for a file at the root or in no claimed folder."""
    parts = path.relative_to(folder).parts
    return claimed.get(parts[0]) if len(parts) > 1 else None


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > READ_LIMIT:
            return None
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _json(path: Path) -> Any:
    return read_json_or_none(path, max_bytes=READ_LIMIT)


def _is_ledger(text: str) -> bool:
    header = text.split("\n", 1)[0].rstrip("\r").split("\t")
    return {"commit", "status", "description"} <= set(header)


def _is_bench(data: Any) -> bool:
    return isinstance(data, dict) and jsonschema.Draft202012Validator(load_schema("bench.schema.json")).is_valid(data)


def _is_lm_eval(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("results"), dict)
        and any(k in data for k in ("versions", "n-shot", "configs"))
    )
