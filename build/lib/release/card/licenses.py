"""The Hub's license ids and base-model relations, read from the one data file that lists them.

release/schemas/card.schema.json holds the list (card.license.id's enum, from
https://huggingface.co/docs/hub/repositories-licenses), so the spec schema and the card lint can never
disagree about what the Hub accepts.
"""

from __future__ import annotations

from ..spec import load_schema

_CARD = load_schema("card.schema.json")["properties"]
HUB_LICENSES: frozenset[str] = frozenset(_CARD["license"]["properties"]["id"]["enum"])
BASE_MODEL_RELATIONS: tuple[str, ...] = tuple(_CARD["metadata"]["properties"]["base_model_relation"]["enum"])
