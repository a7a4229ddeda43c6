"""Pickle weights (`pytorch_model.bin`, its shards and `pytorch_model.bin.index.json`) as weights: each file's zip
structure (release/formats/pickle_weights.py; never unpickled), the index against the shards the release holds, and
a warning that loading them runs a pickle. The tensor rules need tensor names and shapes, which only unpickling
gives: they are left to the library's own (weights_only) loader."""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from pathlib import Path

from release.checks.common import read_json
from release.errors import CheckFailed, Problem
from release.formats.pickle_weights import read_pickle_weights
from release.pipeline import Context, Done, StepResult
from release.staged.staged_file import StagedFile

logger = logging.getLogger(__name__)

PICKLE_WARNING = (
    "{files}: the weights are pickle (torch.save), which can run code when loaded; hf-release checked the zip "
    "structure only; prefer safetensors (save_pretrained's default, safe_serialization=True)"
)


def check_pickle_weights(ctx: Context, files: Sequence[StagedFile]) -> StepResult:
    """Every pickle weights file's structure, and each pickle index against the shards beside it."""
    staged = list(files)
    read = 0
    for f in staged:
        try:
            ctx.parsed.add(f.path_in_repo, read_pickle_weights(f.staged, f.path_in_repo))
            read += 1
        except CheckFailed as exc:
            ctx.problems.extend(exc.problems)
    if staged:
        logger.warning("warning: " + PICKLE_WARNING.format(files=", ".join(f.path_in_repo for f in staged)))
    for index in (i for i in ctx.by_role("weights-index") if ".bin.index" in posixpath.basename(i.path_in_repo)):
        folder = posixpath.dirname(index.path_in_repo)
        shards = {
            posixpath.relpath(f.path_in_repo, folder or ".")
            for f in staged
            if posixpath.dirname(f.path_in_repo) == folder
        }
        ctx.problems.extend(pickle_index_problems(index.staged, index.path_in_repo, shards))
    return Done(f"{read}/{len(staged)} pickle weights file(s): zip structure valid (not unpickled)")


def pickle_index_problems(path: Path, label: str, shards: set[str]) -> list[Problem]:
    """pytorch_model.bin.index.json: every shard its weight_map names is a weights file of the release, and every
    pickle shard beside it is named (tensor names are inside the pickles, which are not read)."""
    try:
        index = read_json(path, label)
    except CheckFailed as exc:
        return exc.problems
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        return [Problem(label, "has no `weight_map` object of tensor name → shard file; write it with save_pretrained")]
    problems = []
    named = set(weight_map.values())
    for shard in sorted(named - shards):
        count = sum(1 for v in weight_map.values() if v == shard)
        problems.append(
            Problem(
                label,
                f"weight_map points {count} tensor(s) at {shard}, which is not a weights file of the release; "
                "transformers cannot load the model without it; add the shard (role weights) or fix the index",
            )
        )
    for shard in sorted(shards - named):
        problems.append(
            Problem(shard, f"is not named in {posixpath.basename(label)}'s weight_map; regenerate the index")
        )
    return problems
