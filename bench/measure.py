"""Measuring tools shared by bench/run.py and bench/scale.py: processes (wall, /proc io, peak RSS), sockets,
the page cache, the machine, release specs and the local Hub in its own process."""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import platform
import re
import select
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.kinds.dflash2_drafter.inventory import expected_tensors
from release.staged.digest import CHUNK

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "artifacts" / "v5"
MB = 1_000_000
MiB = 1 << 20

# --- measuring processes ----------------------------------------------------------------------------


def read_io(pid: int | str) -> dict[str, int]:
    """/proc/<pid>/io as integers (rchar, wchar, read_bytes, write_bytes, ...)."""
    out = {}
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = int(value)
    return out


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds a live process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Proc:
    cmd: list[str]
    wall: float
    rc: int
    out: str
    err: str
    io: dict[str, int]
    maxrss: int  # bytes
    cpu: float

    def json(self) -> dict[str, Any]:
        return json.loads(self.out)


TIME = Path("/usr/bin/time")


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, check: bool = True) -> Proc:
    """Run one process: wall time, its /proc/<pid>/io and its own peak RSS.

    The command runs under /usr/bin/time, which forks it and reaps it: the kernel then adds the command's
    I/O counters into time's, which are read after time exits and before it is reaped (waitid WNOWAIT).
    time's %M is the command's own peak RSS. (wait4 on a direct child would not do: a child inherits the
    forking process's RSS high-water mark through exec, so every child of this 160 MB bench process
    would report at least 160 MB.) Without /usr/bin/time, ru_maxrss of wait4 is used, an upper bound.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
        wrapped = [str(TIME), "-f", "%M", "-o", rss.name, *cmd] if TIME.exists() else cmd
        start = time.perf_counter()
        p = subprocess.Popen(wrapped, stdout=out, stderr=err, env=env, cwd=cwd)
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped: /proc/<pid>/io still there
            wall = time.perf_counter() - start
            io = read_io(p.pid)
        finally:
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        maxrss = usage.ru_maxrss * 1024
        if TIME.exists():
            text = Path(rss.name).read_text().strip().splitlines()
            maxrss = int(text[-1]) * 1024 if text and text[-1].isdigit() else maxrss
        proc = Proc(
            cmd,
            wall,
            p.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            io,
            maxrss,
            usage.ru_utime + usage.ru_stime,
        )
    if check and proc.rc != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.rc}:\n{proc.err[-3000:]}\n{proc.out[-2000:]}")
    return proc


_SEND = re.compile(r"^(?:sendto|sendmsg|sendmmsg|write|writev)\(\d+<TCP(?:v6)?:\[.*\)\s+=\s+(\d+)$")


def socket_bytes_sent(cmd: list[str], env: dict[str, str], scratch: Path) -> int | None:
    """Bytes a process writes to TCP sockets, from an strace of its send/write calls (None without strace).

    /proc/<pid>/io cannot tell: Python sockets use send()/recv(), which wchar/rchar do not count.
    """
    return traced_sends(cmd, env, scratch)[0]


def traced_sends(cmd: list[str], env: dict[str, str], scratch: Path) -> tuple[int | None, Proc]:
    """Run cmd (under strace when installed): (bytes it wrote to TCP sockets or None, the process)."""
    strace = shutil.which("strace")
    if not strace:
        return None, run(cmd, env=env)
    scratch.mkdir(parents=True, exist_ok=True)
    proc = run(
        [
            strace,
            "-ff",
            "-qq",
            "-yy",
            "-s",
            "0",
            "-e",
            "trace=sendto,sendmsg,sendmmsg,write,writev",
            "-o",
            str(scratch / "trace"),
            *cmd,
        ],
        env=env,
    )
    total = 0
    for trace in scratch.glob("trace.*"):
        with open(trace, errors="replace") as lines:  # streamed: a multi-GB upload traces ~100k lines
            for line in lines:
                match = _SEND.match(line.rstrip("\n"))
                if match:
                    total += int(match.group(1))
    shutil.rmtree(scratch)
    return total, proc


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


# --- the page cache ---------------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def resident_bytes(path: Path) -> int:
    """Bytes of the file now in the page cache (mincore over a mapping that faults nothing in)."""
    size = path.stat().st_size
    if size == 0:
        return 0
    page = mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap failed")
        try:
            pages = -(-size // page)
            vec = (ctypes.c_ubyte * pages)()
            if _libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore failed")
            return _count_resident(vec) * page
        finally:
            _libc.munmap(addr, size)
    finally:
        os.close(fd)


def _count_resident(vec: Any) -> int:
    import numpy as np

    return int((np.frombuffer(vec, dtype=np.uint8) & 1).sum())


def evict(paths: list[Path]) -> int:
    """Drop these files' (clean) pages from the page cache; returns the bytes still resident."""
    left = 0
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        left += resident_bytes(path)
    return left


def warm(paths: list[Path]) -> None:
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            buf = bytearray(CHUNK)
            while f.readinto(buf):
                pass


# --- machine ----------------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    flag_set = set(flags.group(1).split()) if flags else set()
    mem = re.search(r"^MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
    import huggingface_hub

    try:
        from importlib.metadata import version

        import hf_xet  # noqa: F401

        xet = version("hf-xet")
    except Exception:  # noqa: BLE001 - only for the description
        xet = "not installed"
    openssl_cli = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": model.group(1).strip() if model else platform.processor() or "?",
        "sha_ni": "yes" if "sha_ni" in flag_set else "no",
        "avx2": "yes" if "avx2" in flag_set else "no",
        "cores": str(os.cpu_count()),
        "ram": f"{int(mem.group(1)) / 1024 / 1024:.1f} GiB" if mem else "?",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "openssl_python": ssl.OPENSSL_VERSION,
        "openssl_cli": openssl_cli,
        "huggingface_hub": huggingface_hub.__version__,
        "hf_xet": xet,
    }


def disk(path: Path) -> str:
    df = subprocess.run(
        ["df", "-h", "--output=source,fstype,size,avail", str(path)], capture_output=True, text=True
    ).stdout
    source = df.splitlines()[-1].split() if df.strip() else ["?"]
    rota = "?"
    dev = Path(source[0]).name
    for candidate in (dev, re.sub(r"\d+$", "", dev)):
        p = Path(f"/sys/block/{candidate}/queue/rotational")
        if p.exists():
            rota = "rotational" if p.read_text().strip() == "1" else "non-rotational"
            break
    return f"{' '.join(source)} ({rota} per the kernel)"


def cpu_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    # user nice system idle iowait irq softirq steal (guest time is already counted in user)
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def own_cpu() -> float:
    import resource

    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


# --- releases ---------------------------------------------------------------------------------------


def quick_config(config: dict[str, Any], target: int) -> dict[str, Any]:
    """The config with its widths scaled down so the drafter's data is about `target` bytes."""
    import math

    def size(c: dict[str, Any]) -> int:
        return sum(math.prod(s) * 2 for s, _ in expected_tensors(c).values())

    f = (target / size(config)) ** 0.5
    while True:
        small = dict(config)
        for key in ("hidden_size", "intermediate_size", "vocab_size"):
            small[key] = max(64, int(config[key] * f) // 64 * 64)
        small["num_attention_heads"] = max(1, int(config["num_attention_heads"] * f))
        small["num_key_value_heads"] = max(1, int(config["num_key_value_heads"] * f))
        if size(small) <= target or f < 0.01:
            return small
        f *= 0.95


def make_spec(dest: Path, weights: list[tuple[Path, str]], *, md5: bool, full_size: bool) -> Path:
    """A copy of artifacts/v5 whose weights entries point at drafters elsewhere on disk (absolute paths)."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("model.safetensors"))
    spec = dest / "release.toml"
    text = spec.read_text()
    block = 'source = "model.safetensors"\nrole = "weights"\ndigests = ["md5"]\ncheck_shapes = false\n'
    assert block in text, "artifacts/v5/release.toml changed: update bench/run.py"
    entries = []
    for path, path_in_repo in weights:
        lines = [f'source = "{path}"', f'path_in_repo = "{path_in_repo}"', 'role = "weights"']
        if md5:
            lines.append('digests = ["md5"]')
        if not full_size:  # the quick drafters are scaled down: their shapes are not config.json's
            lines.append("check_shapes = false")
        entries.append("\n".join(lines) + "\n")
    spec.write_text(text.replace(block, "\n[[files]]\n".join(entries)))
    return spec


def staged_files(dist: Path) -> list[Path]:
    return sorted(p for p in dist.rglob("*") if p.is_file())


# --- the local Hub, in its own process ---------------------------------------------------------------


@dataclass
class Hub:
    proc: subprocess.Popen[bytes]
    url: str
    root: Path
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid


@contextmanager
def hub_process(hf: list[str], root: Path, token: str, env: dict[str, str]) -> Iterator[Hub]:
    """`hf-release hub serve` on a free loopback port (port 0: the server picks it and prints the URL)."""
    root.mkdir(parents=True)
    log = root.parent / f"{root.name}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [*hf, "hub", "serve", "--root", str(root), "--port", "0", "--token", f"{token}:write"],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline().decode() if ready else ""
        match = re.search(r"at (http://\S+)", line)
        if not match:
            raise RuntimeError(f"the local Hub did not start: {line!r} {log.read_text()[-2000:]}")
        yield Hub(proc, match.group(1), root, log)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        shutil.rmtree(root, ignore_errors=True)


# Where a fresh `hf-release` process spends its time: imports, then each build step / verify's parts.
PROBE_BUILD = """
import json, sys, time
t0 = time.perf_counter()
import release.cli, release.builder
from release.spec import load_spec
t1 = time.perf_counter()
steps = {}
class Timed:
    def __init__(self, step):
        self.step, self.name = step, step.name
    def run(self, ctx):
        s = time.perf_counter()
        try:
            return self.step.run(ctx)
        finally:
            steps[self.name] = time.perf_counter() - s
release.builder.BUILD_STEPS = tuple(Timed(s) for s in release.builder.BUILD_STEPS)
from pathlib import Path
release.builder.build(load_spec(Path(sys.argv[1])), Path(sys.argv[2]))
print(json.dumps({"imports": t1 - t0, "total": time.perf_counter() - t0, "steps": steps}))
"""

PROBE_VERIFY = """
import json, sys, time
t0 = time.perf_counter()
import release.cli, release.verify
t1 = time.perf_counter()
import release.card.staged  # verify imports the linter lazily, inside verify_staged: time it there
lint = {}
original = release.card.staged.lint_staged
def timed_lint(*args, **kwargs):
    s = time.perf_counter()
    try:
        return original(*args, **kwargs)
    finally:
        lint["t"] = time.perf_counter() - s
release.card.staged.lint_staged = timed_lint
from pathlib import Path
s = time.perf_counter()
release.verify.verify_staged(Path(sys.argv[1]))
t2 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "verify_staged": t2 - s, "lint": lint.get("t", 0.0), "total": t2 - t0}))
"""


@dataclass
class Ratio:
    name: str
    what: str
    value: float
    target: float
    higher_is_better: bool
    fmt: str  # "x", "s", "MB", "B", "n" (a count), "frac"
    cache: str
    note: str = ""
    plan: str = ""
    explain: str = ""

    @property
    def ok(self) -> bool:
        return self.value >= self.target if self.higher_is_better else self.value <= self.target

    def show(self, v: float) -> str:
        if self.fmt == "x":
            return f"{v:.3f}x"
        if self.fmt == "s":
            return f"{v:.3f} s"
        if self.fmt == "MB":
            return f"{v / MB:.1f} MB"
        if self.fmt == "B":
            return f"{v:,.0f} B"
        if self.fmt == "n":
            return f"{v:,.0f}"
        return f"{v:.4f}"

    @property
    def target_text(self) -> str:
        return ("≥ " if self.higher_is_better else "≤ ") + self.show(self.target)

    @property
    def line(self) -> str:
        return f"[ratio] {self.name}: {self.show(self.value)} / {self.target_text} {'PASS' if self.ok else 'MISS'}"
