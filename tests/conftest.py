"""Shared fixtures: a private copy of the example release, and builds of it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

# Every Hub the tests talk to is a local one on loopback, which does not speak Xet.
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.pop("HF_TOKEN", None)
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ.setdefault("HF_HOME", "/tmp/hf-release-tests-home")

from tests.helpers import EXAMPLE


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of artifacts/v5 (spec and files) that a test may change; returns the spec path."""
    dest = tmp_path / "artifacts" / "v5"
    shutil.copytree(EXAMPLE, dest)
    return dest / "release.toml"


@pytest.fixture
def build_example(example: Path, tmp_path: Path) -> Callable[..., Path]:
    """Build the copied example into tmp_path/dist; returns the staged folder."""
    from release.build import build
    from release.spec import load_spec

    def run(spec: Path = example) -> Path:
        return build(load_spec(spec), tmp_path / "dist").dist

    return run
