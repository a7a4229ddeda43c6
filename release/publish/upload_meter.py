"""What a push actually sent, measured at the file reads that feed the upload, not taken from the plan.

huggingface_hub reads a file for sending in two places: an LFS upload streams it (`as_file(with_tqdm=True)`,
single PUT or multipart parts, retries included), and a small "regular" file travels base64 inside the commit
that hf-release streams (commit_stream.py, which counts it here). Counting those reads gives the bytes handed
to the wire. An LFS file whose content the repo
already holds (a push killed after some uploads) is never read: the LFS batch answer has no upload action for
it. Over LFS the Hub keeps objects per repository, so the same shard in another repo is uploaded again, and
counted as sent. Other reads (hashing, the README's YAML check) are not sends and not counted.

With Xet, hf_xet reads the files itself and deduplicates chunks against what the Hub holds; its own report of
each upload commit (new and deduplicated chunk bytes, xorb and shard bytes uploaded) is kept in `xet`
(xet_meter.py). Where hf_xet's report cannot be had, a Xet push reports the bytes offered, not measured.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from huggingface_hub import CommitOperationAdd

from release.errors import Problem, PublishRefused
from release.publish.xet_meter import XetSent
from release.staged import moved_since

CHANGED_SINCE_BUILD = (
    "changed since build: the bytes read to send it do not have the sha256 release.json lists; "
    "nothing was committed; run `hf-release build` again"
)
CHANGED_WHILE_SENT = (
    "changed since build: it was written to while push read it for sending ({what} moved); nothing "
    "was committed; run `hf-release build` again once nothing writes to it"
)


@dataclass
class UploadMeter:
    """Bytes read for sending, per path in the repo, summed over every attempt of the push."""

    sent: dict[str, int] = field(default_factory=dict)
    xet: XetSent = field(default_factory=XetSent)  # hf_xet's reports of the Xet uploads
    xet_uploads: int = 0  # Xet upload commits huggingface_hub was asked for (one per preupload with Xet content)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def xet_measured(self) -> bool:
        """hf_xet reported every Xet upload of the push."""
        return self.xet.commits >= self.xet_uploads

    def count(self, path: str, n: int) -> None:
        with self._lock:
            self.sent[path] = self.sent.get(path, 0) + n

    @property
    def bytes_sent(self) -> int:
        return sum(self.sent.values())

    def already_held(self, offered: list[tuple[str, int]]) -> int:
        """Bytes of the offered (path, size) files the upload never read: the Hub already had their content."""
        return sum(size for path, size in offered if not self.sent.get(path))


@dataclass
class MeteredAdd(CommitOperationAdd):
    """A CommitOperationAdd that reports the bytes its LFS upload reads to an UploadMeter, and refuses the upload
    of a file whose stat moved since the preflight. `expected_sha256` is release.json's: the pointer's oid over
    LFS, what hf_xet's own hash must be over Xet, what a small file's bytes must hash to in the commit
    (commit_stream.py): the bytes published are the bytes hashed."""

    meter: UploadMeter | None = field(default=None, repr=False, kw_only=True)
    expected_sha256: str | None = field(default=None, repr=False, kw_only=True)
    expected_stat: list[int] | None = field(default=None, repr=False, kw_only=True)  # as the preflight saw it

    @contextmanager
    def as_file(self, with_tqdm: bool = False) -> Iterator[BinaryIO]:
        if not with_tqdm:
            with super().as_file() as file:
                yield file
            return
        # The LFS upload's stream (a single PUT, or every part and then the completion): the file's stat is
        # the preflight's when it is opened and still when the last part is read, or nothing is committed. An
        # edit in between would otherwise reach the Hub as bytes it refuses by sha256, reported as a Hub error
        # that every re-run repeats after sending the file again.
        self._unchanged()
        try:
            with super().as_file(with_tqdm=True) as file:
                if self.meter is not None:
                    read, meter, path = file.read, self.meter, self.path_in_repo

                    def counted_read(size: int | None = -1) -> bytes:
                        data = read(-1 if size is None else size)  # None: all of it, as io's read takes it
                        meter.count(path, len(data))
                        return data

                    file.read = counted_read  # type: ignore[method-assign]
                yield file
        except Exception:
            self._unchanged()  # the Hub refusing the bytes (sha256 mismatch) because the file moved: say so
            raise
        self._unchanged()

    def _unchanged(self) -> None:
        if self.expected_stat is not None and isinstance(self.path_or_fileobj, str):
            what = moved_since(Path(self.path_or_fileobj), self.expected_stat)
            if what:
                raise PublishRefused(Problem(self.path_in_repo, CHANGED_WHILE_SENT.format(what=what)))
