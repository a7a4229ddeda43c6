"""Fixtures for the reliability suite: fresh copies of the one shared build, and backoff waits recorded
instead of slept (local Hubs: tests/conftest.py). A tally of what was survived is printed at the end."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def dist(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built release at tmp_path/dist/v5 that a test may damage."""
    dest = tmp_path / "dist" / built.name
    shutil.copytree(built, dest)
    return dest


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff waits (huggingface_hub's and hf-release's) are recorded, not slept: faults cost no time."""
    import huggingface_hub.utils._http as http

    import release.hub.client

    waited: list[float] = []

    class Clock:
        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            waited.append(float(seconds))

    monkeypatch.setattr(http, "time", Clock())
    monkeypatch.setattr(release.hub.client, "sleep", waited.append)
    return waited
