"""What an adapter kind's card needs of the base model it loads on, shared by the adapter kinds (a PEFT adapter,
a diffusers LoRA): the base is named on the card only as a Hub id (a local path names the writer's disk, which no
reader can load), the spec's `[card.metadata] base_model` names it where the files do not, and the usage code loads
the base at `[card.usage] base_revision` (else the revision the files record), so that the adapter is shown on the
base it was trained on rather than whatever the base's main branch holds later.
"""

from __future__ import annotations

from typing import Any

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from release.errors import Problem

GIVE_BASE = 'give it in the spec as [card.metadata] base_model = "ORG/NAME"'


def is_hub_id(name: str) -> bool:
    """Whether huggingface_hub accepts `name` as a repo id (a local path like /data/base or ./base is not one)."""
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def given_base(card: dict[str, Any]) -> Any:
    """The spec's [card.metadata] base_model, as written (None when not given)."""
    return card.get("metadata", {}).get("base_model")


def base_revision(card: dict[str, Any], written: str | None = None) -> str | None:
    """The base's revision the usage code pins: the spec's [card.usage] base_revision, else the one the files record."""
    given = card.get("usage", {}).get("base_revision")
    return given if isinstance(given, str) and given else written


def revision_argument(revision: str | None) -> str:
    """`, revision="…"` for a base's from_pretrained call; nothing when no revision is known."""
    return f', revision="{revision}"' if revision else ""


def base_needed(file: str, what: str) -> Problem:
    """The one line that asks for the base in the spec: `what` says why the files do not name a Hub id."""
    return Problem(file, f"{what}, so the card cannot name the base this adapter loads on; {GIVE_BASE}")
