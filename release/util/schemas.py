"""The JSON Schemas and data tables shipped in release/schemas/, read as package data."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from release.util.jsonio import parse


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema (or data table) shipped as a data file in release/schemas/."""
    return parse(resources.files("release").joinpath("schemas", name).read_bytes())
