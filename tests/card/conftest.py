"""Card fixtures: one build of the example release shared by the read-only tests, copies for the rest."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import EXAMPLE


@pytest.fixture
def staged(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built release (real copies, no hard links) that a test may edit."""
    dest = tmp_path / "staged" / "v5"
    shutil.copytree(built, dest)
    return dest


@pytest.fixture
def spec_copy(tmp_path: Path) -> Callable[..., Path]:
    """A copy of artifacts/v5 whose release.toml a test may change; returns the spec path."""

    def make(name: str = "spec") -> Path:
        dest = tmp_path / name / "artifacts" / "v5"
        shutil.copytree(EXAMPLE, dest)
        return dest / "release.toml"

    return make
