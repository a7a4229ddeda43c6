"""Fixtures for the reliability suite: one build shared by every test, fresh copies of it, local Hubs,
and backoff waits recorded instead of slept. A tally of what was survived is printed at the end."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from release.localhub import FaultPlan, LocalHub, running_hub
from tests.reliability.helpers import READ_TOKEN, TOKEN


@pytest.fixture
def dist(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built release at tmp_path/dist/v5 that a test may damage."""
    dest = tmp_path / "dist" / built.name
    shutil.copytree(built, dest)
    return dest


@pytest.fixture
def make_hub(tmp_path: Path) -> Iterator[Callable[..., LocalHub]]:
    """Start local Hubs on loopback (a write and a read token), each with an optional fault plan."""
    started: list[LocalHub] = []
    with ExitStack() as stack:

        def start(faults: str | None = None, *, root: Path | None = None, **options: Any) -> LocalHub:
            """A Hub on `root` (default: a new folder); stop one before starting another on its root."""
            plan = FaultPlan.parse(faults) if faults else None
            root = root or tmp_path / f"hub{len(started)}"
            started.append(stack.enter_context(running_hub(root, {TOKEN: "write", READ_TOKEN: "read"}, plan, **options)))
            return started[-1]

        yield start


@pytest.fixture
def hub(make_hub: Callable[..., LocalHub]) -> LocalHub:
    return make_hub()


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff waits (huggingface_hub's and hf-release's) are recorded, not slept: faults cost no time."""
    import huggingface_hub.utils._http as http

    import release.remote

    waited: list[float] = []

    class Clock:
        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            waited.append(float(seconds))

    monkeypatch.setattr(http, "time", Clock())
    monkeypatch.setattr(release.remote, "sleep", waited.append)
    return waited
