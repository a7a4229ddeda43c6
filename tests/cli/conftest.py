"""A project with the example built once, and published once to a local Hub, for the CLI's tests (read-only:
a test that changes a release works on a copy)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLE, TOKEN, local_hub


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """(project root, local Hub): artifacts/v5 built into dist/v5 and pushed, in a private repo."""
    from release.build import build
    from release.publish.push import PushOptions, push
    from release.spec import load_spec

    root = tmp_path_factory.mktemp("project")
    shutil.copytree(EXAMPLE, root / "artifacts" / "v5")
    dist = build(load_spec(root / "artifacts" / "v5" / "release.toml"), root / "dist").dist
    with local_hub(tmp_path_factory.mktemp("hub")) as hub:
        push(dist, PushOptions(endpoint=hub.url, token=TOKEN, private=True))
        yield root, hub
