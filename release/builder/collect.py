"""Step: collect the spec's files into the staging folder, laid out exactly as the Hub repo, and begin their
hashing as each is staged (release/builder/hashing.py).

Each file is a copy-on-write clone where the filesystem makes one, else a hard link (an edit of the staging then
edits the user's file: said once a build); large files are never copied, but across filesystems (reported).
"""

from __future__ import annotations

import errno
import glob
import logging
import os
import shutil
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no clones, hard links as before
    fcntl = None  # type: ignore[assignment]

from release.builder.hashing import Hashing
from release.errors import InputError, Problem
from release.hub.limits import path_refusal
from release.pipeline import Context, Done, Sources, StepResult
from release.spec import SPEC_NAME, FileSpec, ReleaseSpec
from release.spec.paths import check_path_in_repo, folded, folders_of
from release.spec.project import ARTIFACTS
from release.spec.sources import MAX_FOLDER_ENTRIES, placed_at, resolve_source
from release.staged import moved
from release.staged.file_stat import file_stat
from release.staged.names import GENERATED, chart_paths
from release.staged.staged_file import StagedFile
from release.util.wording import counted

logger = logging.getLogger(__name__)


class Collect:
    name = "collect"

    def run(self, ctx: Context) -> StepResult:
        problems: list[Problem] = []
        staged: dict[str, StagedFile] = {}
        taken_as: dict[str, str] = {}  # folded path_in_repo → the path as given
        generated = generated_names(chart_paths(ctx.spec.card))
        root = ctx.spec.root
        resolved = ctx.sources
        assert resolved is not None, "build resolves the sources before Collect runs"
        targets = resolved.targets
        for index, (fs, (sources, why)) in enumerate(zip(ctx.spec.files, resolved.named, strict=True)):
            where = f"{ctx.spec.path.name} files[{index}] ({fs.source})"
            if why:
                problems.append(Problem(where, why + _spec_line(ctx.spec, fs.source)))
                continue
            for source in sources:
                dest, why = path_in_repo(fs, source, generated)
                if why:
                    problems.append(Problem(where, f"path_in_repo {dest!r} {why}"))
                    continue
                key = folded(dest)
                taken = taken_as.get(key)
                if taken is not None:
                    same = (
                        "is also given to"
                        if taken == dest
                        else (
                            f"differs only in letter case or Unicode normalization from {taken!r} (one file on macOS "
                            "and Windows), given to"
                        )
                    )
                    problems.append(
                        Problem(
                            where, f"path_in_repo {dest!r} {same} {staged[taken].source}; each file needs its own name"
                        )
                    )
                    continue
                taken_as[key] = dest
                staged[dest] = StagedFile(fs, source, dest, fs.role, ctx.stage)
        files_in: dict[
            str, list[tuple[str, str]]
        ] = {}  # a folder → (folder, file placed there) for each of its folders
        for dest, f in staged.items():  # a file cannot also be the folder of another, in any letter case
            folder = dest.rpartition("/")[0]
            clashes = files_in.get(folder)
            if clashes is None:  # once per folder, not per file: its folders' clashes are its files' clashes
                clashes = files_in[folder] = [
                    (d, other) for d in folders_of(dest) if (other := taken_as.get(folded(d))) is not None
                ]
            for d, other in clashes:
                assert f.spec is not None, "every file staged here comes from a spec entry"
                where = f"{ctx.spec.path.name} files[{ctx.spec.files.index(f.spec)}] ({f.spec.source})"
                problems.append(
                    Problem(
                        where,
                        f"path_in_repo {dest!r} needs {d!r} to be a folder, but {staged[other].source} is placed there",
                    )
                )
        if problems:
            raise InputError(list(dict.fromkeys(problems)))  # a glob entry's problem once, not once per match

        made: set[str] = set()
        # a stat of each source before its link, for the digest record to follow the inode: only when it holds any
        relink = ctx.digests is not None and ctx.digests.holds_any
        hashing = ctx.hashing = Hashing(ctx, len(staged))
        stager = Stager()
        for f in staged.values():  # str paths and os calls: a Path per file costs ~0.6 KB and microseconds
            dest = f.staged_name
            folder = dest.rpartition("/")[0]
            if folder not in made:  # one mkdir per folder, not per file
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            target = targets.get(f.source, f.source)
            # a clone or a copy is another inode: the source's own stat is kept for the digest record
            before = os.stat(target) if relink or stager.may_clone else None
            how = stager.stage(target, dest)
            f.copied, f.cloned = how == COPIED, how == CLONED
            f.stat = file_stat(dest)  # before any check parses it: an edit from here on fails the build
            if how != LINKED and before is not None:
                after = file_stat(target)
                f.source_stat = after if not moved(before, after) else None  # read while it changed: no record
                if f.cloned and f.source_stat is not None and ctx.digests is not None:
                    ctx.digests.cloned(f.source_stat, f.stat)  # the clone holds the source's bytes: its digests
            elif before is not None and ctx.digests is not None:
                ctx.digests.relinked(before, f.stat)  # our link moved ctime: the inode's digests follow it
            hashing.add(f)
        hashing.start()
        ctx.files = sorted(staged.values(), key=lambda f: f.path_in_repo)
        copies = sum(f.copied for f in ctx.files)
        links = sum(not (f.copied or f.cloned) for f in ctx.files)
        if links:  # said once a build: an edit of the staging in place is an edit of the user's own file
            logger.warning(
                "note: %s: staged as hard links to the sources (this filesystem cannot make copy-on-write "
                "clones); editing a file under the staging folder edits your own file — rebuild instead",
                counted(links, "file"),
            )
        unnamed = unnamed_files(ctx.spec, (f.source for f in ctx.files))
        for name in unnamed:
            logger.warning(
                "warning: %s: is in %s/ but no [[files]] source of %s names it: it is not part of the "
                "release; add a [[files]] entry if it belongs (or move it out)",
                name,
                root.name,
                ctx.spec.path.name,
            )
        return Done(
            f"{counted(len(ctx.files), 'file')} staged from the spec"
            + (f", {copies} copied across filesystems" if copies else "")
            + (f", {counted(len(unnamed), 'file')} in {root.name}/ not named (warned)" if unnamed else "")
        )


def unnamed_files(spec: ReleaseSpec, sources: Iterable[str | Path]) -> list[str]:
    """Files in the spec's version folder (artifacts/VERSION/) that neither a [[files]] source nor a [card] value
    (a template, a key) names: a file copied there after `init --from` would otherwise be left out silently.
    Hidden entries are skipped; at most MAX_FOLDER_ENTRIES are looked at."""
    root = spec.root
    if spec.path.name != SPEC_NAME or root.parent.name != ARTIFACTS:
        return []
    named = {Path(p).resolve() for p in sources} | {spec.path.resolve()}
    named |= {(root / value).resolve() for value in _strings(spec.card) if 0 < len(value) < 4096 and "\n" not in value}
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if seen > MAX_FOLDER_ENTRIES:
                return found
            path = Path(folder, name)
            if not name.startswith(".") and path.resolve() not in named:
                found.append(path.relative_to(root).as_posix())
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _spec_line(spec: ReleaseSpec, source: str) -> str:
    """` (release.toml line N)`: where the spec names `source`, when one line of it does."""
    try:
        lines = spec.path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    hits = [n for n, line in enumerate(lines, 1) if line.lstrip().startswith("source") and source in line]
    return f" ({spec.path.name} line {hits[0]})" if len(hits) == 1 else ""


def resolve_sources(spec: ReleaseSpec) -> Sources:
    """Resolve every source of the spec (an entry's resolution stops at its first problem)."""
    targets: dict[str, str] = {}
    folders: list[set[str]] = [set() for _ in spec.files]
    named = [resolve_source(spec.root, fs.source, spec.reach, targets, folders[i]) for i, fs in enumerate(spec.files)]
    return Sources(named, targets, folders)


def generated_names(charts: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str]]:
    """The files hf-release (or the Hub) writes, and the folders they lie in: each folded → as written."""
    files = {folded(name): name for name in (*GENERATED, *charts)}
    folders: dict[str, str] = {}
    for chart in charts:  # a folder named after the first chart that lies in it
        for folder in folders_of(chart):
            folders.setdefault(folded(folder), chart)
    return files, folders


def _clash_with_generated(dest: str, generated: tuple[dict[str, str], dict[str, str]]) -> str | None:
    """Why `dest` would be, or be the folder of, or lie in a folder named like, a file hf-release or the Hub
    writes, names compared as macOS and Windows compare them; None when it would not."""
    files, folders = generated
    key = folded(dest)
    if key in files:
        return "is written by hf-release itself; choose another name"
    if key in folders:
        return f"is the name of the folder of {folders[key]}, which hf-release writes; choose another name"
    for folder in folders_of(dest):
        if folded(folder) in files:
            return (
                f"lies in a folder {folder!r}, named like {files[folded(folder)]}, which hf-release writes "
                "(one name on macOS and Windows); choose another name"
            )
    return None


def path_in_repo(
    fs: FileSpec, source: str | Path, generated: tuple[dict[str, str], dict[str, str]]
) -> tuple[str, str | None]:
    """Where a source file lands: as given, under a glob's folder, or by default as named in the spec."""
    if glob.has_magic(fs.source) and fs.path_in_repo is not None and not fs.path_in_repo.endswith("/"):
        return fs.path_in_repo, "must be a folder ending in '/' for a glob source"
    dest = placed_at(fs, source)
    why = check_path_in_repo(dest) or path_refusal(dest) or _clash_with_generated(dest, generated)
    return dest, why


CLONED, LINKED, COPIED = "cloned", "linked", "copied"
FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int), a reflink of a whole file (btrfs, XFS, bcachefs, ZFS 2.2)
# what a filesystem (or a kernel, or a platform) without clones answers: it will not clone any other file either
NO_CLONES = frozenset({errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL, errno.ENOSYS, errno.EPERM})


class Stager:
    """Stages each file as a copy-on-write clone where the filesystem makes one (an edit of the staging then
    never reaches the user's file, at no cost in space), else as a hard link (never a copy of gigabytes), else,
    across filesystems, as a copy. Once the staging's filesystem refuses a clone, no other is tried."""

    def __init__(self) -> None:
        self.may_clone = sys.platform.startswith("linux") and fcntl is not None

    def stage(self, source: str, dest: str) -> str:
        """Stage `source` (resolved: the file itself, never a symlink to it) at `dest`: CLONED, LINKED or COPIED."""
        if self.may_clone and self._clone(source, dest):
            return CLONED
        try:
            os.link(source, dest)
            return LINKED
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                raise
        shutil.copy2(source, dest)
        return COPIED

    def _clone(self, source: str, dest: str) -> bool:
        assert fcntl is not None
        src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
        try:
            st = os.fstat(src)
            out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, stat.S_IMODE(st.st_mode))
            try:
                fcntl.ioctl(out, FICLONE, src)
                # the source's mtime: the digest record's racy-timestamp rule then holds for the clone as for it
                os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError as exc:
                os.close(out)
                os.unlink(dest)
                if exc.errno in NO_CLONES:
                    self.may_clone = False
                elif exc.errno != errno.EXDEV:  # another filesystem than the staging's: a link fails too
                    raise
                return False
            os.close(out)
            return True
        finally:
            os.close(src)
