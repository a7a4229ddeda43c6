"""What `init` writes for the author to replace: placeholders are not content.

Besides the summary, a kind may give [card] values only the author can write (`Kind.card_placeholders`, e.g. the
class a model is loaded with): init writes each kind placeholder's value, and while the key still holds it the
same rules apply.

init's one-line summary states only what the files give ("tiny-llama: a LlamaForCausalLM model
(transformers), weights in 2 safetensors files."): a reader learns nothing from it that the card's Model
table does not say. While it is intact, build warns (the card still renders: a first build shows the
author what the card looks like) and records it in release.json's `card`; push refuses to publish it
without `--allow-placeholder`. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from release.kinds import kind_named, names
from release.kinds.kind import CardPlaceholder

SUMMARY_MARK = "from the files: replace it with your own words"  # the TOML comment init writes beside it


def init_summary(name: str, what: str, kind: str, shards: int) -> str:
    """The summary init writes: `NAME: WHAT (KIND)[, weights in N safetensors files].`"""
    weights = f", weights in {shards} safetensors file{'s' if shards != 1 else ''}" if shards else ""
    return f"{name}: {what} ({kind}){weights}."


def _summary_shape() -> re.Pattern[str]:
    kinds = "|".join(map(re.escape, names()))
    return re.compile(rf"[^\s:]+: an? .+ \((?:{kinds})\)(?:, weights in \d+ safetensors files?)?\.")


def placeholders(card: dict[str, Any], kind_placeholders: tuple[CardPlaceholder, ...] = ()) -> tuple[str, ...]:
    """The [card] keys still holding init's placeholder (a summary of init's shape, a kind placeholder's value), in a
    fixed order."""
    summary = card.get("summary")
    found = ("summary",) if isinstance(summary, str) and _summary_shape().fullmatch(summary.strip()) else ()
    return found + tuple(p.key for p in kind_placeholders if _dotted(card, p.key) == p.value)


def _dotted(card: dict[str, Any], key: str) -> Any:
    node: Any = card
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def kind_placeholders(kind: object) -> tuple[CardPlaceholder, ...]:
    """The placeholders of the kind of that name (a release.json card record's `kind`); () for none."""
    found = kind_named(kind)
    return found.card_placeholders if found is not None else ()


def placeholder_message(key: str, kind_placeholders: tuple[CardPlaceholder, ...] = ()) -> str:
    own = next((p for p in kind_placeholders if p.key == key), None)
    if own is not None:
        return f"[card] {key} is still init's placeholder ({own.value!r}); {own.fix}"
    return (
        f"[card] {key} is still init's placeholder ({SUMMARY_MARK.split(':')[0]} only); "
        "say in your own words what this release is and what it is for"
    )
