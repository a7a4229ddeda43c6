"""`bench/run.py --quick` runs end to end and prints every ratio line (never asserts a timing).

Part of `make bench-smoke`, not of `make test`: it takes most of a minute and a half (issue 20).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# One line per target of issues 6 and 16; the bench prints `[ratio] NAME: measured / target PASS|MISS`.
RATIOS = [
    "verify-sha256-vs-openssl",
    "sha256+md5-one-pass-vs-md5-alone",
    "verify-2-files-parallel-vs-1-thread",
    "build-staging-bytes-written",
    "build-inode-shared",
    "build-vs-hash",
    "push-first-bytes-read",
    "push-repeat-large-file-bytes-read",
    "push-repeat-bytes-sent",
    "push-repeat-time-cli",
    "push-repeat-time-in-process",
    "peak-rss-build",
    "peak-rss-verify",
    "peak-rss-push",
    "push-vs-upload_folder-bytes-read",
    "push-vs-upload_folder-time",
    # issue 16: the scale scenarios (bench/scale.py)
    "many-files-build-marginal-vs-openssl",
    "many-files-verify-marginal-vs-openssl",
    "many-files-push-commits",
    "peak-rss-build-many-files",
    "peak-rss-verify-many-files",
    "peak-rss-push-many-files",
    "peak-rss-build-50k-small-files",
    "peak-rss-verify-50k-small-files",
    "peak-rss-push-50k-small-files",
    "shards-build-vs-openssl",
    "shards-verify-vs-openssl",
    "peak-rss-build-8-shards",
    "peak-rss-verify-8-shards",
    "peak-rss-push-8-shards",
    "resume-wire-bytes-vs-missing",
    "resume-report-error",
    # issue 24: the cost of what changed (bench/versions.py)
    "next-version-build-bytes-read",
    "next-version-v5-push-bytes-read",
    "mixed-verify-vs-openssl",
]


@pytest.mark.timeout(600)
def test_quick_bench_prints_every_ratio(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--out", str(out), "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=590,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    for name in RATIOS:
        line = re.search(rf"^\[ratio\] {re.escape(name)}: .+ / [≥≤] .+ (PASS|MISS)$", proc.stdout, re.M)
        assert line, f"no ratio line for {name}:\n{proc.stdout}"
    printed = re.findall(r"^\[ratio\] ([^:]+):", proc.stdout, re.M)
    assert sorted(printed) == sorted(RATIOS)
    results = (out / "RESULTS.md").read_text()
    assert all(f"| {name} |" in results for name in RATIOS)
    assert "SHA-NI" in results and "huggingface_hub" in results
    # the temp folder (drafters, staged releases, Hub roots) is removed at exit
    assert not list(tmp_path.glob("hf-release-bench-*"))


def test_xet_bench_prints_its_ratios(tmp_path: Path) -> None:
    """bench/xet.py (issue 39) end to end with an 8 MiB drafter: both transports, both ratio lines."""
    out = tmp_path / "xet.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "xet.py"),
            "--size",
            str(8 << 20),
            "--mixed",
            "2,8,20",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    for name in ("xet-one-tensor-changed", "xet-new-path-drafter-new-bytes"):
        assert re.search(rf"^\[ratio\] {name}: .+ / ≤ .+ (PASS|MISS)$", proc.stdout, re.M), proc.stdout
    assert set(json.loads(out.read_text())["next"]) == set(json.loads(out.read_text())["mixed"]) == {"xet", "lfs"}
    assert re.search(r"^\[xet\] mixed release .+ push over xet: ", proc.stdout, re.M), proc.stdout
