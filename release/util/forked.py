"""A function run in a forked child process, so that CPU-bound Python and hashing do not share one GIL:
verify's card lint (and the imports it needs) beside verify's hashing threads, and build's hashing of many
small files beside build's checks (release/builder/hashing.py).

In one process the two take turns on the GIL: a hashing thread needs it between every two chunks, so a
lint beside it slows the hashing by about as long as the lint runs (measured: a 2.3 GB verify took 1.8 s
longer than hashing the file alone). A child has its own interpreter. Its only output is the function's
pickled result on a pipe: it prints nothing, writes no file and runs no exit handler (os._exit).

Forking a process that runs threads can leave the child stuck on a lock another thread held at that
moment, so `fork_call` forks only while this is the process's one thread (the CLI before hashing starts),
and never where there is no os.fork; the caller then runs the function itself. Ctrl-C goes to the parent,
which kills the child: the child ignores SIGINT, so one Ctrl-C ends one process, not two. On Linux a
parent killed outright takes the child with it (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
POLL = 0.2  # seconds between the parent's looks at pending signals while it waits for the child


class Forked(Generic[T]):
    """A running child; `result()` is its function's return value, or None when it did not return one
    (it raised, or was killed): the caller then runs the function itself, to return or raise as it does."""

    def __init__(self, pid: int, reader: int) -> None:
        self.pid, self.reader = pid, reader
        self._done = False

    def result(self) -> T | None:
        chunks = []
        ready = select.poll()  # poll, not select: no limit on the descriptor's number
        ready.register(self.reader, select.POLLIN)
        try:
            while True:
                # a timed wait: SIGINT may be delivered to a hashing thread, which would not wake a blocking read
                if not ready.poll(POLL * 1000):
                    continue
                chunk = os.read(self.reader, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            status = self.close()
        if status != 0 or not chunks:
            return None
        value: T = pickle.loads(b"".join(chunks))  # noqa: S301 - our own child's bytes, through our own pipe
        return value

    def kill(self) -> None:
        """End the child now, from any thread: a `result()` waiting in another thread then returns None (the
        pipe's end), and reaps it."""
        if not self._done:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # it has ended (and been reaped) meanwhile
                pass

    def close(self) -> int | None:
        """Stop the child (if it is still running) and reap it; its exit status (None once reaped)."""
        if self._done:
            return None
        self._done = True
        os.close(self.reader)
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:  # still running: nobody will read its result
                os.kill(self.pid, signal.SIGKILL)
                _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return None
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fork_call(fn: Callable[..., T], *args: Any) -> Forked[T] | None:
    """Start `fn(*args)` in a forked child; None when this process cannot fork safely (see the module)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    reader, writer = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # no process to be had (EAGAIN, ENOMEM): the caller does the work itself
        os.close(reader)
        os.close(writer)
        return None
    if pid:
        os.close(writer)
        return Forked(pid, reader)
    status = 1
    try:  # the child: whatever happens, it ends here
        _die_with(parent)
        os.close(reader)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        data = memoryview(pickle.dumps(fn(*args)))
        while data:
            data = data[os.write(writer, data) :]
        status = 0
    finally:
        os._exit(status)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with(parent: int) -> None:
    """In the child, on Linux: be killed when the parent dies, kill -9 included. It holds what the parent held
    (a version's lock, among others) and would otherwise go on working for nobody, holding it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the child ends when its work does
        return
    if os.getppid() != parent:  # the parent died before the prctl
        os._exit(1)
