"""Shared fixtures: a private copy of the example release, and builds of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# Every Hub the tests talk to is a local one on loopback, which does not speak Xet.
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.pop("HF_TOKEN", None)
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="hf-release-tests-home-")
# huggingface_hub 2.4 fetches an "agent harnesses" registry from the public Hub once a day unless a
# fresh copy is cached: cache an empty one, so no test ever reaches an address off this machine.
Path(os.environ["HF_HOME"], ".agent_harnesses.json").write_text('{"standardEnvVars": [], "harnesses": {}}')

from tests.helpers import EXAMPLE
from tests.reliability.helpers import TALLY


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


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example release built once per session (from a copy of artifacts/v5); returns dist/v5.
    Never modify it: tests that damage a release work on a copy of it."""
    from release.build import build
    from release.spec import load_spec

    root = tmp_path_factory.mktemp("built")
    shutil.copytree(EXAMPLE, root / "artifacts" / "v5")
    return build(load_spec(root / "artifacts" / "v5" / "release.toml"), root / "dist").dist


# The reliability tally (what the suite survived), summed over pytest-xdist's workers and printed at the end.
def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    TALLY.update(getattr(node, "workeroutput", {}).get("tally", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY:
        terminalreporter.write_line("reliability: " + ", ".join(f"{key} = {n}" for key, n in sorted(TALLY.items())))
