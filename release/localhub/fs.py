"""Durable writes under the local Hub's root, and the one server that may make them.

Every write goes to a temp file in this server's work folder, is fsynced and renamed into place, and
the directory is fsynced, so a process killed at any point leaves each file whole, old or new. The work
folder sits in the root (same filesystem, so os.replace is atomic) and the server made it itself
(mkdtemp, marked); at start-up only such marked folders, left by a server that was killed, are
removed — never anything else. One server per root: a second one refuses to start.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO

WORK_PREFIX = ".work-"
WORK_MARK = "made-by-hf-release-hub"  # a file in each work folder: only marked folders are ever removed


class RootInUse(OSError):
    """Another local Hub serves this root: two would delete each other's uploads."""


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_dir(path: Path) -> None:
    """mkdir -p that also fsyncs each parent whose listing changed, so new directories survive a crash."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
        fsync_dir(directory.parent)


class ObjectWriter:
    """Streams one object into a temp file while hashing it, so no object is ever held in memory."""

    def __init__(self, tmp_dir: Path) -> None:
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
        self.path = Path(name)
        self._file: IO[bytes] = os.fdopen(fd, "wb")
        self._sha256 = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._sha256.update(chunk)
        self.size += len(chunk)

    def hexdigest(self) -> str:
        return self._sha256.hexdigest()

    def close(self) -> None:
        """Flush and fsync the temp file; it stays in place for `LockedRoot.keep`."""
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()

    def discard(self) -> None:
        self._file.close()
        self.path.unlink(missing_ok=True)


class LockedRoot:
    """The root one server holds (flock on `server.lock`) and its work folder, where every write starts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ensure_dir(root)
        self._lock_file = (root / "server.lock").open("a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            raise RootInUse(f"{root} is already served by another local Hub; stop it or use another root") from None
        # Holding the lock, any marked work folder is a killed server's: its files belong to no state.
        for stale in root.glob(f"{WORK_PREFIX}*"):
            if stale.is_dir() and not stale.is_symlink() and (stale / WORK_MARK).is_file():
                shutil.rmtree(stale)
        self.work = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=root))
        (self.work / WORK_MARK).touch()

    def close(self) -> None:
        """Remove this server's work folder and release the root."""
        if not self._lock_file.closed:
            shutil.rmtree(self.work, ignore_errors=True)
            self._lock_file.close()  # releases the flock

    def atomic_write(self, path: Path, data: bytes) -> None:
        ensure_dir(path.parent)
        fd, name = tempfile.mkstemp(dir=self.work)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        fsync_dir(path.parent)

    def new_writer(self) -> ObjectWriter:
        return ObjectWriter(self.work)

    def keep(self, writer: ObjectWriter, dest: Path, *, overwrite: bool = False) -> None:
        """Move a finished upload into place; content-addressed objects already stored are left alone."""
        writer.close()
        if dest.exists() and not overwrite:
            writer.path.unlink()
            return
        ensure_dir(dest.parent)
        os.replace(writer.path, dest)
        fsync_dir(dest.parent)

    def remove_dir(self, path: Path) -> None:
        """Take a folder out of sight in one rename, then delete it."""
        doomed = Path(tempfile.mkdtemp(dir=self.work)) / path.name
        os.replace(path, doomed)
        fsync_dir(path.parent)
        shutil.rmtree(doomed.parent)

    def move_dir(self, source: Path, dest: Path) -> None:
        ensure_dir(dest.parent)
        os.replace(source, dest)
        fsync_dir(dest.parent)
        fsync_dir(source.parent)
