"""Step: sha256 (and md5 where asked) of every file, from one streaming read, files hashed in parallel.

One reader per file fills two alternating buffers; sha256 runs on the reading thread while md5 runs
on a side thread (hashlib releases the GIL on large updates), so two digests cost about one.
Memory stays flat whatever the file size. Per-file cost stays small for releases of thousands of files:
each worker thread allocates its two buffers once (sized to the largest file it meets, at most CHUNK) and
reuses them, and a file that fits in one buffer is hashed without the side thread. Every worker checks a stop flag between chunks, so Ctrl-C ends the
hashing within one chunk's time instead of waiting for the largest file to finish.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, TypeVar
from dataclasses import dataclass

from .forked import fork_call
from .manifest import REGULAR_FILE_MAX_BYTES
from .wording import counted

if TYPE_CHECKING:  # the build step below: verify and hash, which import this module, never load the pipeline
    from .pipeline import Context, StagedFile, StepResult

CHUNK = 8 * 1024 * 1024  # with md5: the side thread hashes one buffer while the next is read
# without md5, one reader hashes each chunk right after reading it: 1 MiB stays in the CPU's cache between the
# two, 8 MiB does not. Measured (2 cores, warm): sha256 of one 2.3 GB file 2.05-2.18 s at 1 MiB, 2.21-2.39 s
# at 8 MiB, openssl 2.28-2.41 s; the mixed release's 5,022 files 3.05-3.18 CPU-s against 3.36-3.53.
SHA_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)  # one per file: no __dict__
class Digests:
    size: int
    sha256: str
    md5: str | None = None
    git_blob_id: str | None = None  # for a file small enough to be stored as a plain git blob on the Hub


class Stopped(Exception):
    """The hashing was told to stop (Ctrl-C in the main thread) before this file was done."""


T = TypeVar("T")
POLL = 0.2  # seconds between the main thread's looks at pending signals while it waits
# Hashing beside GIL-bound work (verify's card lint and its imports, build's chart): between two chunks a hashing
# thread waits for the GIL up to the switch interval, 5 ms by default, as long as hashing an 8 MiB chunk takes —
# measured, a 1 GB hash beside the linter's imports took 1.8× its time alone; with 0.5 ms, 1.1×.
HASHING_SWITCH_INTERVAL = 0.0005


def result_interruptibly(future: Future[T]) -> T:
    """future.result(), but Ctrl-C gets in: the kernel may deliver SIGINT to a worker thread, and then an
    untimed wait in the main thread is not woken until the future is done (the whole file hashed)."""
    while True:
        try:
            return future.result(timeout=POLL)
        except FutureTimeout:
            continue


_buffers = threading.local()  # each worker thread's two read buffers, grown to the largest file it has read
MIN_BUFFER = 64 * 1024


def _thread_buffers(size: int) -> tuple[mmap.mmap, mmap.mmap]:
    """Two buffers big enough to read a file of `size` bytes whole (and see its end), at most CHUNK each:
    a thread that only meets small files never touches 16 MiB.

    Anonymous maps, page-aligned, not bytearrays: measured in a fresh process, reading a 2.3 GB file into a
    pair of 8 MiB bytearrays (malloc's memory) cost 35% more CPU than into maps of the same size (2.97 s vs
    2.18 s; openssl 2.35 s); a process's first allocation is every CLI run's."""
    need = min(CHUNK, max(MIN_BUFFER, size + 1))
    pair = getattr(_buffers, "pair", None)
    if pair is None or len(pair[0]) < need:
        pair = _buffers.pair = (mmap.mmap(-1, need), mmap.mmap(-1, need))
    return pair


def hash_file(
    path: str | os.PathLike[str],
    *,
    md5: bool = False,
    on_bytes: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
) -> Digests:
    """Digests of one file from a single sequential read; raises Stopped once `stop` is set.

    A file under REGULAR_FILE_MAX_BYTES also gets its git blob id (sha1 over `blob <size>\\0` + bytes): what the
    Hub's listing reports for a file it stores as a plain git blob. Its header needs the size before the read:
    a file whose size changes during the read gets none (and its changed stat fails the build)."""
    sha = hashlib.sha256()
    side_md5 = hashlib.md5() if md5 else None
    blob = None
    size = 0
    side: ThreadPoolExecutor | None = None  # started only for a file longer than one buffer
    pending: Future[None] | None = None
    try:
        with open(path, "rb", buffering=0) as f:
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
            expected = os.fstat(f.fileno()).st_size
            if expected < REGULAR_FILE_MAX_BYTES:
                blob = hashlib.sha1(b"blob %d\0" % expected)
            buffers = _thread_buffers(expected)
            full = len(buffers[0]) if md5 else min(len(buffers[0]), SHA_CHUNK)
            turn = 0
            while True:
                if stop is not None and stop.is_set():
                    raise Stopped(str(path))
                buf = buffers[turn]
                n = f.readinto(buf if len(buf) == full else memoryview(buf)[:full])
                if pending is not None:
                    pending.result()  # the side thread is done with the other buffer
                    pending = None
                if not n:
                    break
                view = memoryview(buf)[:n]
                if side_md5 is not None:
                    if n < full and side is None:
                        side_md5.update(view)  # last (or only) chunk: a thread would cost more than it saves
                    else:
                        side = side or ThreadPoolExecutor(max_workers=1)
                        pending = side.submit(side_md5.update, view)
                sha.update(view)
                if blob is not None:
                    blob.update(view)
                size += n
                if on_bytes:
                    on_bytes(n)
                turn ^= 1
    finally:
        if side is not None:
            side.shutdown(wait=True)
    blob_id = blob.hexdigest() if blob is not None and size == expected else None
    return Digests(size, sha.hexdigest(), side_md5.hexdigest() if side_md5 else None, blob_id)


def hash_files(
    jobs: Sequence[tuple[str | os.PathLike[str], bool]],
    *,
    workers: int | None = None,
    on_bytes: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
    sizes: Sequence[int] | None = None,
) -> list[Digests]:
    """Hash (path, want_md5) jobs in parallel across cores; results in the order given. A path may be a str
    (50,000 Path objects would cost ~30 MB). `sizes`: each job's file size as the caller last saw it (it orders
    the work only), to spare a stat per file.

    Each worker thread takes the next file from one shared queue (largest first) until none is left: no
    Future per file, so thousands of small files cost little more than their bytes. An interrupt
    (KeyboardInterrupt or any other exception) in the caller's thread tells every worker to stop at its
    next chunk, so the exception propagates within a second; a worker's own error stops the others and is
    raised here. A caller running this on a background thread passes `stop` and sets it when its own thread
    is interrupted.
    """
    if not jobs:
        return []
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    stop = stop or threading.Event()
    results: list[Digests | None] = [None] * len(jobs)
    failures: list[BaseException] = []
    # largest first, so one big file does not start last and run alone
    if sizes is None:
        sizes = [os.stat(path).st_size for path, _ in jobs]
    queue = iter(sorted(range(len(jobs)), key=sizes.__getitem__, reverse=True))

    def work() -> None:
        try:
            for i in queue:  # a list iterator: each next() is atomic under the GIL, so each file goes to one thread
                results[i] = hash_file(jobs[i][0], md5=jobs[i][1], on_bytes=on_bytes, stop=stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            failures.append(exc)
            stop.set()

    threads = [threading.Thread(target=work, name=f"hash_{n}", daemon=True) for n in range(workers)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, HASHING_SWITCH_INTERVAL))
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(POLL)  # timed: Ctrl-C gets in (see result_interruptibly)
    except BaseException:
        stop.set()
        raise
    finally:
        for thread in threads:
            if thread.ident is not None:
                thread.join()  # each stops within one chunk once `stop` is set
        sys.setswitchinterval(switch)
    if failures:
        raise failures[0]
    return results  # type: ignore[return-value]  # every slot filled


def progress_bar(total: int, enabled: bool, desc: str) -> Callable[[int], None] | None:
    """A thread-safe byte counter drawn as a tqdm bar, only for people at a terminal."""
    if not enabled:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)
    return bar.update


# Past this many files to hash, the hashing needs the GIL too often for Python beside it: each file's hashing takes
# it several times, and the main thread's checks (or the card's drawing), holding it meanwhile, all but stop
# hashing threads (measured, 5,000 × 100 KB: 0.6-1.0 s alone, 1.1-1.3 s beside the checks, 3.1-3.5 s beside the
# drawing). So the build hashes them in a forked child (with no progress bar to feed), and draws afterwards.
MANY_FILES = 64


class Hashing:
    """The build's hashing of the staged files, from the moment they are staged (Collect starts it): the content
    checks and the card's facts, which need no digest, run on the main thread meanwhile, and the Digest step waits
    for what is left. Files the digest record vouches for are served from it first, as before.

    A few files are hashed by threads here (hashlib and reads release the GIL for long stretches); many, in a
    forked child with its own GIL (release/forked.py; its threads are this module's). A child that gives no
    result (it could not fork, it failed) leaves the hashing to threads here, which raise the error."""

    def __init__(self, ctx: Context) -> None:
        self.todo: list[StagedFile] = []
        self.reused = 0  # bytes served from the digest record
        for f in ctx.files:
            if f.sha256:
                continue
            known = ctx.digests.lookup(f.stat, md5=f.wants_md5) if ctx.digests is not None and f.stat else None
            if known is None:
                self.todo.append(f)
                continue
            f.size, f.sha256, f.git_blob_id, f.reused = known.size, known.sha256, known.git_blob_id, True
            f.md5 = known.md5 if f.wants_md5 else None
            self.reused += known.size
        self.kept = len(ctx.files) - len(self.todo)
        sizes = [(f.stat or os.stat(f.staged_name)).st_size for f in self.todo]
        self.total = sum(sizes)
        self.stop = threading.Event()
        self._results: list[Digests] | None = None
        self._error: BaseException | None = None
        jobs = [(f.staged_name, f.wants_md5) for f in self.todo]
        on_bytes = progress_bar(self.total, ctx.progress, "hashing")
        # forked here, while this is the process's one thread (fork_call refuses otherwise)
        self._child = fork_call(_hashed_in_child, jobs, sizes) if on_bytes is None and self.many_files else None
        self._thread = threading.Thread(target=self._run, args=(jobs, on_bytes, sizes), name="hashing", daemon=True)
        self._thread.start()

    @property
    def many_files(self) -> bool:
        """More than MANY_FILES files to hash: Python run beside the hashing holds it up."""
        return len(self.todo) > MANY_FILES

    def _run(self, jobs: list[tuple[str, bool]], on_bytes: Callable[[int], None] | None, sizes: list[int]) -> None:
        try:
            if self._child is not None:
                self._results = self._child.result()
            if self._results is None and not self.stop.is_set():
                self._results = hash_files(jobs, on_bytes=on_bytes, stop=self.stop, sizes=sizes)
            if self._results is None:
                raise Stopped("the hashing was stopped")
        except BaseException as exc:  # noqa: BLE001 - raised in the main thread by finish()
            self._error = exc

    def finish(self) -> None:
        """Wait for the hashing (Ctrl-C gets in) and give each file its digests; its error, if it failed."""
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
        """Stop the hashing (within one chunk per file being read, or the child at once) and wait for it: the build
        failed before it."""
        self.stop.set()
        if self._child is not None:
            self._child.kill()
        self._thread.join()


def _hashed_in_child(jobs: list[tuple[str, bool]], sizes: list[int]) -> list[Digests]:
    return hash_files(jobs, sizes=sizes)


class Digest:
    name = "digest"

    def run(self, ctx: Context) -> StepResult:
        from .pipeline import Done

        hashing, ctx.hashing = ctx.hashing or Hashing(ctx), None
        hashing.finish()
        kept = (f"; {counted(hashing.kept, 'file')} ({hashing.reused:,} bytes) unchanged since hashed (digest record)"
                if hashing.reused else "")
        return Done(f"{counted(len(hashing.todo), 'file')} from the spec hashed ({hashing.total:,} bytes){kept}")
