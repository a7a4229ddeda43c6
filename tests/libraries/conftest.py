"""The library tier (`make test-libraries`): each kind's release, written by its library's own save function,
is built, pushed to a local Hub and loaded back by running exactly the Python its card prints, in a venv
that has the real libraries (LIBRARY_PYTHON). Without that venv (a plain `make test`) these tests are
skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from release.localhub import LocalHub
from tests.helpers import TOKEN, write_summary
from tests.kinds.helpers import apache_license

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "libraries"


def library_python(variable: str) -> str:
    python = os.environ.get(variable)
    if not python:
        pytest.skip(f"{variable} is not set: run `make test-libraries` for the library tier")
    return python


@dataclass(frozen=True)
class Published:
    repo_id: str
    version: str
    card: str
    dist: Path


def hf_release_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed hf-release, as a user runs it (a fresh process, its own exit code)."""
    done = subprocess.run(
        [sys.executable, "-m", "release", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_DISABLE_XET": "1"},
    )
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def publish(
    fixture: str,
    repo_id: str,
    hub: LocalHub,
    tmp_path: Path,
    version: str = "v1",
    edit: Callable[[str], str] | None = None,
) -> Published:
    """The fixture folder plus a LICENSE (no library writes one) → init --files → (`edit` of the spec's text, where
    a test adds what only an author can say: a base's revision, a kind's placeholder such as the model's class) →
    build → push."""
    files = tmp_path / "models" / fixture
    shutil.copytree(FIXTURES / fixture, files)
    (files / "LICENSE").write_text(apache_license())
    project = tmp_path / "project"
    (project / "artifacts").mkdir(parents=True)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    hf_release_process("init", version, "--files", files, "--repo-id", repo_id, cwd=project)
    spec = project / "artifacts" / version / "release.toml"
    write_summary(spec)  # push refuses init's placeholder
    if edit is not None:
        spec.write_text(edit(spec.read_text("utf-8")), "utf-8")
    hf_release_process("build", version, cwd=project)
    hf_release_process("push", version, "--endpoint", hub.url, "--token-file", token_file, cwd=project)
    dist = project / "dist" / version
    return Published(repo_id, version, (dist / "README.md").read_text(), dist)


def usage_python(card: str) -> str:
    """Every ```python block of the card's usage section, in order: the code a reader copies."""
    section = re.search(r"^## How to use[^\n]*\n(.*?)(?=^## )", card, re.S | re.M)
    assert section, "the card has no usage section"
    blocks = re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)
    assert blocks, "the card's usage section has no Python"
    return "\n".join(blocks)


def run_card_python(
    python: str, code: str, hub: LocalHub, tmp_path: Path, check: str, pythonpath: Path | None = None
) -> str:
    """Run the card's code, then the test's own `check` (one forward pass, the load report), against the
    local Hub only: a fresh huggingface_hub home whose agent-harness registry is cached (huggingface_hub
    would fetch it from the public Hub otherwise)."""
    home = tmp_path / "hf-home"
    home.mkdir(exist_ok=True)
    (home / ".agent_harnesses.json").write_text(json.dumps({"standardEnvVars": [], "harnesses": {}}))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "HF_HOME": str(home),
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": TOKEN,
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONHASHSEED": "0",
        **({"PYTHONPATH": str(pythonpath)} if pythonpath is not None else {}),  # the user's own code, importable
    }
    script = tmp_path / "card_usage.py"
    script.write_text(code + "\n\n# --- added by the test ---\n" + check)
    done = subprocess.run([python, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"the card's Python failed:\n{code}\n--- stderr ---\n{done.stderr[-4000:]}"
    return done.stdout
