"""The roles the ML libraries' own loading rules give a file, by its name (and a few bytes of it), shared by init
(which gives them) and build (which warns where the spec gave such a file role `extra`): a file the release's library
loads is checked and carded under its role, never an unchecked `extra`.

- a kind's own files, by the registry's rules (release/kinds/registry.py);
- safetensors weights (by their header) and an index with a `weight_map`;
- what transformers' Auto classes read beyond them: processor configs, pickle weights (a torch.save zip) and their
  index, config.json, generation_config.json, the tokenizer's files.
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import Any

from release.formats.pickle_weights import PICKLE_WEIGHTS, WEIGHTS_INDEX, is_torch_zip
from release.kinds import owned_role, role_kind
from release.pipeline import Context, Done, Skipped, StepResult
from release.util.jsonio import read_json_or_none

logger = logging.getLogger(__name__)

READ_LIMIT = 8 * 1024 * 1024  # bytes read from one file to recognise it
# transformers' AutoTokenizer reads these
TOKENIZER_FILES = frozenset(
    {
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "tokenizer.model",
        "vocab.json",
        "vocab.txt",
        "merges.txt",
        "added_tokens.json",
        "chat_template.jinja",
        "chat_template.json",
    }
)
# transformers' AutoProcessor / AutoImageProcessor / AutoFeatureExtractor / AutoVideoProcessor read these
PROCESSOR_FILES = {
    "preprocessor_config.json": "feature extractor / image processor config",
    "processor_config.json": "processor config (AutoProcessor)",
    "video_preprocessor_config.json": "video processor config",
}


def library_role(path: Path, in_repo: str | None = None) -> tuple[str, str] | None:
    """(role, why) of a file a library loads, from its name (its path in the repo, when known) and its first bytes;
    None: no library's rule names it."""
    name = path.name
    owned = owned_role(name, in_repo)  # a file only one kind has, by its name or its folder: its role
    if owned is not None:
        return owned
    if name.endswith(".safetensors") and safetensors_header(path):
        return "weights", "safetensors header"
    if name.endswith(".safetensors.index.json") and "weight_map" in (_json(path) or {}):
        return "weights-index", "weight_map"
    if name in PROCESSOR_FILES:
        return "processor", PROCESSOR_FILES[name]
    if PICKLE_WEIGHTS.match(name) and is_torch_zip(path):
        return "weights", "pickle weights (torch.save zip), transformers' pytorch_model.bin"
    if WEIGHTS_INDEX.match(name) and "weight_map" in (_json(path) or {}):
        return "weights-index", "weight_map"
    if name == "config.json":
        return "config", "config.json"
    if name == "generation_config.json":
        return "generation-config", "generation_config.json"
    if name in TOKENIZER_FILES:
        return "tokenizer", "tokenizer file name"
    return None


def safetensors_header(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(9)
        size = path.stat().st_size
    except OSError:
        return False
    return len(head) == 9 and 0 < struct.unpack("<Q", head[:8])[0] < size and head[8:9] == b"{"


def _json(path: Path) -> Any:
    data = read_json_or_none(path, max_bytes=READ_LIMIT)
    return data if isinstance(data, dict) else None


class CheckExtras:
    """Step: warn where the spec gives role `extra` to a file the release's library loads (its kind's `library_reads`
    or the kind's own roles): such a file goes out unchecked and uncarded. A warning, not a refusal: the author may
    mean it (a second tokenizer kept for reference), and one line names the role that checks it."""

    name = "check-extras"

    def run(self, ctx: Context) -> StepResult:
        extras = ctx.by_role("extra")
        if not extras:
            return Skipped("no file has role 'extra'")
        kind = ctx.selected_kind()
        loaded = []
        for f in extras:
            found = library_role(f.staged, f.path_in_repo)
            if found is None:
                continue
            role, why = found
            owner = role_kind(role)
            if owner == kind.name or (owner is None and role in kind.library_reads):
                loaded.append(f.path_in_repo)
                logger.warning(
                    "warning: %s has role 'extra', but %s loads it (%s): as 'extra' it is published unchecked; "
                    'give it role "%s" in the spec\'s [[files]]',
                    f.path_in_repo,
                    kind.library_name,
                    why,
                    role,
                )
        return Done(f"{len(extras)} extra file(s), {len(loaded)} of them loaded by the release's library")
