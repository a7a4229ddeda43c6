"""Words every message shares: a count with its noun, singular or plural."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 file`, `2 files` (`plural` for nouns that do not take an s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


SIZE_UNITS = ("kB", "MB", "GB", "TB", "PB")


def human_size(n: int) -> str:
    """A size for people, one way everywhere: `512 B`, `512.6 kB`, `3.2 GB` (decimal units, as the Hub shows
    file sizes). JSON keeps integers; where the exact count matters (two sizes that differ), `exact_size`."""
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in SIZE_UNITS:
        value /= 1000
        if value < 999.95 or unit == SIZE_UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def exact_size(n: int) -> str:
    """A size to the byte, for people: `512,584 bytes` (a size that differs by a few bytes, a limit)."""
    return counted(n, "byte")
