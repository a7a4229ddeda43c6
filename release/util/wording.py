"""Words every message shares: a count with its noun, singular or plural."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `2 files` (`plural` for nouns that do not take an s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
