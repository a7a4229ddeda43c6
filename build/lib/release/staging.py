"""The staged release on disk: proving its files have not changed since build, cheaply.

Build records each file's (size, mtime, ctime, inode); push trusts the manifest's sha256 for a file
whose record still matches (ctime cannot be set back by a user) and re-hashes any other file.
The record lives beside the staging folder, not in it: it is local state, not part of the release.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .digest import hash_files
from .errors import Problem
from .manifest import MANIFEST_NAME, SUMS_NAME, Manifest


def stat_record_path(dist: Path) -> Path:
    return dist.parent / f".{dist.name}.stat.json"


def _fingerprint(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def record_stat(dist: Path, manifest: Manifest) -> None:
    record = {f.path_in_repo: _fingerprint(dist / f.path_in_repo) for f in manifest.files}
    stat_record_path(dist).write_text(json.dumps(record, sort_keys=True))


def changed_since_build(dist: Path, manifest: Manifest) -> tuple[list[Problem], int]:
    """Problems for staged files that differ from the manifest, and the bytes re-hashed to decide."""
    try:
        record = json.loads(stat_record_path(dist).read_text())
    except (OSError, ValueError):
        record = {}
    problems: list[Problem] = []
    suspects = []
    for f in manifest.files:
        path = dist / f.path_in_repo
        if not path.is_file():
            problems.append(Problem(f.path_in_repo, "is missing from the staged release; run `hf-release build` again"))
        elif record.get(f.path_in_repo) != _fingerprint(path):
            suspects.append(f)
    digests = hash_files([(dist / f.path_in_repo, False) for f in suspects]) if suspects else []
    for f, d in zip(suspects, digests, strict=True):
        if d.sha256 != f.sha256 or d.size != f.size:
            problems.append(
                Problem(f.path_in_repo, f"changed since build (sha256 {d.sha256[:12]}…, manifest {f.sha256[:12]}…); run `hf-release build` again")
            )
    return problems + bookkeeping_changed(dist, manifest), sum(f.size for f in suspects)


def bookkeeping_changed(dist: Path, manifest: Manifest) -> list[Problem]:
    """release.json and SHA256SUMS are pushed too: SHA256SUMS must still list release.json's sha256 and
    agree with the manifest (catches an edit of either that leaves the release digest intact)."""
    try:
        manifest_sha = hashlib.sha256((dist / MANIFEST_NAME).read_bytes()).hexdigest()
        sums = (dist / SUMS_NAME).read_bytes()
    except OSError:
        return [Problem(SUMS_NAME, "is missing from the staged release; run `hf-release build` again")]
    if sums == manifest.sha256sums(manifest_sha):
        return []
    listed = next((line.split()[0] for line in sums.decode("utf-8", "replace").splitlines()
                   if line.split()[1:] == [MANIFEST_NAME]), None)
    if listed is not None and listed != manifest_sha and sums == manifest.sha256sums(listed):
        return [Problem(MANIFEST_NAME, f"changed since build (sha256 {manifest_sha[:12]}…, {SUMS_NAME} lists {listed[:12]}…); "
                                       "run `hf-release build` again")]
    return [Problem(SUMS_NAME, f"changed since build: it does not agree with {MANIFEST_NAME}; run `hf-release build` again")]
