"""What a push sent over Xet, as hf_xet itself reports it: for each upload commit hf_xet opens, its report's
deduplication figures — the bytes of new chunks and of chunks deduplicated (held by the Hub, or repeated within
the push), and the bytes of xorbs and shards it uploaded (compressed, on the wire). Counted on the client, so
the figures hold against any Hub, not only the local one.

huggingface_hub 2.4 opens the commit inside `_upload_xet_files` and keeps hf_xet's report to itself; it takes
hf_xet's session from `huggingface_hub.utils._xet.get_xet_session` on each upload. For the duration of the
upload that function hands out a session whose upload commits finish through `wait_to_finish` (what leaving
their `with` block does) and keep the report. Where a later huggingface_hub no longer has it, nothing is
patched and push says the bytes are not measured.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class XetSent:
    """Sums of hf_xet's commit reports over one push (every commit it opened: one per preupload chunk)."""

    new: int = 0  # bytes of chunks not held anywhere the Hub let hf_xet dedupe against (before compression)
    deduplicated: int = 0  # bytes of chunks not sent: the Hub held them, or the push repeats them
    xorbs: int = 0  # bytes of xorbs uploaded (compressed chunks and their headers)
    shards: int = 0  # bytes of shards uploaded (the file reconstructions)
    commits: int = 0  # upload commits reported
    files: dict[str, tuple[int, int]] = field(default_factory=dict)  # local path -> (new, deduplicated) bytes
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def wire(self) -> int:
        return self.xorbs + self.shards

    def add(self, report: Any, uploads: list[tuple[str, Any]]) -> None:
        """A commit's report, and each file's own figures from its upload's result."""
        metrics = report.dedup_metrics
        with self._lock:
            for path, upload in uploads:
                mine = upload.result().dedup_metrics
                self.files[path] = (int(mine.new_bytes), int(mine.deduped_bytes))
            self.new += int(metrics.new_bytes)
            self.deduplicated += int(metrics.deduped_bytes)
            self.xorbs += int(metrics.xorb_bytes_uploaded)
            self.shards += int(metrics.shard_bytes_uploaded)
            self.commits += 1


class _Commit:
    """hf_xet's upload commit, whose report is kept when its `with` block ends without an error."""

    def __init__(self, commit: Any, sent: XetSent) -> None:
        self._commit = commit
        self._sent = sent
        self._uploads: list[tuple[str, Any]] = []

    def start_upload_file(self, path: str, *args: Any, **kwargs: Any) -> Any:
        upload = self._commit.start_upload_file(path, *args, **kwargs)
        self._uploads.append((path, upload))
        return upload

    def __enter__(self) -> _Commit:
        self._commit.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: Any) -> bool | None:
        if kind is not None:
            return self._commit.__exit__(kind, value, tb)
        self._sent.add(
            self._commit.wait_to_finish(), self._uploads
        )  # the commit's end, as __exit__ would do it (not twice)
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._commit, name)


class _Session:
    def __init__(self, session: Any, sent: XetSent) -> None:
        self._session = session
        self._sent = sent

    def new_upload_commit(self, *args: Any, **kwargs: Any) -> _Commit:
        return _Commit(self._session.new_upload_commit(*args, **kwargs), self._sent)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


@contextmanager
def metered_xet(sent: XetSent) -> Iterator[bool]:
    """Within the block, every hf_xet upload commit huggingface_hub opens adds its report to `sent`; yields
    whether it can (False: this huggingface_hub takes its session elsewhere, nothing is counted)."""
    try:
        from huggingface_hub.utils import _xet
    except ImportError:
        yield False
        return
    real: Callable[[], Any] | None = getattr(_xet, "get_xet_session", None)
    if real is None:
        yield False
        return
    _xet.get_xet_session = lambda: _Session(real(), sent)
    try:
        yield True
    finally:
        _xet.get_xet_session = real
