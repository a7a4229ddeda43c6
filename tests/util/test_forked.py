"""release/util/forked.py: a function's result from a forked child, or None so that the caller runs it itself.

Run in a fresh interpreter: fork_call forks only while its process has one thread, which a pytest worker
(and its local Hubs) may not."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import os, threading, time
from release.util.forked import fork_call

def answer(x):
    return {"pid": os.getpid(), "twice": x * 2}

def fail():
    raise ValueError("the child's own error")

def sleep():
    time.sleep(60)

child = fork_call(answer, 21)
got = child.result()
assert got["twice"] == 42 and got["pid"] != os.getpid(), got
assert fork_call(fail).result() is None  # the caller runs it itself, to raise what it raises
slow = fork_call(sleep)
slow.close()  # nobody will read it: killed and reaped, no zombie left
try:
    os.kill(slow.pid, 0)
    raise AssertionError("the child outlived close()")
except ProcessLookupError:
    pass
threading.Thread(target=time.sleep, args=(1,)).start()
assert fork_call(answer, 1) is None  # another thread runs: no fork
print("ok")
"""


def test_fork_call_returns_the_childs_result_or_none() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


NO_FORK = """
import errno, os
from release.util.forked import fork_call

def refuse():
    raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

before = len(os.listdir("/proc/self/fd"))
os.fork = refuse
assert fork_call(abs, -1) is None  # the caller runs it itself, as when another thread runs
assert len(os.listdir("/proc/self/fd")) == before, "the pipe leaked"
print("ok")
"""


def test_a_fork_the_system_refuses_is_none_and_leaks_no_pipe() -> None:
    """Before, os.fork's EAGAIN ended the build (start-charts forks at every build with a chart)."""
    out = subprocess.run([sys.executable, "-c", NO_FORK], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
