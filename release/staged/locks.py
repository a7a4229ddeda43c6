"""One writer at a time: a lock on a file, held for the length of a block, that names its holder.

A writer holds it exclusively; readers that must not see a writer at work (a push reading the staged files)
hold it shared, so two pushes of one version (to two Hubs) run side by side while a rebuild is refused.
The lock is the kernel's (`flock` on the lock file's open file description): it goes with the process that
holds it, however that process ends, so a lock left by a killed process is simply free again — the file it
leaves behind is taken over by the next holder. A holder records who it is (pid, command, since when) in
the file, so a refused process can name it. The last holder removes the file while it still holds it
exclusively; a process that locked an inode already removed sees that its path names another inode and
starts again.

Used for a version's staging (build, sign, card: exclusive; push: shared; `version_lock`); any other state
shared between processes (a digest cache) takes a lock of its own through `held`.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from release.errors import InputError, PublishRefused
from release.staged.names import lock_name

MAX_RECORD_BYTES = 4096
ATTEMPTS = 8  # a lock file removed by its holder between our open and our lock: look again, a bounded number of times


class LockHeld(PublishRefused):
    """Another process holds the lock (exit 4: one writer per version). Re-run once it has ended."""


def holder_of(path: Path) -> str:
    """Who holds the lock at `path`, in words: 'pid 123 (`hf-release build v5`) since …' (the latest holder
    to write its record, while that process lives)."""
    try:
        with open(path, "rb") as f:
            record = json.loads(f.read(MAX_RECORD_BYTES))
        pid = int(record["pid"])
        os.kill(pid, 0)  # the record of a shared holder that has ended names nobody
        return f"pid {pid} (`{record['command']}`) since {record['since']}"
    except PermissionError:  # alive, another user's
        return f"pid {pid} (`{record['command']}`) since {record['since']}"
    except (OSError, ValueError, KeyError, TypeError):  # gone, or its holder has not written its record yet
        return "another hf-release process"


@contextmanager
def held(path: Path, command: str, *, what: str, shared: bool = False, wait: float = 0.0) -> Iterator[None]:
    """Hold the lock at `path` for the block, exclusively (or `shared` with other shared holders); `command`
    names this holder to others, `what` is what the lock protects (for the message). LockHeld when another
    process holds it in a way that excludes this one for `wait` seconds; InputError when the lock file cannot
    be created."""
    fd = _acquire(path, what, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, time.monotonic() + wait)
    try:
        record = {"pid": os.getpid(), "command": command, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        data = json.dumps(record).encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the last holder: nobody else holds this inode
            os.unlink(path)
        except OSError:  # another shared holder is still there (it removes the file), or it is gone already
            pass
        os.close(fd)


def _acquire(path: Path, what: str, mode: int, deadline: float) -> int:
    attempts = 0
    while attempts < ATTEMPTS:
        fd = open_regular(path, os.O_RDWR | os.O_CREAT, what=f"the lock of {what}")
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise LockHeld(
                f"{what} is in use by {holder_of(path)}; wait for it to end (or stop it), then run this again",
                file=str(path),
            ) from None
        try:
            current = os.lstat(path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            return fd
        os.close(fd)  # we locked a file its last holder had just removed
        attempts += 1
    raise LockHeld(f"{what}: its lock keeps being replaced; run this again", file=str(path))


def open_regular(path: Path, flags: int, *, what: str) -> int:
    """Open `path` never through a symlink (O_NOFOLLOW) and only as a regular file (checked on the descriptor):
    a link planted at a lock's or a record's name (a shared RELEASE_STAGING) must not let hf-release write the
    file it names. InputError, naming the path, otherwise."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(
                f"is a symbolic link where hf-release keeps {what}; it never writes through one: remove the link "
                "(the file it names is left as it is), then run this again",
                file=str(path),
            ) from None
        raise InputError(f"cannot create {what} ({exc.strerror}); pass a writable --dist", file=str(path)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(
            f"is not a regular file where hf-release keeps {what}; remove it, then run this again", file=str(path)
        )
    return fd


def version_lock(dist: Path, command: str, *, shared: bool = False) -> AbstractContextManager[None]:
    """The lock of the version staged (or to be staged) at `dist` (DIST/VERSION), beside it: what writes the
    staging (build, sign, card) holds it exclusively, push shared, so a rebuild can never swap the files of a
    push under it."""
    return held(
        dist.parent / lock_name(dist.name), command, what=f"version {dist.name} in {dist.parent}", shared=shared
    )
