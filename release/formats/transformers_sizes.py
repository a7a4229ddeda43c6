"""A transformers config's sizes through the model type's own names (`PretrainedConfig.attribute_map` and the
renames a config class converts in `__init__`), kept as data in release/schemas/transformers-attribute-maps.json.
Its own module: both the config reader and the weights facts (transformers_weights) need it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.formats.common import as_int
from release.util.schemas import load_schema

_DATA = load_schema("transformers-attribute-maps.json")
ATTRIBUTE_MAPS: dict[str, dict[str, str]] = _DATA["attribute_map"]
LEGACY: dict[str, dict[str, str]] = _DATA["legacy"]
SIZES: list[str] = _DATA["sizes"]  # the concepts a card and the checks read


@dataclass(frozen=True)
class Size:
    value: int
    key: str  # where config.json keeps it: "n_layer", "num_hidden_layers", "text_config.hidden_size"

    def named(self, concept: str) -> str:
        return concept if self.key == concept else f"{concept} (stored as '{self.key}')"


def size(config: Mapping[str, Any], concept: str) -> Size | None:
    """A size through the model type's own names: the stored key, the alias, the legacy key, then text_config."""
    model_type = config.get("model_type")
    renames = ATTRIBUTE_MAPS.get(model_type, {}) if isinstance(model_type, str) else {}
    keys = [renames.get(concept, concept), concept, *(alias for alias, real in renames.items() if real == concept)]
    keys += (
        [LEGACY[model_type][concept]] if isinstance(model_type, str) and concept in LEGACY.get(model_type, {}) else []
    )
    for key in keys:
        value = as_int(config.get(key))
        if value is not None:
            return Size(value, key)
    text = config.get("text_config")
    if isinstance(text, dict) and text is not config:
        found = size(text, concept)
        if found is not None:
            return Size(found.value, f"text_config.{found.key}")
    return None
