"""The CPU count every worker count is chosen from (release/util/cpus.py): affinity and the cgroup CPU quota."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from release.util.cpus import usable_cpus

AFFINITY = len(os.sched_getaffinity(0))


def cgroup(tmp_path: Path, files: dict[str, str], proc: str = "0::/\n") -> tuple[Path, Path]:
    """A fake cgroup root holding `files` (path -> text) and a fake /proc/self/cgroup."""
    root = tmp_path / "cgroup"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "proc_cgroup").write_text(proc)
    return root, tmp_path / "proc_cgroup"


def test_a_process_pinned_to_one_cpu_counts_one(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {})  # no quota: affinity alone
    script = (
        "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "from pathlib import Path; from release.util.cpus import usable_cpus\n"
        f"print(usable_cpus(Path({str(root)!r}), Path({str(proc)!r})), os.cpu_count())"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    counted, host = done.stdout.split()
    assert counted == "1"
    assert usable_cpus(root, proc) == AFFINITY  # unpinned, the same function counts every CPU it may use
    if int(host) > 1:
        assert counted != host  # the host's count is not the answer


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [("200000 100000\n", 2), ("150000 100000\n", 2), ("50000 100000\n", 1), ("max 100000\n", None), ("junk", None)],
)
def test_the_cgroup_v2_quota_bounds_the_count(tmp_path: Path, cpu_max: str, expected: int | None) -> None:
    root, proc = cgroup(tmp_path, {"cpu.max": cpu_max})
    assert usable_cpus(root, proc) == min(AFFINITY, expected or AFFINITY)


def test_the_tightest_quota_over_the_cgroup_and_its_parents_counts(tmp_path: Path) -> None:
    root, proc = cgroup(
        tmp_path, {"cpu.max": "max 100000", "a/cpu.max": "100000 100000", "a/b/cpu.max": "400000 100000"}, "0::/a/b\n"
    )
    assert usable_cpus(root, proc) == 1  # a's 1 CPU bounds a/b's 4
    (tmp_path / "unlimited").mkdir()
    root, proc = cgroup(tmp_path / "unlimited", {"a/b/cpu.max": "max 100000"}, "0::/a/b\n")
    assert usable_cpus(root, proc) == AFFINITY


@pytest.mark.parametrize(("quota", "expected"), [("100000", 1), ("250000", 3), ("-1", None)])
def test_the_cgroup_v1_quota_bounds_the_count(tmp_path: Path, quota: str, expected: int | None) -> None:
    files = {"cpu,cpuacct/docker/x/cpu.cfs_quota_us": quota, "cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000"}
    root, proc = cgroup(tmp_path, files, "4:memory:/docker/x\n2:cpu,cpuacct:/docker/x\n0::/\n")
    assert usable_cpus(root, proc) == min(AFFINITY, expected or AFFINITY)


def test_this_machine_counts_no_more_than_its_affinity() -> None:
    assert 1 <= usable_cpus() <= AFFINITY
