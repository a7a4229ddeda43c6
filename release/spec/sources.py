"""The files a spec's [[files]] source names, and where each lands in the repo: build stages them
(release/builder/collect.py), status and push compare them with the staging (release/staged/sources.py)."""

from __future__ import annotations

import difflib
import errno
import glob
import os
import stat
from pathlib import Path, PurePosixPath

from release.spec import FileSpec

MAX_FOLDER_ENTRIES = 10_000  # entries of a folder looked at (for files the spec does not name, for near names)


def placed_at(fs: FileSpec, source: str | Path) -> str:
    """Where a source file lands (unchecked): as given, under a glob's folder, or by default as named in the spec."""
    name = os.path.basename(source)
    magic = glob.has_magic(fs.source)
    if fs.path_in_repo is None:
        named_relative = not magic and not os.path.isabs(fs.source) and ".." not in PurePosixPath(fs.source).parts
        return PurePosixPath(fs.source).as_posix() if named_relative else name
    return fs.path_in_repo + name if magic else fs.path_in_repo


def resolve_source(
    root: Path, source: str, reach: Path, targets: dict[str, str] | None = None, folders: set[str] | None = None
) -> tuple[list[str], str | None]:
    """The files a source names (as Path would spell them), or why it names none that may be used (a relative
    one stays inside `reach`). Strs, not Paths: a glob may match 50,000 files. `targets` learns, for each file
    whose real path (a symlink's target, in real folders) is not its name, that path: the file to link, the one
    checked here. `folders` learns the real folder of each match (a folder matched by a glob included)."""
    absolute = os.path.isabs(source)
    if not absolute and ".." in PurePosixPath(source).parts and reach == root:
        return [], "escapes the spec's folder ('..'); use an absolute path for files elsewhere on this node"
    pattern = source if absolute else str(root / source)
    is_glob = glob.has_magic(source)
    matches = sorted(map(_normalized, glob.glob(pattern)), key=path_order) if is_glob else [str(Path(pattern))]
    if is_glob and not matches:
        return [], "matches no file"
    found: list[str] = []
    reach_real = os.path.realpath(reach)
    inside = reach_real.rstrip("/") + "/"
    reals: dict[str, str] = {}
    for name in matches:
        try:
            mode = os.lstat(name).st_mode  # one system call for a regular file: exists, folder, regular
            link = stat.S_ISLNK(mode)
            if link:
                mode = os.stat(name).st_mode
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF):  # what Path.exists ignores
                raise
            path = Path(name)
            return [], _missing(path) if path.is_symlink() else _no_such_file(path)
        if stat.S_ISDIR(mode):
            if is_glob:
                if folders is not None:
                    folders.add(os.path.dirname(_real(name, link, reals)))
                continue
            return [], "is a folder; name its files (a glob such as 'dir/*.json' works)"
        if not stat.S_ISREG(mode):  # a FIFO would hang the build, /dev/zero fill the disk
            return [], f"is not a regular file ({_file_type(Path(name))}); name a regular file"
        real = _real(name, link, reals)
        if targets is not None and real != name:
            targets[name] = real
        if folders is not None:
            folders.add(os.path.dirname(real))
        if not absolute and real != reach_real and not real.startswith(inside):
            if ".." in PurePosixPath(source).parts:
                return [], (
                    "escapes the spec's folder ('..') beyond its sibling versions in artifacts/; "
                    "use an absolute path for files elsewhere on this node"
                )
            siblings = "" if reach == root else " (and its sibling versions)"
            return (
                [],
                f"resolves to {real}, outside the spec's folder{siblings}; use an absolute source if that is intended",
            )
        found.append(name)  # named as given: a symlink lands under its own name, linked to its target
    if is_glob and not found:
        return [], "matches only folders, no file"
    return found, None


def _no_such_file(path: Path) -> str:
    """`no such file: PATH`, with the nearest name in its folder when one is close (difflib, as git suggests)."""
    try:
        names = [entry.name for _, entry in zip(range(MAX_FOLDER_ENTRIES), os.scandir(path.parent), strict=False)]
    except OSError:
        return f"no such file: {path} (no folder {path.parent})"
    near = difflib.get_close_matches(path.name, names, n=1, cutoff=0.75)
    return f"no such file: {path}" + (f"; did you mean {near[0]!r}?" if near else "")


def path_order(path: str) -> str:
    """A sort key that orders normalized paths as Paths sort them (part by part), without the comparison keys
    Path caches on every instance or a list of parts per path: NUL, in no path, sorts below every other
    character, as the end of a part does. A fifth of the cost of `path.split("/")` at 5,000 files."""
    return path.replace("/", "\0")


def _normalized(path: str) -> str:
    """`path` as Path spells it (no '.' part, no doubled or trailing '/'), made a Path only when it is not already."""
    if "//" in path or "/./" in path or path.startswith("./") or path.endswith(("/", "/.")):
        return str(Path(path))
    return path


def _real(path: str, link: bool, folders: dict[str, str]) -> str:
    """os.path.realpath(path), with each folder resolved once (realpath costs a lstat per component, per file);
    `link`: path itself is a symlink."""
    folder, name = os.path.split(path)
    if link or name in ("", ".", ".."):
        return os.path.realpath(path)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder or ".")
    return os.path.join(real, name)


def _missing(path: Path) -> str:
    """Why a symlink that leads to no file names none: it dangles, or it loops."""
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"is a symlink loop (following its links leads back to them): {path}; point it at the file itself"
    return f"is a dangling symlink: {path}"


def _file_type(path: Path) -> str:
    mode = path.stat().st_mode
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"
