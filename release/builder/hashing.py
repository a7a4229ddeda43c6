"""The build's hashing of the staged files, begun as Collect stages them and finished by the Digest step.

The content checks and the card's facts, which need no digest, run on the main thread meanwhile. Files the
digest record vouches for are served from it, never read. A few files are hashed by threads here once Collect
is done (hashlib and reads release the GIL for long stretches). Many are sent, as Collect links them, to a
forked child with its own GIL (release/util/forked.py), which hashes them with release/staged/digest.py's
threads, on every core the process may use (release/util/cpus.py) while large files wait, on all but one while
the files waiting are small (see _Arriving). Python beside the hashing of small files in one process holds it
up, since each file's hashing needs the GIL several times (the timings: bench/RESULTS.md), and the parent's
Python (collect, the checks, the drawing) is what the build waits for. A child that gives no result (it could
not fork, it failed) leaves the hashing to threads here, which raise the error.
"""

from __future__ import annotations

import heapq
import os
import threading
from collections.abc import Callable
from typing import cast

from release.pipeline import Context, Done, StepResult
from release.staged.digest import POLL, Digests, Stopped, hash_files, hash_queued, progress_bar
from release.staged.staged_file import StagedFile
from release.util.cpus import usable_cpus
from release.util.forked import Forked, fork_call
from release.util.wording import counted

MANY_FILES = 64  # past this many files to hash: the child, or (hashed here) the charts drawn after the hashing
SEND_FILES, SEND_BYTES = 32, 16 << 20  # a batch sent to the child: few writes, and a large file at once
SPARE_BYTES = 1 << 30  # waiting to be hashed, past which the child hashes on every core (~0.5 s of one core's work)
# a file this large waiting gets the parent's core too: its hashing, not the parent's Python, is what the build
# waits for (16 files of 1 GiB on 16 cores: one wave of one file's time, not two)
SPARE_FILE_BYTES = 64 << 20
# files to hash holding this much go to the child however few they are: 16 threads hashing 16 × 1 GiB here took
# 4.2-5.5 s on 16 cores beside the parent's Python (the card's chart drawn meanwhile), openssl × 16 1.5 s
STREAM_BYTES = 256 << 20


class Hashing:
    """Collect calls `add` for each file it stages (with its stat), then `start`; Digest calls `finish`."""

    def __init__(self, ctx: Context, staging: int) -> None:
        """`staging`: how many files Collect is about to stage (more than MANY_FILES: the child, unless a
        progress bar is to be fed, which a child cannot)."""
        self._record = ctx.digests if ctx.digests is not None and ctx.digests.holds_any else None
        self._progress = ctx.progress
        self._streamable = not ctx.progress
        self._streamed = staging > MANY_FILES and self._streamable
        self._todo_bytes = 0
        self.todo: list[StagedFile] = []
        self._sizes: list[int] = []
        self.kept = 0
        self.reused = 0  # bytes served from the digest record
        self.total = 0
        self.stop = threading.Event()
        self._child: Forked[list[Digests]] | None = None
        self._sender: int | None = None  # the pipe to the child
        self._batch: list[bytes] = []
        self._batch_bytes = 0
        self._thread: threading.Thread | None = None
        self._results: list[Digests] | None = None
        self._error: BaseException | None = None

    def add(self, f: StagedFile) -> None:
        """One staged file, with its stat: served from the digest record, or to be hashed (by the child at once)."""
        assert f.stat is not None, "Collect stats each file it stages"
        known = self._record.lookup(f.stat, md5=f.wants_md5) if self._record is not None and not f.sha256 else None
        if f.sha256 or known is not None:
            if known is not None:
                f.size, f.sha256, f.git_blob_id, f.reused = known.size, known.sha256, known.git_blob_id, True
                f.md5 = known.md5 if f.wants_md5 else None
                self.reused += known.size
            self.kept += 1
            return
        self.todo.append(f)
        self._sizes.append(f.stat.st_size)
        self._todo_bytes += f.stat.st_size
        if self._streamable and self._todo_bytes >= STREAM_BYTES:
            self._streamed = True  # few but large files: hashed beside the parent's Python they wait for its GIL
        if self._streamed and self._child is None and self._sender is None:
            self._fork()
            earlier_files: list[StagedFile] = self.todo[:-1] if self._sender is not None else []
            for earlier in earlier_files:
                self._queue(earlier)  # staged before the bytes waiting made the child worth its fork
        if self._sender is not None:
            self._queue(f)

    def _queue(self, f: StagedFile) -> None:
        """One file for the child, sent with its batch."""
        assert f.stat is not None
        self._batch.append(b"%d %d %s\0" % (f.stat.st_size, f.wants_md5, os.fsencode(f.staged_name)))
        self._batch_bytes += f.stat.st_size
        if len(self._batch) >= SEND_FILES or self._batch_bytes >= SEND_BYTES:
            self._send()

    def start(self) -> None:
        """Every file is added: the child is told so; otherwise threads hash them from here."""
        self.total = sum(self._sizes)
        if self._sender is not None:
            self._send()
            self._close_sender()
        on_bytes = progress_bar(self.total, self._progress, "hashing") if self._child is None else None
        self._thread = threading.Thread(target=self._run, args=(on_bytes,), name="hashing", daemon=True)
        self._thread.start()

    @property
    def stalls_beside_python(self) -> bool:
        """Python run beside the hashing would hold it up: more than MANY_FILES files hashed by threads in this
        process (a progress bar to feed, or no fork). A child has a GIL of its own."""
        return self._child is None and len(self.todo) > MANY_FILES

    def _fork(self) -> None:
        """The child, forked at the first file to hash: Collect runs no thread (fork_call refuses otherwise)."""
        jobs, sender = os.pipe()
        self._child = fork_call(_hashed_as_sent, jobs, sender)
        os.close(jobs)
        if self._child is None:
            os.close(sender)
            self._streamed = self._streamable = False
        else:
            self._sender = sender

    def _send(self) -> None:
        data, self._batch, self._batch_bytes = memoryview(b"".join(self._batch)), [], 0
        try:
            while data and self._sender is not None:
                data = data[os.write(self._sender, data) :]
        except OSError:  # the child is gone: its result() gives None, and threads hash every file
            self._close_sender()

    def _close_sender(self) -> None:
        if self._sender is not None:
            os.close(self._sender)
            self._sender = None

    def _run(self, on_bytes: Callable[[int], object] | None) -> None:
        try:
            if self._child is not None:
                results = self._child.result()
                self._results = results if results is not None and len(results) == len(self.todo) else None
            if self._results is None and not self.stop.is_set():
                jobs = [(f.staged_name, f.wants_md5) for f in self.todo]
                self._results = hash_files(jobs, on_bytes=on_bytes, stop=self.stop, sizes=self._sizes)
            if self._results is None:
                raise Stopped("the hashing was stopped")
        except BaseException as exc:  # noqa: BLE001 - raised in the main thread by finish()
            self._error = exc

    def finish(self) -> None:
        """Wait for the hashing (Ctrl-C gets in) and give each file its digests; its error, if it failed."""
        assert self._thread is not None, "Collect starts the hashing"
        try:
            while self._thread.is_alive():
                self._thread.join(POLL)
        except BaseException:
            self.cancel()
            raise
        if self._error is not None:
            raise self._error
        assert self._results is not None
        for f, d in zip(self.todo, self._results, strict=True):
            f.size, f.sha256, f.md5, f.git_blob_id = d.size, d.sha256, d.md5, d.git_blob_id

    def cancel(self) -> None:
        """Stop the hashing (within one chunk per file being read, or the child at once) and wait for it: the
        build failed before it (Collect included)."""
        self.stop.set()
        self._close_sender()
        if self._child is not None:
            self._child.kill()
        if self._thread is not None:
            self._thread.join()
        elif self._child is not None:
            self._child.close()  # reaped here: no thread waits for its result


class _Arriving:
    """In the child: the jobs the parent sends (`size md5 path\\0` each), given to the hashing threads as they
    arrive, the largest first among those waiting; the iteration ends when the parent closes the pipe.

    All threads but `regulars` are spares: a core left to the parent, whose Python (collect, the checks, the
    drawing) is what the build waits for while files are small. A spare hashes only while the hashing, not the
    parent, is what the build waits for: a file of SPARE_FILE_BYTES or more waits, or more than SPARE_BYTES do
    (see spare_hashes)."""

    def __init__(self, fd: int, regulars: int) -> None:
        self.jobs: list[tuple[str, bool]] = []
        self.results: list[Digests | None] = []
        self.error: OSError | None = None
        self._waiting: list[tuple[int, int]] = []  # a heap of (-size, index)
        self._waiting_bytes = 0
        self._spare: dict[int, bool] = {}  # each thread (by ident): a spare?
        self._regulars = regulars
        self._ended = False
        self._ready = threading.Condition()
        threading.Thread(target=self._read, args=(fd,), name="jobs", daemon=True).start()

    def _read(self, fd: int) -> None:
        rest = b""
        try:
            while chunk := os.read(fd, 1 << 16):
                *records, rest = (rest + chunk).split(b"\0")
                with self._ready:
                    for record in records:
                        size, md5, path = record.split(b" ", 2)
                        heapq.heappush(self._waiting, (-int(size), len(self.jobs)))
                        self._waiting_bytes += int(size)
                        self.jobs.append((os.fsdecode(path), md5 == b"1"))
                        self.results.append(None)
                    self._ready.notify_all()
        except OSError as exc:
            self.error = exc
        finally:
            with self._ready:
                self._ended = True
                self._ready.notify_all()

    def __iter__(self) -> _Arriving:
        return self

    def __next__(self) -> int:
        with self._ready:
            spare = self._spare.setdefault(threading.get_ident(), len(self._spare) >= self._regulars)
            while True:
                if self._waiting and (not spare or spare_hashes(-self._waiting[0][0], self._waiting_bytes)):
                    size, index = heapq.heappop(self._waiting)
                    self._waiting_bytes += size  # size is negated in the heap
                    return index
                if self._ended and (spare or not self._waiting):
                    raise StopIteration
                self._ready.wait()


def spare_hashes(largest_waiting: int, waiting_bytes: int) -> bool:
    """Whether a spare thread (the parent's core) hashes now: the largest file waiting is SPARE_FILE_BYTES or
    more, or more than SPARE_BYTES wait in all; small files leave the core to the parent's Python."""
    return largest_waiting >= SPARE_FILE_BYTES or waiting_bytes > SPARE_BYTES


def hashing_threads(cpus: int) -> tuple[int, int]:
    """(threads, regulars) of the hashing child on `cpus` CPUs: a thread per CPU, all but one regular."""
    return cpus, max(1, cpus - 1)


def _hashed_as_sent(jobs: int, sender: int) -> list[Digests]:
    os.close(sender)  # the parent's end: the child must see the pipe close when the parent is done sending
    workers, regulars = hashing_threads(usable_cpus())
    arriving = _Arriving(jobs, regulars=regulars)
    hash_queued(arriving.jobs, arriving, arriving.results, workers, None, threading.Event())
    if arriving.error is not None:
        raise arriving.error
    return cast("list[Digests]", arriving.results)  # hash_queued fills every slot or raises


class Digest:
    name = "digest"

    def run(self, ctx: Context) -> StepResult:
        hashing, ctx.hashing = ctx.hashing, None
        assert isinstance(hashing, Hashing), "Collect begins the hashing"
        hashing.finish()
        kept = (
            f"; {counted(hashing.kept, 'file')} ({hashing.reused:,} bytes) unchanged since hashed (digest record)"
            if hashing.reused
            else ""
        )
        return Done(f"{counted(len(hashing.todo), 'file')} from the spec hashed ({hashing.total:,} bytes){kept}")
