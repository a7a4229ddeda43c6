"""The staged release on disk: read once (release.json and the bookkeeping files, for every command that
reads a staging), and proving its files have not changed since build, cheaply.

Build stats each file when it stages it, before any step reads it, and fails if any file's stat moved by
the end of the build (an edit behind the hashing). It records those (size, mtime, ctime, inode); push trusts
the manifest's sha256 for a file whose record still matches (ctime cannot be set back by a user), or whose
digest record entry (release/staged/digest_record.py: a later version's link moved the ctime) gives that sha256, and
re-hashes any other file. The record lives beside the staging folder, not in it: it is local state, not
part of the release.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shlex
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii  # json.dumps's own quoting of a str
from pathlib import Path
from typing import TYPE_CHECKING, Any

from release.errors import CheckFailed, InputError, Problem
from release.staged.digest import hash_files
from release.staged.digest_record import DigestRecord
from release.staged.file_stat import FileStat, Stat
from release.staged.manifest import Manifest, atomic_write, read_manifest
from release.staged.names import MANIFEST_NAME, SIGNATURE_NAME, SUMS_NAME, stat_record_name
from release.util.jsonio import read_json_or_none

if TYPE_CHECKING:  # build's: verify, push and status read a staging without loading the pipeline or the spec
    from release.spec import ReleaseSpec
    from release.staged.staged_file import StagedFile


def stat_record_path(dist: Path) -> Path:
    return dist.parent / stat_record_name(dist.name)


def _key(st: Stat) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _fingerprint(path: Path) -> list[int]:
    return _key(path.stat())


CHANGED_DURING_BUILD = (
    "changed while build was reading it ({what} moved since it was staged); nothing was staged; "
    "build again once nothing writes to it"
)


def moved(before: Stat, now: Stat) -> str:
    """Which of size, mtime, ctime, inode differ ('' when none)."""
    return _differences(_key(before), _key(now))


def _differences(before: list[int], now: list[int]) -> str:
    if before == now:
        return ""  # the usual answer, without naming each field
    return ", ".join(n for n, a, b in zip(("size", "mtime", "ctime", "inode"), before, now, strict=True) if a != b)


def fingerprints(dist: Path, paths: list[str]) -> dict[str, list[int]]:
    """The stat (size, mtime, ctime, inode) of each staged file there is, as push's preflight saw it: what
    `moved_since` compares with right before the bytes are read for sending."""
    seen = {}
    for path in paths:
        try:
            seen[path] = _fingerprint(dist / path)
        except OSError:  # missing: the preflight reports it
            pass
    return seen


def moved_since(path: Path, fingerprint: list[int] | None) -> str:
    """Which of size, mtime, ctime, inode of `path` moved since `fingerprint` was taken ('' when none)."""
    try:
        now = _fingerprint(path)
    except OSError:
        return "the file is gone"
    return "" if fingerprint is None else _differences(fingerprint, now)


RECORD_BLOCK = 4096  # files of the stat record written at once


def record_stat(
    dist: Path, folder: Path, files: list[StagedFile], seen: Callable[[StagedFile, FileStat], None]
) -> None:
    """Record the stat of `folder`'s files as the staging of `dist` (it survives renaming the folder).

    Called after hf-release's own unlinks of the earlier staging, which move the ctime of the inodes the two
    stagings share: a new ctime is accepted only where the link count moved too and size, mtime and inode
    did not; anything else changed since it was staged, and the build fails (and no record is written).
    `seen(file, its stat now)` is called for each file. The record is written as json.dumps(record,
    sort_keys=True) would, a file at a time (50,000 stats are never held at once)."""

    def text() -> Iterator[bytes]:
        problems = []
        lines = ["{"]
        for n, f in enumerate(sorted(files, key=lambda f: f.path_in_repo)):
            now = FileStat.of(os.stat(f"{folder}/{f.path_in_repo}"))
            assert f.stat is not None, f"{f.path_in_repo} was staged without a stat"
            why = moved(f.stat, now)
            if why == "ctime" and now.st_nlink != f.stat.st_nlink:
                why = ""
            if why:
                problems.append(Problem(f.path_in_repo, CHANGED_DURING_BUILD.format(what=why)))
            lines.append(
                f"{', ' if n else ''}{encode_basestring_ascii(f.path_in_repo)}: {_key(now)}"
            )  # as json.dumps writes it
            seen(f, now)
            if len(lines) >= RECORD_BLOCK:
                yield "".join(lines).encode()
                lines = []
        if problems:
            raise CheckFailed(problems)  # atomic_write leaves no record
        lines.append("}")
        yield "".join(lines).encode()

    atomic_write(stat_record_path(dist), text())


def check_destination(spec: ReleaseSpec, dist: Path, matched: list[set[str]]) -> None:
    """Refuse, before any write, a staging folder that build could not replace without destroying a user's files.

    Build replaces `dist` only when hf-release wrote it: its staging record beside it, a valid release.json
    of this version in it, and no file in it that the manifest does not list. And `dist` may not be the spec's
    folder or a source's folder, hold one, or lie inside the spec's folder or a glob source's folder.
    `matched`: for each [[files]] entry, the real folders of what it matched (builder/collect.py Sources).
    """
    problems: list[Problem] = []
    target = Path(os.path.abspath(dist))
    real = dist.resolve()
    label = str(dist)
    for folder, reason in _source_folders(spec, matched):
        for form in {folder, folder.resolve()}:
            clash = _overlap(target, form, reason) or _overlap(real, form, reason)
            if clash:
                problems.append(
                    Problem(label, f"{clash}; pass another --dist (e.g. `--dist dist` in the project root)")
                )
                break
    if not problems and (dist.exists() or dist.is_symlink()):
        why = _not_ours(spec, dist)
        if why:
            problems.append(
                Problem(
                    label,
                    f"exists and {why}; hf-release replaces only a staged release it wrote itself — "
                    "move it away or pass another --dist",
                )
            )
    if problems:
        raise InputError(list(dict.fromkeys(problems)))


def _source_folders(spec: ReleaseSpec, matched: list[set[str]]) -> list[tuple[Path, str]]:
    """The spec's folder and every source's folder, each with what makes it dangerous to stage over or inside.

    A source's are the folder it names (for a glob, the folder before its first wildcard) and each match's real
    folder (a symlink's target's, else its folder's). An entry collect refuses (a problem it reports) may have
    matched more than `matched` holds: its build fails before it writes to --dist."""
    folders = [(spec.root, "spec")]
    for fs, real_folders in zip(spec.files, matched, strict=True):
        pattern = fs.source if os.path.isabs(fs.source) else str(spec.root / fs.source)
        if glob.has_magic(fs.source):
            fixed = re.split(r"[*?[]", pattern, maxsplit=1)[0]  # the folder part before the first wildcard
            named = Path(fixed) if fixed.endswith("/") else Path(fixed).parent
            # A '..' source reaches a sibling version (or is refused by collect): the staging may not be or hold
            # its folder, but lying inside it is that other version's business.
            kind = "file" if not os.path.isabs(fs.source) and ".." in Path(fs.source).parts else "glob"
        else:
            named, kind = Path(pattern).parent, "file"
        folders += [(named, kind), *((Path(folder), kind) for folder in sorted(real_folders))]
    return folders


def _overlap(dist: Path, folder: Path, reason: str) -> str | None:
    what = "the spec's folder" if reason == "spec" else "a source's folder"
    if dist == folder:
        return f"is {what} ({folder})"
    if folder.is_relative_to(dist):
        return f"holds {what} ({folder}): replacing it would delete that"
    if reason != "file" and dist.is_relative_to(folder):  # a glob or the spec's folder could pick the staging up
        return f"lies inside {what} ({folder})"
    return None


def _not_ours(spec: ReleaseSpec, dist: Path) -> str | None:
    """Why `dist` is not a staged release hf-release wrote, or None when it is."""
    if dist.is_symlink() or not dist.is_dir():
        return "is not a folder"
    if not stat_record_path(dist).is_file():
        return f"has no hf-release staging record ({stat_record_path(dist).name})"
    try:
        manifest = Manifest.load(dist / MANIFEST_NAME)
    except InputError:
        return f"holds no valid {MANIFEST_NAME}"
    if manifest.version != dist.name:
        return f"holds the manifest of version {manifest.version!r}, not {dist.name!r}"
    foreign = sorted(staged_paths(dist) - manifest.owned_paths)
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        return f"holds files hf-release did not write ({', '.join(foreign[:3])}{more})"
    return None


def staged_paths(dist: Path) -> set[str]:
    """Every file and symlink under `dist` (folders not listed, symlinked folders not entered), as posix paths
    relative to it: os.scandir's entries, not a Path object per file."""
    found: set[str] = set()

    def walk(folder: str, prefix: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except PermissionError:  # an unreadable folder: its files are reported missing
            if not prefix:
                raise
            return
        for entry in entries:
            name = prefix + entry.name
            if entry.is_symlink() or entry.is_file():
                found.add(name)
            elif entry.is_dir():
                walk(entry.path, name + "/")

    walk(str(dist), "")
    return found


@dataclass(frozen=True)
class StagedRelease:
    """A staged release as read once: release.json validated, and the bytes of the bookkeeping files beside the
    manifest's files (release.json, SHA256SUMS, model.sig; those that could be read). Push, status, sign and
    verify carry it instead of reading those files again (twine's shape: read once, carry the digest)."""

    dist: Path
    manifest: Manifest
    bookkeeping: dict[str, bytes]


class OtherVersionStaged(InputError):
    """DIST/VERSION holds another version's release: a folder renamed by hand would be published under the
    wrong tag. Input to fix, never reported as a damaged release."""


def read_staged(dist: Path, *, version: str | None = None) -> StagedRelease:
    """Read the staged release in `dist` once. InputError when release.json is missing or not a manifest;
    with `version` (the one the user named), OtherVersionStaged as soon as its JSON names another."""
    return staged_from_json(dist, *read_staged_json(dist, version=version))


def read_staged_json(dist: Path, *, version: str | None = None) -> tuple[bytes, Any]:
    """release.json's bytes and decoded JSON, not yet checked against its schema (read_staged's first half:
    verify starts hashing from it). InputError when it is missing or not JSON; OtherVersionStaged as in read_staged."""
    path = dist / MANIFEST_NAME
    body, data = read_manifest(path)
    if version is not None and isinstance(data, dict) and data.get("version") != version:
        raise OtherVersionStaged(
            f"holds the release of {data.get('version')!r}, not {version!r}; "
            f"run `hf-release build {shlex.quote(version)}`",
            file=str(path),
        )
    return body, data


def staged_from_json(dist: Path, body: bytes, data: Any, *, schema_checked: bool = False) -> StagedRelease:
    """read_staged's second half: the manifest validated (InputError when it is not one; `schema_checked` as in
    Manifest.from_json), the bookkeeping read."""
    manifest = Manifest.from_json(data, str(dist / MANIFEST_NAME), schema_checked=schema_checked)
    bookkeeping = {MANIFEST_NAME: body}
    for name in (SUMS_NAME, SIGNATURE_NAME):
        try:
            bookkeeping[name] = (dist / name).read_bytes()
        except OSError:  # missing (or unreadable, which is the same to every check of it)
            pass
    return StagedRelease(dist, manifest, bookkeeping)


def changed_since_build(staged: StagedRelease) -> tuple[list[Problem], int]:
    """Problems for staged files that differ from the manifest, and the bytes re-hashed to decide."""
    dist = staged.dist
    record = read_json_or_none(stat_record_path(dist))
    if not isinstance(record, dict):  # missing or damaged: every file is re-hashed
        record = {}
    problems: list[Problem] = []
    suspects = []
    digests: DigestRecord | None = None  # read only when a file's stat moved (a later version linked its inode)
    for f in staged.manifest.files:
        path = dist / f.path_in_repo
        try:
            st = path.stat()
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            problems.append(Problem(f.path_in_repo, "is missing from the staged release; run `hf-release build` again"))
        elif record.get(f.path_in_repo) != _key(st):
            digests = digests or DigestRecord(dist.parent)
            known = digests.lookup(st)
            if known is None or known.sha256 != f.sha256 or known.size != f.size:
                suspects.append(f)
    rehashed = hash_files([(dist / f.path_in_repo, False) for f in suspects]) if suspects else []
    for f, d in zip(suspects, rehashed, strict=True):
        if d.sha256 != f.sha256 or d.size != f.size:
            problems.append(
                Problem(
                    f.path_in_repo,
                    f"changed since build (sha256 {d.sha256[:12]}…, manifest {f.sha256[:12]}…); "
                    "run `hf-release build` again",
                )
            )
    return problems + bookkeeping_changed(staged), sum(f.size for f in suspects)


def bookkeeping_changed(staged: StagedRelease) -> list[Problem]:
    """release.json and SHA256SUMS are pushed too: SHA256SUMS must still list release.json's sha256 and
    agree with the manifest (catches an edit of either that leaves the release digest intact)."""
    manifest = staged.manifest
    sums = staged.bookkeeping.get(SUMS_NAME)
    if sums is None:
        return [Problem(SUMS_NAME, "is missing from the staged release; run `hf-release build` again")]
    manifest_sha = hashlib.sha256(staged.bookkeeping[MANIFEST_NAME]).hexdigest()
    if sums == manifest.sha256sums(manifest_sha):
        return []
    listed = next(
        (
            line.split()[0]
            for line in sums.decode("utf-8", "replace").splitlines()
            if line.split()[1:] == [MANIFEST_NAME]
        ),
        None,
    )
    if listed is not None and listed != manifest_sha and sums == manifest.sha256sums(listed):
        return [
            Problem(
                MANIFEST_NAME,
                f"changed since build (sha256 {manifest_sha[:12]}…, {SUMS_NAME} lists {listed[:12]}…); "
                "run `hf-release build` again",
            )
        ]
    return [
        Problem(SUMS_NAME, f"changed since build: it does not agree with {MANIFEST_NAME}; run `hf-release build` again")
    ]
