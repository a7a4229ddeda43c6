"""Check config.json: valid JSON holding an object, then the rules of the release's kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.checks.common import read_json, run_per_file
from release.errors import CheckFailed, Problem
from release.pipeline import Context, StepResult

ConfigRules = Callable[[dict[str, Any], str], list[Problem]]


@dataclass(frozen=True)
class ModelConfig:
    """A valid config.json."""

    data: dict[str, Any]


def load_config(path: Path, label: str, rules: ConfigRules | None = None) -> ModelConfig:
    """config.json parsed strictly; `rules` (the kind's) add their problems."""
    data = read_json(path, label)
    if not isinstance(data, dict):
        raise CheckFailed(
            Problem(label, f"holds a JSON {type(data).__name__}, not an object; config.json is an object of settings")
        )
    problems = rules(data, label) if rules else []
    if problems:
        raise CheckFailed(problems)
    return ModelConfig(data)


class CheckConfig:
    name = "check-config"

    def run(self, ctx: Context) -> StepResult:
        rules = ctx.selected_kind().config_problems
        return run_per_file(ctx, "config", lambda path, label: load_config(path, label, rules))


def the_config(ctx: Context) -> dict[str, Any] | None:
    """The release's one valid config.json, if it has exactly one."""
    config = ctx.parsed.one(ModelConfig)
    return config.data if config else None
