"""How many CPUs this process may use: the one count every worker count is chosen from.

Not `os.cpu_count()`, the host's: a container limited to 2 CPUs on a 128-core host would start 128 hashing
threads. The smaller of the CPUs the process may be scheduled on (`os.sched_getaffinity`) and its cgroup's CPU
quota, rounded up (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), taken over the process's
cgroup and each folder above it: a parent's quota bounds its children's.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
MAX_READ = 4096  # a cgroup file holds one short line; /proc/self/cgroup a line per hierarchy
V1_QUOTA, V1_PERIOD = "cpu.cfs_quota_us", "cpu.cfs_period_us"


def usable_cpus(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The CPUs this process may use, at least 1: affinity, bounded by the cgroup CPU quota under `cgroup_root`
    (the process's cgroup as `proc_cgroup` names it; the tests point both at files of their own)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _quota_cpus(cgroup_root, proc_cgroup)
    return max(1, min(cpus, quota) if quota is not None else cpus)


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read(MAX_READ)
    except (OSError, ValueError):
        return None


def _folders(root: Path, cgroup: str) -> list[Path]:
    """`root`/`cgroup` and each folder above it up to `root` (a cgroup namespace shows its own cgroup as /)."""
    parts = [p for p in cgroup.split("/") if p and p not in (".", "..")]
    return [root.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _quota_cpus(root: Path, proc_cgroup: Path) -> int | None:
    """The tightest CPU quota over the process's cgroups, in whole CPUs (rounded up), or None (no quota)."""
    v2: list[str] = []
    v1: list[Path] = []
    for line in (_read(proc_cgroup) or "0::/").splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            v2.append(path)
        elif "cpu" in controllers.split(","):
            for base in dict.fromkeys((root / controllers, root / "cpu", root / "cpu,cpuacct")):
                v1 += _folders(base, path)
    found = [_v2_quota(folder / "cpu.max") for path in v2 for folder in _folders(root, path)]
    found += [_v1_quota(folder) for folder in v1]
    quotas = [q for q in found if q is not None]
    return min(quotas) if quotas else None


def _v2_quota(path: Path) -> int | None:
    """cgroup v2 `cpu.max`: "QUOTA PERIOD" in microseconds, or "max PERIOD" (no quota)."""
    words = (_read(path) or "").split()
    if len(words) != 2 or not (words[0].isdigit() and words[1].isdigit()) or int(words[1]) == 0:
        return None
    return max(1, math.ceil(int(words[0]) / int(words[1])))


def _v1_quota(folder: Path) -> int | None:
    """cgroup v1: `cpu.cfs_quota_us` (-1: no quota) over `cpu.cfs_period_us`."""
    quota, period = (_read(folder / name) for name in (V1_QUOTA, V1_PERIOD))
    if quota is None or period is None:
        return None
    try:
        q, p = int(quota.strip()), int(period.strip())
    except ValueError:
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None
