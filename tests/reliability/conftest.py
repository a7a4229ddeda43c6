"""Fixtures for the reliability suite: backoff waits recorded instead of slept (copies of the shared build and
local Hubs: tests/conftest.py). A tally of what was survived is printed at the end."""

from __future__ import annotations

import time
from typing import Any

import pytest


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
