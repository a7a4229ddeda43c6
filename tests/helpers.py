"""Plain helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "artifacts" / "v5"


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a file, failing loudly if `old` is not there (so a test cannot silently test nothing)."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))
