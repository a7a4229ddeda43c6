"""What `init` writes for the author to replace: placeholders are not content.

init's one-line summary states only what the files give ("tiny-llama: a LlamaForCausalLM model
(transformers), weights in 2 safetensors files."): a reader learns nothing from it that the card's Model
table does not say. While it is intact, build warns (the card still renders: a first build shows the
author what the card looks like) and records it in release.json's `card`; push refuses to publish it
without `--allow-placeholder`. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from release.kinds import names

SUMMARY_MARK = "from the files: replace it with your own words"  # the TOML comment init writes beside it


def init_summary(name: str, what: str, kind: str, shards: int) -> str:
    """The summary init writes: `NAME: WHAT (KIND)[, weights in N safetensors files].`"""
    weights = f", weights in {shards} safetensors file{'s' if shards != 1 else ''}" if shards else ""
    return f"{name}: {what} ({kind}){weights}."


def _summary_shape() -> re.Pattern[str]:
    kinds = "|".join(map(re.escape, names()))
    return re.compile(rf"[^\s:]+: an? .+ \((?:{kinds})\)(?:, weights in \d+ safetensors files?)?\.")


def placeholders(card: dict[str, Any]) -> tuple[str, ...]:
    """The [card] keys still holding init's placeholder (a summary of init's shape), in a fixed order."""
    summary = card.get("summary")
    return ("summary",) if isinstance(summary, str) and _summary_shape().fullmatch(summary.strip()) else ()


def placeholder_message(key: str) -> str:
    return (
        f"[card] {key} is still init's placeholder ({SUMMARY_MARK.split(':')[0]} only); "
        "say in your own words what this release is and what it is for"
    )
