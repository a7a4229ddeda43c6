"""Check safetensors weights: each file's header (release/formats/safetensors_header.py, the one reader: the
safetensors library's layout rules, plus the duplicates it lets through and the kind's `__metadata__.format`),
then the kind's tensor rules.
"""

from __future__ import annotations

from release.checks.config import the_config
from release.checks.pickles import check_pickle_weights
from release.errors import CheckFailed
from release.formats.safetensors_header import SafetensorsHeader, read_header
from release.pipeline import Context, Done, Skipped, StepResult


class CheckWeights:
    """Every weights file's header, then the kind's tensor rules: over all shards together when the
    release has a weights index (a sharded model is one model), else per file."""

    name = "check-weights"

    def run(self, ctx: Context) -> StepResult:
        files = ctx.by_role("weights")
        pickles = [f for f in files if f.path_in_repo.endswith(".bin")]
        files = [f for f in files if f not in pickles]
        checked = check_pickle_weights(ctx, pickles)
        if not files and not pickles and ctx.by_role("config") and ctx.selected_kind().config_needs_weights:
            ctx.problem(
                ctx.by_role("config")[0].path_in_repo,
                "has no weights beside it (no model.safetensors, shards with their index, or pytorch_model.bin); "
                "transformers: 'does not appear to have a file named model.safetensors'; add the weights "
                "save_pretrained wrote (role weights)",
            )
            return Done("no weights for this config")
        if not files:
            return Skipped("no weights in this release") if not pickles else checked
        headers: dict[str, SafetensorsHeader] = {}
        for f in files:
            try:
                headers[f.path_in_repo] = read_header(f.staged, f.path_in_repo, ctx.selected_kind().weights_format)
            except CheckFailed as exc:
                ctx.problems.extend(exc.problems)
                continue
            ctx.parsed.add(f.path_in_repo, headers[f.path_in_repo])
        config = the_config(ctx)
        if config is not None and len(headers) == len(files):
            rules = ctx.selected_kind().tensor_problems
            check_shapes = all(f.spec is None or f.spec.check_shapes for f in files)
            indexes = ctx.by_role("weights-index")
            if indexes:
                union = {name: t for h in headers.values() for name, t in h.tensors.items()}
                ctx.problems.extend(rules(config, union, indexes[0].path_in_repo, check_shapes))
            else:
                for f in files:
                    shapes = f.spec is None or f.spec.check_shapes
                    ctx.problems.extend(rules(config, headers[f.path_in_repo].tensors, f.path_in_repo, shapes))
        return Done(f"{len(headers)}/{len(files)} weights files valid")
