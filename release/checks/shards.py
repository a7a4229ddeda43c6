"""Check sharded weights as a set: model.safetensors.index.json against the shards the release holds.

Every shard the index names is a weights file of the release; every weights file beside the index is
named by it; every tensor of every shard is in `weight_map`, pointing at the shard that holds it, and
no tensor is in two shards; `metadata.total_size` is the sum of the tensors' bytes.
"""

from __future__ import annotations

import math
import posixpath

from release.checks.common import read_json
from release.errors import CheckFailed, Problem
from release.formats.safetensors_header import SafetensorsHeader
from release.formats.safetensors_layout import DTYPE_BYTES
from release.pipeline import Context, Done, Skipped, StepResult


def index_problems(index: dict, label: str, shards: dict[str, SafetensorsHeader], folder: str) -> list[Problem]:
    """`shards`: the release's weights files in the index's folder, by path_in_repo."""
    problems: list[Problem] = []
    weight_map = index.get("weight_map")
    metadata = index.get("metadata")
    if not isinstance(weight_map, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()
    ):
        return [Problem(label, "has no `weight_map` object of tensor name → shard file; write it with save_pretrained")]
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if isinstance(total, bool) or not isinstance(total, int):
        problems.append(Problem(label, "has no integer metadata.total_size; write it with save_pretrained"))

    def path(shard: str) -> str:
        return posixpath.normpath(posixpath.join(folder, shard)) if folder else posixpath.normpath(shard)

    named = sorted(set(weight_map.values()))
    for shard in named:
        if path(shard) not in shards:
            count = sum(1 for v in weight_map.values() if v == shard)
            problems.append(
                Problem(
                    label,
                    f"weight_map points {count} tensor(s) at {shard}, which is not a weights file of the release; add "
                    "the shard (role weights) or fix the index",
                )
            )
    for shard_path in sorted(set(shards) - {path(s) for s in named}):
        problems.append(
            Problem(
                shard_path,
                f"is not named in {posixpath.basename(label)}'s weight_map; regenerate the index or remove the file",
            )
        )

    holder: dict[str, str] = {}
    tensor_bytes = 0
    for shard_path, header in sorted(shards.items()):
        shard = posixpath.relpath(shard_path, folder) if folder else shard_path
        for name, tensor in header.tensors.items():
            if name in holder:
                problems.append(
                    Problem(shard_path, f"tensor {name} is also in {holder[name]}; a tensor belongs to one shard")
                )
                continue
            holder[name] = shard_path
            tensor_bytes += math.prod(tensor.shape) * DTYPE_BYTES.get(tensor.dtype, 0)
            mapped = weight_map.get(name)
            if mapped is None:
                problems.append(
                    Problem(shard_path, f"tensor {name} is missing from {posixpath.basename(label)}'s weight_map")
                )
            elif mapped != shard:
                problems.append(Problem(label, f"weight_map points {name} at {mapped}, but {shard} holds it"))
    present = {path(s) for s in named} <= set(shards)
    for name in sorted(set(weight_map) - set(holder)):
        if present:
            problems.append(
                Problem(label, f"weight_map names tensor {name} in {weight_map[name]}, which does not hold it")
            )
    if isinstance(total, int) and not isinstance(total, bool) and present and total != tensor_bytes:
        problems.append(
            Problem(
                label,
                f"metadata.total_size is {total:,} but the shards' tensors hold {tensor_bytes:,} bytes; "
                "regenerate the index",
            )
        )
    return problems


class CheckWeightsIndex:
    name = "check-weights-index"

    def run(self, ctx: Context) -> StepResult:
        # pickle weights and their index are checked with them (checks/pickles.py)
        indexes = [f for f in ctx.by_role("weights-index") if ".bin.index" not in posixpath.basename(f.path_in_repo)]
        if not indexes:
            return Skipped("no weights index (model.safetensors.index.json) in this release")
        headers = ctx.parsed.of(SafetensorsHeader)
        weights = [f.path_in_repo for f in ctx.by_role("weights") if not f.path_in_repo.endswith(".bin")]
        if len(headers) != len(weights):
            return Skipped("a weights file is invalid (reported above); the index is checked once all shards read")
        for f in indexes:
            folder = posixpath.dirname(f.path_in_repo)
            try:
                index = read_json(f.staged, f.path_in_repo)
            except CheckFailed as exc:
                ctx.problems.extend(exc.problems)
                continue
            if not isinstance(index, dict):
                ctx.problem(
                    f.path_in_repo, "is not a JSON object with weight_map and metadata; write it with save_pretrained"
                )
                continue
            shards = {p: h for p, h in headers.items() if posixpath.dirname(p) == folder}
            ctx.problems.extend(index_problems(index, f.path_in_repo, shards, folder))
        return Done(f"{len(indexes)} weights index(es) checked against {len(weights)} shard(s)")
