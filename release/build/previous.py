"""The version a build compares with, found before anything is staged: a bad `--since` stages nothing.

By default the greatest staged version before this one; `--since vN` another staged one; `--since hub:vN`
the Hub's release.json and small files at that tag (the only build that uses the network).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import limits
from ..compare import SMALL_FILE, FileEntry, Snapshot
from ..errors import InputError
from ..manifest import Manifest
from ..names import MANIFEST_NAME
from ..versions import previous_version, version_key, version_problem, versions_under


def find_previous(version: str, dist_root: Path, since: str | None, hub: Callable[[], Any] | None, repo_id: str) -> tuple[str, Snapshot] | None:
    """What to compare with: `--since vN` (staged), `--since hub:vN`, else the greatest staged version before this one."""
    if since is None:
        found = previous_version(version, versions_under(dist_root, MANIFEST_NAME))
        return (found, staged_snapshot(dist_root / found)) if found else None
    on_hub = since.startswith("hub:")
    wanted = since.removeprefix("hub:")
    why = version_problem(wanted)
    if not why and version_key(wanted) >= version_key(version):
        why = "is this release itself" if wanted == version else f"comes after {version}"
    if why:
        raise InputError(f"{wanted!r} {why}; name an earlier version, e.g. v5 or hub:v5", file="--since")
    if on_hub and hub is None:
        raise InputError("comparing with the Hub needs a connection; run it through `hf-release build --since hub:VERSION`", file="--since")
    if on_hub:
        return since, hub_snapshot(hub(), repo_id, wanted)
    if not (dist_root / wanted / MANIFEST_NAME).is_file():
        raise InputError(f"{wanted} is not staged in {dist_root}; build it first, or compare with the Hub's: --since hub:{wanted}",
                         file="--since")
    return wanted, staged_snapshot(dist_root / wanted)


def staged_snapshot(folder: Path) -> Snapshot:
    """A staged release (DIST/VERSION) as the comparison reads it."""
    manifest = Manifest.load(folder / MANIFEST_NAME)

    def read(path: str) -> bytes | None:
        return read_small(folder / path)

    return Snapshot(manifest.version, _entries(manifest), read, _metrics(manifest.metrics))


def hub_snapshot(hub: Any, repo_id: str, version: str) -> Snapshot:
    """A published release read from the Hub at its tag: release.json, then small files on demand."""
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    from ..publish.client import remote_errors

    where = f"--since hub:{version}"
    cache = Path(tempfile.mkdtemp(prefix="hf-release-since-"))
    atexit.register(shutil.rmtree, cache, True)  # read lazily during the build: removed when the command ends

    def download(path: str) -> Path:
        with remote_errors(repo_id, f"reading {path} at {version}"):
            try:
                return Path(hub.api.hf_hub_download(repo_id, path, revision=version, cache_dir=cache))
            except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
                raise InputError(f"{repo_id} has no {path} at {version}; pick a version published by hf-release",
                                 file=where) from None

    with remote_errors(repo_id, f"listing {MANIFEST_NAME} at {version}"):
        try:
            listed = hub.api.get_paths_info(repo_id, [MANIFEST_NAME], revision=version)
        except (RepositoryNotFoundError, RevisionNotFoundError):
            listed = []  # the download below says what is missing
    size = next((getattr(entry, "size", None) for entry in listed if entry.path == MANIFEST_NAME), None)
    if type(size) is int and size > limits.MAX_MANIFEST_BYTES:  # bounded before downloading, as push bounds it
        raise InputError(f"{repo_id}@{version}: {MANIFEST_NAME} is {size:,} bytes, more than the {limits.MAX_MANIFEST_BYTES:,} "
                         "hf-release reads: not one it wrote; pick another version", file=where)
    try:  # the Hub's copy is input like any other: bounded again as it is read, schema and digest checked
        manifest = Manifest.load(download(MANIFEST_NAME), max_bytes=limits.MAX_MANIFEST_BYTES)
    except InputError as exc:
        raise InputError(f"{repo_id}@{version}: {exc.problems[0].message.split(';')[0]}; pick another version",
                         file=where) from None
    entries = _entries(manifest)

    def read(path: str) -> bytes | None:
        entry = entries.get(path)
        return None if entry is None or entry.size > SMALL_FILE else read_small(download(path))

    return Snapshot(version, entries, read, _metrics(manifest.metrics))


def read_small(path: Path) -> bytes | None:
    """A file's bytes when it is at most SMALL_FILE long (its contents are compared), else None."""
    try:
        if path.stat().st_size > SMALL_FILE:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _entries(manifest: Manifest) -> dict[str, FileEntry]:
    """The artifacts of a manifest (the generated card and chart always change: not compared)."""
    return {f.path_in_repo: FileEntry(f.role, f.size, f.sha256) for f in manifest.artifacts}


def _metrics(metrics: Any) -> dict[str, float] | None:
    """release.json's recorded metrics, when they are a mapping of numbers (else: not comparable)."""
    if not isinstance(metrics, dict) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in metrics.values()):
        return None
    return {str(k): float(v) for k, v in metrics.items()}
