"""Check config.json: the DFlash2 drafter schema plus the rules that tie its fields together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import CheckFailed, Problem
from ..pipeline import Context, StepResult
from .common import read_json, run_per_file, schema_problems


def load_config(path: Path, label: str) -> dict[str, Any]:
    data = read_json(path, label)
    problems = schema_problems("dflash2-config.schema.json", data, label)
    if not problems:
        problems = cross_field_problems(data, label)
    if problems:
        raise CheckFailed(problems)
    return data


def cross_field_problems(config: dict[str, Any], label: str) -> list[Problem]:
    problems = []
    layers, types = config["num_hidden_layers"], config["layer_types"]
    if len(types) != layers:
        problems.append(Problem(label, f"layer_types has {len(types)} entries but num_hidden_layers is {layers}; they must match"))
    dflash = config["dflash_config"]
    beyond = [i for i in dflash["target_layer_ids"] if i >= config["num_target_layers"]]
    if beyond:
        problems.append(
            Problem(
                label,
                f"dflash_config.target_layer_ids {beyond} are not below num_target_layers {config['num_target_layers']}",
            )
        )
    if dflash["mask_token_id"] >= config["vocab_size"]:
        problems.append(
            Problem(label, f"dflash_config.mask_token_id {dflash['mask_token_id']} is not below vocab_size {config['vocab_size']}")
        )
    dtypes = {config[k] for k in ("dtype", "torch_dtype") if k in config}
    if len(dtypes) > 1:
        problems.append(Problem(label, f"dtype and torch_dtype disagree ({' vs '.join(sorted(dtypes))})"))
    return problems


class CheckConfig:
    name = "check-config"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "config", "config", load_config)


def the_config(ctx: Context) -> dict[str, Any] | None:
    """The release's one valid config.json, if it has exactly one."""
    configs = ctx.evidence.get("config", {})
    return next(iter(configs.values())) if len(configs) == 1 else None
