"""The example (the session's build of it) published once to a local Hub, for the CLI's tests. Read-only: a
test that changes a release works on a copy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import TOKEN, local_hub


@pytest.fixture(scope="module")
def published(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Any]]:
    """(project root, local Hub): the session's dist/v5 pushed, in a private repo."""
    from release.publish.push import PushOptions, push

    with local_hub(tmp_path_factory.mktemp("hub")) as hub:
        push(built, PushOptions(endpoint=hub.url, token=TOKEN, private=True))
        yield built.parent.parent, hub
