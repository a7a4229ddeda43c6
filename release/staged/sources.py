"""The spec's sources against what build staged from them (issue 38, item 10): `status` and `push` ask.

Build stages each source as a hard link (or a reflink clone, or a copy across filesystems: builder/collect.py).
A source that is still the staged file's inode is the staged file: an in-place edit of either is the staged
check's business (changed_since_build). A source that is another inode now (`save_pretrained` writes a new
file and renames it over the old one) is compared cheaply first: the digest record (digest_record.py), which
build fills for the inodes it read, vouches for it when its size, times and inode are unchanged since; a size
other than release.json's is a change; only a same-size file the record cannot vouch for is hashed, and
`status` hashes at most STATUS_HASH_BYTES of them (a model saved again, byte for byte, is read by every status
until the next build otherwise): past that, it says it did not tell; push always hashes.

The spec itself is a source: edited since build (its sha256 is not release.json's), the staging is not what it
now says. With the spec unchanged, a file a glob source matches now but build did not stage (`save_pretrained`
sharding the weights anew) is a change too.

Sources that are not here (the release workflow pushes a staging handed over, without the spec's files) are
reported, never refused: the staged files are what is published.
"""

from __future__ import annotations

import glob
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from release.errors import InputError, Problem
from release.staged import StagedRelease
from release.staged.digest import hash_files
from release.staged.digest_record import DigestRecord
from release.util.wording import human_size

SOURCE_CHANGED = "source changed since build ({why}; staged as {dest}); run `hf-release build {version}` again"
STATUS_HASH_BYTES = 1 << 30  # status's bound on the sources it hashes (read when called: tests lower it)
NEW_SOURCE = (
    "source changed since build (new: {where} names it, build did not stage it); run `hf-release build {version}` again"
)
SPEC_EDITED = (
    "source changed since build (the spec was edited: the staging is from the spec as it was); "
    "run `hf-release build {version}` again"
)


@dataclass
class SourceCheck:
    """What comparing the spec's sources with the staging found."""

    changed: list[Problem] = field(default_factory=list)  # one per source replaced or edited since build
    absent: list[str] = field(default_factory=list)  # sources (or the spec) not found here: not compared
    unhashed: list[str] = field(default_factory=list)  # replaced by a file of the same size, not hashed (bound)
    compared: int = 0  # sources compared
    rehashed: int = 0  # bytes hashed to decide

    @property
    def state(self) -> str:
        """changed | not told (past the hashing bound) | not here | unchanged (some not here: "partly here")."""
        if self.changed:
            return "changed"
        if self.unhashed:
            return "not told"
        if self.absent:
            return "partly here" if self.compared else "not here"
        return "unchanged"

    def notes(self) -> list[str]:
        """A line saying what was not compared, and one saying what was not hashed: none when every source was."""
        notes = []
        if self.absent:
            notes.append(
                f"{_some(self.absent)}: not here, so not compared with what was staged "
                "(the staged files are what is published)"
            )
        if self.unhashed:
            notes.append(
                f"{_some(self.unhashed)}: replaced since build by a file of the same size, not hashed (status "
                f"reads at most {human_size(STATUS_HASH_BYTES)} of sources): `hf-release push` hashes it before "
                "sending; `hf-release build` again to stage it"
            )
        return notes


def _some(names: list[str]) -> str:
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{', '.join(names[:3])}{more}"


def compare_sources(spec_path: Path, staged: StagedRelease, bounded: bool = False) -> SourceCheck:
    """Each source the spec at `spec_path` names, against the staged file release.json lists for it. `bounded`
    (status): hash at most STATUS_HASH_BYTES of sources, leaving the others untold."""
    from release.spec import load_spec
    from release.spec.sources import placed_at, resolve_source

    check = SourceCheck()
    if not spec_path.is_file():
        check.absent.append(str(spec_path))
        return check
    try:
        spec = load_spec(spec_path)
    except InputError:  # status reports the spec itself; push publishes the staging, which was built from one
        check.absent.append(f"{spec_path} (not a valid spec)")
        return check
    version = shlex.quote(staged.manifest.version)
    # edited since build: its entries may name other files than were staged, so only those still listed are
    # compared, and no file is "new since build"
    spec_edited = spec.sha256 != staged.manifest.spec_sha256
    if spec_edited:
        check.changed.append(Problem(str(spec_path), SPEC_EDITED.format(version=version)))
    listed = {f.path_in_repo: f for f in staged.manifest.files if not f.generated}
    named: set[str] = set()  # the staged files some source of the spec names now
    targets: dict[str, str] = {}  # a symlinked source → the file build linked
    record: DigestRecord | None = None  # read only when a source is another inode than its staged file
    suspects: list[tuple[str, str, str, int]] = []  # (source, its real file, path_in_repo, size) to hash
    for index, fs in enumerate(spec.files):
        sources, why = resolve_source(spec.root, fs.source, spec.reach, targets)
        if why:  # a source that is not here (or a spec entry build would refuse): nothing to compare
            if not glob.has_magic(fs.source):
                named.add(placed_at(fs, fs.source))
                check.absent.append(fs.source)
            continue  # a glob's staged files not matched now are named below, one by one
        for source in sources:
            dest = placed_at(fs, source)
            named.add(dest)
            entry = listed.get(dest)
            if entry is None:
                if not spec_edited:  # a file the spec names now that build did not stage
                    where = f"{spec_path.name} files[{index}] ({fs.source})"
                    check.changed.append(Problem(source, NEW_SOURCE.format(where=where, version=version)))
                continue
            target = targets.get(source, source)
            try:
                st = os.stat(target)
            except OSError:
                check.absent.append(source)
                continue
            check.compared += 1
            try:
                staged_st = os.stat(staged.dist / dest)
            except OSError:  # missing from the staging: the staged check names it
                continue
            if (st.st_dev, st.st_ino) == (staged_st.st_dev, staged_st.st_ino):
                continue  # the very file staged: an edit of it is an edit of the staged file
            if st.st_size != entry.size:
                check.changed.append(_changed(source, dest, staged, f"{st.st_size:,} bytes, staged {entry.size:,}"))
                continue
            record = record or DigestRecord(staged.dist.parent)
            known = record.lookup(st)
            if known is not None and known.sha256 == entry.sha256 and known.size == entry.size:
                continue
            suspects.append((source, target, dest, entry.size))
    if not spec_edited:  # staged from a glob that no longer matches them: not here, as a missing source
        check.absent += [f"{dest} (staged; no source names it now)" for dest in listed if dest not in named]
    if bounded:  # the smallest first: the most files told within the bound
        suspects.sort(key=lambda suspect: suspect[3])
        within = 0
        for n, (*_, size) in enumerate(suspects):
            within += size
            if within > STATUS_HASH_BYTES:
                check.unhashed = [s for s, *_ in suspects[n:]]
                del suspects[n:]
                break
    if suspects:
        digests = hash_files([(target, False) for _, target, _, _ in suspects])
        check.rehashed = sum(size for *_, size in suspects)
        for (source, _, dest, _), d in zip(suspects, digests, strict=True):
            entry = listed[dest]
            if d.sha256 != entry.sha256:
                why = f"sha256 {d.sha256[:12]}…, staged {entry.sha256[:12]}…"
                check.changed.append(_changed(source, dest, staged, why))
    return check


def _changed(source: str, dest: str, staged: StagedRelease, why: str) -> Problem:
    return Problem(source, SOURCE_CHANGED.format(why=why, dest=dest, version=shlex.quote(staged.manifest.version)))
