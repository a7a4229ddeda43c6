"""The build's hashing child's choice of workers (release/builder/hashing.py): every core while large files wait,
the parent's core left to its Python while small ones do."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from release.builder.hashing import SPARE_BYTES, SPARE_FILE_BYTES, _Arriving, hashing_threads, spare_hashes

GIB = 1 << 30


def taken_by_threads(sizes: list[int], cpus: int) -> list[int | None]:
    """Each of the child's threads asks once, one after another (the regulars first, as they start first), for
    a job of the files of `sizes` sent at once: the job each got, None for a thread that was told to end."""
    threads, regulars = hashing_threads(cpus)
    reader, writer = os.pipe()
    arriving = _Arriving(reader, regulars=regulars)
    os.write(writer, b"".join(b"%d 0 /f%d\0" % (size, i) for i, size in enumerate(sizes)))
    os.close(writer)
    got: list[int | None] = []
    asked, done = threading.Semaphore(0), threading.Event()

    def ask() -> None:  # it lives on, as the child's threads do: a spare is told apart by its thread
        got.append(next(arriving, None))
        asked.release()
        done.wait(10)

    started = [threading.Thread(target=ask) for _ in range(threads)]
    for thread in started:
        thread.start()
        assert asked.acquire(timeout=10)
    done.set()
    for thread in started:
        thread.join(10)
    return got


def test_sixteen_files_of_a_gib_on_sixteen_cpus_hash_in_one_wave() -> None:
    got = taken_by_threads([GIB] * 16, cpus=16)
    assert None not in got and sorted(got) == list(range(16))  # type: ignore[type-var]  # none left for a 2nd wave


def test_small_files_leave_the_parents_core_to_it() -> None:
    got = taken_by_threads([1 << 20] * 40, cpus=16)
    assert got[:15] == list(range(15)) and got[15] is None  # the 16th thread is the spare: it ends


@pytest.mark.parametrize(
    ("largest", "waiting", "expected"),
    [
        (SPARE_FILE_BYTES, SPARE_FILE_BYTES, True),
        (SPARE_FILE_BYTES - 1, SPARE_FILE_BYTES - 1, False),
        (1 << 20, SPARE_BYTES + 1, True),  # many small files, but more than the parent's share of work waits
        (1 << 20, SPARE_BYTES, False),
    ],
)
def test_a_spare_hashes_only_when_the_hashing_is_what_the_build_waits_for(
    largest: int, waiting: int, expected: bool
) -> None:
    assert spare_hashes(largest, waiting) is expected


def test_a_thread_per_cpu_one_of_them_spare() -> None:
    assert hashing_threads(16) == (16, 15)
    assert hashing_threads(1) == (1, 1)  # one CPU: no spare


@pytest.mark.parametrize("stream_bytes", [1, 1 << 62])
def test_few_files_holding_many_bytes_are_hashed_in_the_child(
    build_example: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, stream_bytes: int
) -> None:
    """Fewer than MANY_FILES files, but STREAM_BYTES of them to hash: the forked child hashes them (its own GIL,
    not the parent's, which the checks and the chart hold), each digest right."""
    import hashlib

    import release.builder.hashing as hashing

    forks: list[object] = []
    fork_call = hashing.fork_call
    monkeypatch.setattr(hashing, "STREAM_BYTES", stream_bytes)
    monkeypatch.setattr(hashing, "fork_call", lambda *args: forks.append(args) or fork_call(*args))
    dist = build_example()
    assert len(forks) == (1 if stream_bytes == 1 else 0)
    for line in (dist / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest, name
