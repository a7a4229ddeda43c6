"""The project's digest record: a file's digests are reused when the file cannot have changed since they were taken.

Git's index, for hf-release: one record per staging root, `DIST/.hf-release-digests` (beside the staged versions,
not in any of them: local state, never published), keyed by inode. An entry holds the device, inode, size,
mtime_ns and ctime_ns a build saw before it read the file and confirmed unchanged after (the build fails
otherwise), and the digests of those bytes. A file is served from the record only when all five still match:
an edit moves mtime, and setting mtime back moves ctime, which no user can set back.

* Racy timestamps (git's rule): an entry whose mtime is not older than the time its hashing began (the
  filesystem's own clock: the staging folder's mtime when created) is never reused. A same-size edit within
  the same timestamp tick as the read (coarse timestamps, NFS) would leave every field as it was.
* Hard links: hf-release's own link (collect) and unlink (replacing an earlier staging) move the inode's ctime.
  The entry follows only when the stat before and after differ in ctime and link count alone (`relinked`).
* Concurrent builds: the record is replaced atomically (readers need no lock); a build merges its entries
  into the record on disk under the lock `DIST/.hf-release-digests.lock` (release/staged/locks.py, waiting up
  to LOCK_WAIT).
* Bounded: at most MAX_ENTRIES entries (the oldest hashed go first) and MAX_BYTES read; a damaged line is
  ignored. The record only ever saves work: a missing or unreadable record means every file is hashed.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from release.errors import InputError
from release.staged.file_stat import Stat
from release.staged.locks import LockHeld, held, open_regular
from release.staged.names import DIGEST_LOCK_NAME, DIGEST_RECORD_NAME

HEADER = "hf-release digest record 1\n"
MAX_ENTRIES = 1_000_000
MAX_BYTES = 256 * 1024 * 1024
LOCK_WAIT = 30.0  # seconds a build waits for another's merge before leaving its own entries out


class Recorded(NamedTuple):  # one per file, made for each entry looked up: a tuple is made in half the time
    """Digests of a file's bytes as one build read them."""

    size: int
    sha256: str
    md5: str | None
    git_blob_id: str | None


class _Entry(NamedTuple):
    """One entry, parsed: an entry read is parsed only for the file being looked up; one learned stays parsed."""

    size: int
    mtime_ns: int
    ctime_ns: int
    since_ns: int  # the filesystem's time when the hashing began
    digests: Recorded

    def line(self, key: Key) -> str:
        d = self.digests
        return (
            f"{key >> 64} {key & INO_MASK} {self.size} {self.mtime_ns} {self.ctime_ns} {self.since_ns} "
            f"{d.sha256} {d.md5 or '-'} {d.git_blob_id or '-'}\n"
        )


def _parse(line: str) -> _Entry:
    _, _, size, mtime, ctime, since, sha256, md5, blob = line.split()  # a line LINE matched
    n = int(size)
    return _Entry(
        n,
        int(mtime),
        int(ctime),
        int(since),
        Recorded(n, sha256, None if md5 == "-" else md5, None if blob == "-" else blob),
    )


# device, inode, size, mtime_ns, ctime_ns, since_ns, sha256, md5 or -, git blob id or - (times may be before 1970)
LINE = re.compile(r"(\d+) (\d+) \d+ -?\d+ -?\d+ -?\d+ [0-9a-f]{64} (?:[0-9a-f]{32}|-) (?:[0-9a-f]{40}|-)\n?", re.ASCII)
Key = int  # device and inode in one int: a tuple of two would cost 70 bytes more an entry
INO_MASK = (1 << 64) - 1


def _stat_key(st: Stat) -> Key:
    return st.st_dev << 64 | st.st_ino


class DigestRecord:
    """The record as read at the start of a command, plus what this command learned (saved by `save`).

    Each entry read is kept as its line of the record, keyed by device and inode, and parsed only when looked
    up (~0.3 KB an entry instead of ~0.8 KB of objects); an entry learned is kept parsed, its digests the very
    strs the build's file record holds (a rebuild of 50,000 files holds the record and what it learned at once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._entries: dict[Key, str] = _read(root / DIGEST_RECORD_NAME)
        self._learned: dict[Key, _Entry] = {}

    @property
    def holds_any(self) -> bool:
        """Any entry to look up or follow (none in a --dist no build has finished in)."""
        return bool(self._entries or self._learned)

    def lookup(self, st: Stat, *, md5: bool = False) -> Recorded | None:
        """The digests of the file with stat `st` when it cannot have changed since they were taken."""
        e = self._valid(st)
        return None if e is None or (md5 and e.digests.md5 is None) else e.digests

    def _valid(self, st: Stat) -> _Entry | None:
        key = _stat_key(st)
        e = self._learned.get(key)
        if e is None:
            line = self._entries.get(key)
            if line is None:
                return None
            e = _parse(line)
        if (
            e.size != st.st_size
            or e.mtime_ns != st.st_mtime_ns
            or e.ctime_ns != st.st_ctime_ns
            or e.mtime_ns >= e.since_ns
        ):
            return None
        return e

    def relinked(self, before: Stat, after: Stat) -> None:
        """hf-release linked or unlinked the inode between these two stats: a valid entry for `before` follows
        to `after` when only ctime and the link count moved."""
        if (
            _stat_key(before) != _stat_key(after)
            or before.st_size != after.st_size
            or before.st_mtime_ns != after.st_mtime_ns
            or before.st_nlink == after.st_nlink
        ):
            return
        e = self._valid(before)
        if e is not None:
            self._entries.pop(_stat_key(before), None)  # superseded (same inode): a rebuild holds each entry once
            # (after's own ints: equal to the entry's, and held by the staged file's stat already)
            self._learned[_stat_key(after)] = _Entry(
                after.st_size, after.st_mtime_ns, after.st_ctime_ns, e.since_ns, e.digests
            )

    def cloned(self, source: Stat, clone: Stat) -> None:
        """`clone` is a copy-on-write clone of the file with stat `source` (unchanged while cloned), given its
        mtime: a valid entry for the source serves the clone too."""
        e = self._valid(source)
        if e is not None and clone.st_size == e.size and clone.st_mtime_ns == e.mtime_ns:
            self._learned[_stat_key(clone)] = _Entry(e.size, e.mtime_ns, clone.st_ctime_ns, e.since_ns, e.digests)

    def confirmed(self, st: Stat, digests: Recorded, since_ns: int) -> None:
        """A build read the file with stat `st` (unchanged before and after) into `digests`, starting at `since_ns`."""
        self._entries.pop(_stat_key(st), None)
        self._learned[_stat_key(st)] = _Entry(st.st_size, st.st_mtime_ns, st.st_ctime_ns, since_ns, digests)

    def save(self) -> bool:
        """Merge what this command learned into the record on disk, under the lock. False when another build held
        the lock for LOCK_WAIT seconds (the entries are left out: the next build hashes those files again)."""
        if not self._learned:
            return True
        self.root.mkdir(parents=True, exist_ok=True)
        path, learned = self.root / DIGEST_RECORD_NAME, self._learned
        try:
            with held(
                self.root / DIGEST_LOCK_NAME,
                f"hf-release (pid {os.getpid()})",
                what="the digest record",
                wait=LOCK_WAIT,
            ):
                self._entries = {}  # the record is read again, with other builds' merges, as it is rewritten
                kept = sum(key not in learned for key, _ in _lines(path))
                if kept + len(learned) <= MAX_ENTRIES:  # streamed: the record's lines are never all held at once
                    _write(
                        path,
                        itertools.chain(
                            (line for key, line in _lines(path) if key not in learned),
                            (e.line(key) for key, e in learned.items()),
                        ),
                    )
                else:  # the oldest hashed go
                    merged = dict(_lines(path))
                    merged.update((key, e.line(key)) for key, e in learned.items())
                    keep = sorted(merged, key=lambda k: int(merged[k].split(None, 6)[5]))[-MAX_ENTRIES:]
                    _write(path, (merged[k] for k in keep))
        except LockHeld:
            return False
        return True


def filesystem_now(folder: Path) -> int:
    """The filesystem's clock (what it stamps mtimes with), read from a folder just created in it."""
    return folder.stat().st_mtime_ns


def _read(path: Path) -> dict[Key, str]:
    return dict(_lines(path))


def _lines(path: Path) -> Iterator[tuple[Key, str]]:
    """The record's valid lines, each with its key, within the bounds (none when it is missing or damaged)."""
    count = 0
    try:
        # Never through a symlink, only a regular file: a link planted at the record's name is not read.
        fd = open_regular(path, os.O_RDONLY, what="the digest record")
    except InputError:
        return
    try:
        with open(fd, encoding="ascii", errors="replace") as f:
            if f.readline() != HEADER:
                return
            budget = MAX_BYTES
            for line in f:
                budget -= len(line)
                if budget < 0 or count >= MAX_ENTRIES:
                    break
                valid = LINE.fullmatch(line)  # as `_Entry.line` writes it (kept as read: written back as read)
                if valid is None:
                    continue
                count += 1
                yield int(valid[1]) << 64 | int(valid[2]), line if line.endswith("\n") else line + "\n"
    except OSError:
        return


def _write(path: Path, lines: Iterable[str]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(HEADER)
            f.writelines(lines)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
