"""sha256 (and md5 where asked) of every file, from one streaming read, files hashed in parallel: what build
(release/builder/hashing.py), verify and push hash with.

One reader per file fills two alternating buffers; sha256 runs on the reading thread while md5 runs
on a side thread (hashlib releases the GIL on large updates), so two digests cost about one.
Memory stays flat whatever the file size. Per-file cost stays small for releases of thousands of files:
each worker thread allocates its two buffers once (sized to the largest file it meets, at most CHUNK) and
reuses them, and a file that fits in one buffer is hashed without the side thread. Every worker checks a stop
flag between chunks, so Ctrl-C ends the hashing within one chunk's time instead of waiting for the largest
file to finish.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

from release.staged.manifest import REGULAR_FILE_MAX_BYTES
from release.util.cpus import usable_cpus

CHUNK = 8 * 1024 * 1024  # with md5: the side thread hashes one buffer while the next is read
# without md5, one reader hashes each chunk right after reading it: 1 MiB stays in the CPU's cache between the
# two, 8 MiB does not (the chunk sizes' timings: bench/RESULTS.md).
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
# thread waits for the GIL up to the switch interval, 5 ms by default, as long as hashing an 8 MiB chunk takes
# (a hash beside the linter's imports, at both intervals: bench/RESULTS.md).
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
    on_bytes: Callable[[int], object] | None = None,
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
    on_bytes: Callable[[int], object] | None = None,
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
    if sizes is None:
        sizes = [os.stat(path).st_size for path, _ in jobs]
    results: list[Digests | None] = [None] * len(jobs)
    # largest first, so one big file does not start last and run alone
    queue = iter(sorted(range(len(jobs)), key=sizes.__getitem__, reverse=True))
    hash_queued(jobs, queue, results, workers or min(len(jobs), usable_cpus()), on_bytes, stop or threading.Event())
    return results  # type: ignore[return-value]  # every slot filled


def hash_queued(
    jobs: Sequence[tuple[str | os.PathLike[str], bool]],
    queue: Iterator[int],
    results: list[Digests | None],
    workers: int,
    on_bytes: Callable[[int], object] | None,
    stop: threading.Event,
) -> None:
    """Hash jobs[i] into results[i] for each index `queue` gives, on `workers` threads (see hash_files)."""
    failures: list[BaseException] = []

    def work() -> None:
        try:
            for i in queue:  # each next() is atomic under the GIL (or its own lock), so each file goes to one thread
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


def progress_bar(total: int, enabled: bool, desc: str) -> Callable[[int], object] | None:
    """A thread-safe byte counter drawn as a tqdm bar, only for people at a terminal."""
    if not enabled:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)
    return bar.update
