"""release/verify.py: the hashing starts before the schema check and the card lint, which run in a forked
child; a verify that forks reports exactly what one that does not reports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from release.errors import VerifyFailed
from release.verify import verify_staged
from tests.helpers import edit

# what the card lint and the schema check import: the CLI process that hashes loads none of them
HEAVY = ("jsonschema", "numpy", "scipy", "huggingface_hub", "markdown_it", "yaml", "jinja2")
PROBE = """
import json, sys
from release.cli import main
try:
    main(["verify", "v5", "--dist", sys.argv[1], "--format", "json"])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"exit": code, "loaded": sorted(m for m in sys.argv[2:] if m in sys.modules)}), file=sys.stderr)
"""


def test_a_forked_verify_reports_what_an_unforked_one_does_and_loads_no_lint_library(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(built, dist)
    edit(dist / "README.md", "## Summary", "## Overview")  # the card lint's findings, beside the digest's
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(dist.parent), *HEAVY], capture_output=True, text=True, timeout=120
    )
    probe = json.loads(out.stderr.strip().splitlines()[-1])
    assert probe == {"exit": 1, "loaded": []}, out.stderr
    forked = [(p["file"], p["message"]) for p in json.loads(out.stdout)["problems"]]

    monkeypatch.setattr("release.verify.fork_call", lambda *args: None)  # the lint in this process, beside the hashing
    with pytest.raises(VerifyFailed) as failed:
        verify_staged(dist)
    assert forked == [(p.file, p.message) for p in failed.value.problems]
    assert any("'## Summary' is missing" in message for _, message in forked), forked


def test_a_damaged_manifest_is_reported_from_the_forked_schema_check(built: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(built, dist)
    manifest = json.loads((dist / "release.json").read_text())
    manifest["files"][0]["role"] = 7
    (dist / "release.json").write_text(json.dumps(manifest))
    out = subprocess.run([sys.executable, "-c", PROBE, str(dist.parent)], capture_output=True, text=True, timeout=120)
    assert json.loads(out.stderr.strip().splitlines()[-1])["exit"] == 1, out.stderr
    assert "release.json: is not a valid hf-release manifest: files[0].role: 7 is not of type 'string'" in out.stderr
