"""Step: sha256 (and md5 where asked) of every file, from one streaming read, files hashed in parallel.

One reader per file fills two alternating buffers; sha256 runs on the reading thread while md5 runs
on a side thread (hashlib releases the GIL on large updates), so two digests cost about one.
Memory stays flat whatever the file size.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .pipeline import Context, Done, StepResult

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Digests:
    size: int
    sha256: str
    md5: str | None = None


def hash_file(path: Path, *, md5: bool = False, on_bytes: Callable[[int], None] | None = None) -> Digests:
    """Digests of one file from a single sequential read."""
    sha = hashlib.sha256()
    side_md5 = hashlib.md5() if md5 else None
    buffers = (bytearray(CHUNK), bytearray(CHUNK))
    size = 0
    with open(path, "rb", buffering=0) as f, ThreadPoolExecutor(max_workers=1) as side:
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_SEQUENTIAL)
        pending = None
        turn = 0
        while True:
            buf = buffers[turn]
            n = f.readinto(buf)
            if pending is not None:
                pending.result()  # the side thread is done with the other buffer
                pending = None
            if not n:
                break
            view = memoryview(buf)[:n]
            if side_md5 is not None:
                pending = side.submit(side_md5.update, view)
            sha.update(view)
            size += n
            if on_bytes:
                on_bytes(n)
            turn ^= 1
    return Digests(size, sha.hexdigest(), side_md5.hexdigest() if side_md5 else None)


def hash_files(
    jobs: Sequence[tuple[Path, bool]],
    *,
    workers: int | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> list[Digests]:
    """Hash (path, want_md5) jobs in parallel across cores; results in the order given."""
    if not jobs:
        return []
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # largest first, so one big file does not start last and run alone
        order = sorted(range(len(jobs)), key=lambda i: -jobs[i][0].stat().st_size)
        futures = {i: pool.submit(hash_file, jobs[i][0], md5=jobs[i][1], on_bytes=on_bytes) for i in order}
        return [futures[i].result() for i in range(len(jobs))]


def progress_bar(total: int, enabled: bool, desc: str) -> Callable[[int], None] | None:
    """A thread-safe byte counter drawn as a tqdm bar, only for people at a terminal."""
    if not enabled:
        return None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False)
    return bar.update


class Digest:
    name = "digest"

    def run(self, ctx: Context) -> StepResult:
        todo = [f for f in ctx.files if not f.sha256]
        total = sum(f.staged.stat().st_size for f in todo)
        results = hash_files(
            [(f.staged, f.wants_md5) for f in todo],
            on_bytes=progress_bar(total, ctx.progress, "hashing"),
        )
        for f, d in zip(todo, results, strict=True):
            f.size, f.sha256, f.md5 = d.size, d.sha256, d.md5
        return Done(f"{len(todo)} files, {total} bytes hashed")
