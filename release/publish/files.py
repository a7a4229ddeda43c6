"""A release's files as the Hub must hold them (Expected, from release.json) and as its listing gives them
(client.RemoteFile); whether one is the other. The plan, the landed check and remote verify all compare these two."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from release.hub.client import RemoteFile
from release.staged import StagedRelease
from release.staged.manifest import REGULAR_FILE_MAX_BYTES, ManifestFile, git_blob_id
from release.staged.names import MANIFEST_NAME, SUMS_NAME


@dataclass(frozen=True)
class Expected:
    """What the Hub must hold at a path for it to be this release's file: its size, its sha256 (what an LFS
    pointer names) and its git blob id (what the listing gives for a plain file; None for LFS-only sizes)."""

    sha256: str
    size: int
    blob_id: str | None


def matches(remote: RemoteFile, expected: Expected) -> bool:
    """Whether a remote file is the expected content: by LFS oid, or by git blob id for a plain file.
    Both sides come from release.json and the Hub's listing; the local disk is never consulted."""
    if remote.size != expected.size:
        return False
    if remote.sha256 is not None:
        return remote.sha256 == expected.sha256
    return expected.blob_id is not None and remote.blob_id == expected.blob_id


def release_paths(staged: StagedRelease) -> dict[str, Expected]:
    """Every path a pushed release holds, as release.json says it must be: manifest files (with the git blob
    id build recorded), then release.json, SHA256SUMS and model.sig when signed (small bookkeeping files,
    as read once with the manifest). SHA256SUMS is the one release.json implies, not the staged copy: one
    edited (or lost) since build is a local change (refused as such), not a difference of the Hub's. A manifest of an
    older hf-release lacks blob ids: a staged file whose bytes still have the manifest's sha256 supplies it."""
    paths = {
        f.path_in_repo: Expected(f.sha256, f.size, f.git_blob_id or _legacy_blob_id(staged.dist / f.path_in_repo, f))
        for f in staged.manifest.files
    }
    bookkeeping = dict(staged.bookkeeping)
    bookkeeping[SUMS_NAME] = staged.manifest.sha256sums(hashlib.sha256(bookkeeping[MANIFEST_NAME]).hexdigest())
    for name, data in bookkeeping.items():
        paths[name] = Expected(hashlib.sha256(data).hexdigest(), len(data), git_blob_id(data))
    return paths


def _legacy_blob_id(path: Path, f: ManifestFile) -> str | None:
    if f.size >= REGULAR_FILE_MAX_BYTES or not path.is_file():
        return None
    data = path.read_bytes()
    return git_blob_id(data) if hashlib.sha256(data).hexdigest() == f.sha256 else None
