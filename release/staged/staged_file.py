"""A file of the release being built: its source, its place in the staging folder and the repo, its digests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from release.spec import FileSpec
from release.staged.file_stat import FileStat


@dataclass(slots=True)  # one per file, held from collect to the manifest: no __dict__, no Path or os.stat_result
class StagedFile:
    """A release file: its source on disk, its place in the staging folder and the repo.

    Compact because a release may have 50,000 of them (issue 24: ~3 KB of objects a file became ~0.7 KB):
    the source is a str, the staged path is made on demand from the one shared staging folder, the stat is a
    FileStat. The card's files table, the comparison and the release digest read this record itself."""

    spec: FileSpec | None  # None for files the build generates (card, chart, manifest)
    source: str  # the file as the spec names it (a symlink keeps its own name; collect links its target)
    path_in_repo: str
    role: str
    stage: Path  # the staging folder (one object shared by every file)
    size: int = 0
    sha256: str = ""
    md5: str | None = None
    git_blob_id: str | None = (
        None  # files small enough to be plain git blobs on the Hub (manifest.REGULAR_FILE_MAX_BYTES)
    )
    copied: bool = False  # True when a hard link was impossible (another filesystem)
    cloned: bool = False  # a copy-on-write clone (reflink): another inode, sharing the source's blocks
    source_stat: FileStat | None = None  # a clone's or copy's source, unchanged while it was staged
    reused: bool = False  # digests served from the digest record (release/staged/digest_record.py), not read again
    stat: FileStat | None = None  # taken when staged, before any step read it: what the build vouches for

    @property
    def staged(self) -> Path:
        return self.stage / self.path_in_repo

    @property
    def staged_name(self) -> str:
        """The staged path as a str (no Path made): for per-file system calls."""
        return f"{self.stage}/{self.path_in_repo}"

    @property
    def generated(self) -> bool:
        return self.spec is None

    @property
    def wants_md5(self) -> bool:
        return self.spec is not None and "md5" in self.spec.digests
