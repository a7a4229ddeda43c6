"""Card fixtures: one build of the example release shared by the read-only tests, copies for the rest."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import EXAMPLE


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example release built once (from a copy of artifacts/v5); returns dist/v5. Do not modify it."""
    from release.build import build
    from release.spec import load_spec

    root = tmp_path_factory.mktemp("card-build")
    shutil.copytree(EXAMPLE, root / "artifacts" / "v5")
    return build(load_spec(root / "artifacts" / "v5" / "release.toml"), root / "dist").dist


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
