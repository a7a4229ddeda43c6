"""The Hub's license ids and base-model relations, read from the one data file that lists them.

release/schemas/hub-licenses.json holds the lists (from https://huggingface.co/docs/hub/repositories-licenses);
the spec schema refers to them and the local Hub reads them, so the spec, the card lint and the local Hub
can never disagree about what the Hub accepts.
"""

from __future__ import annotations

from release.spec import hub_lists

HUB_LICENSES: frozenset[str] = frozenset(hub_lists()["license"]["enum"])
BASE_MODEL_RELATIONS: tuple[str, ...] = tuple(hub_lists()["base_model_relation"]["enum"])
