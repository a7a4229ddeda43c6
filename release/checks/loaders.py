"""Which loader reads the staged file of each role: the one table build's checks and verify's re-reading of a
staged release (card/staged.py) share, so that both parse a file the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from release.checks.bench import load_bench
from release.checks.config import ConfigRules, load_config
from release.checks.launcher import load_launcher
from release.checks.ledger import ColumnType, load_ledger
from release.checks.library_files import load_processor
from release.checks.model_files import load_eval, load_generation_config, load_tokenizer_file
from release.formats.pickle_weights import read_pickle_weights
from release.formats.safetensors_header import read_header

Loader = Callable[[Path, str], Any]  # (the staged file, its label) → what it parsed; CheckFailed when it cannot

# the roles whose loader needs nothing but the file
PLAIN: Mapping[str, Loader] = {
    "launcher": load_launcher,
    "bench": load_bench,
    "eval": load_eval,
    "generation-config": load_generation_config,
    "tokenizer": load_tokenizer_file,
    "processor": load_processor,
}


def role_loaders(
    *,
    baseline: str | None,
    column_types: Mapping[str, ColumnType] | None,
    weights_format: str | None,
    config_rules: ConfigRules | None = None,
) -> dict[str, Loader]:
    """Every role's loader, those that read the spec's settings or the kind's rules given them."""

    def ledger(path: Path, label: str) -> Any:
        return load_ledger(path, label, baseline=baseline, column_types=column_types)

    def config(path: Path, label: str) -> Any:
        return load_config(path, label, config_rules)

    def weights(path: Path, label: str) -> Any:
        if label.endswith(".bin"):  # pickle weights: the zip's structure only, never unpickled
            return read_pickle_weights(path, label)
        return read_header(path, label, weights_format)

    return {**PLAIN, "ledger": ledger, "config": config, "weights": weights}
