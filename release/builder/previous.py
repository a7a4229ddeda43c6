"""The version a build compares with, found before anything is staged: a bad `--since` stages nothing.

By default the previous version of the same repo: the greatest staged one before this one, else (a fresh
checkout, a CI runner) the greatest one published on the Hub — asked only when artifacts/ holds an earlier
spec of this repo, so a first release never touches the network; `--since vN` another staged one;
`--since hub:vN` the Hub's release.json and small files at that tag; `--since spec:vN` that spec's files (the
label the card's "Compared with" line gives them), which needs no network.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from release.builder.previous_spec import SpecPrevious
from release.errors import InputError, RemoteError
from release.history.compare import SMALL_FILE, Entry, Snapshot, Unread
from release.hub import limits
from release.spec import SPEC_NAME, ReleaseSpec, load_spec
from release.spec.versions import previous_version, version_key, version_problem, versions_under
from release.staged.manifest import Manifest
from release.staged.names import MANIFEST_NAME

MAX_TAGS_TRIED = 5  # earlier tags read for a release.json before concluding none was published by hf-release


def find_previous(
    version: str,
    dist_root: Path,
    since: str | None,
    hub: Callable[[], Any] | None,
    repo_id: str,
    reach: Path | None = None,
) -> tuple[str, Snapshot | SpecPrevious | Unread] | None:
    """What to compare with: `--since vN` (staged), `--since hub:vN`, `--since spec:vN` (a spec in `reach` and its
    files), else the previous version of this repo:
    the greatest staged one before this one, else — when `reach` (artifacts/) holds an earlier spec of this
    repo, i.e. this is not its first version — the greatest one published on the Hub (read through `hub()`),
    else that spec when every file it names is present (hashed later, see previous_spec.py), else Unread: it
    exists, but nothing here says what it held."""
    if since is None:
        staged = _previous_staged(version, dist_root, repo_id)
        earlier = _earlier_spec(version, reach, repo_id) if staged is None and reach is not None else None
        if earlier is None:
            return staged
        from_spec = SpecPrevious.of(earlier)
        try:
            published = _previous_published(hub(), repo_id, version) if hub is not None else None
        except RemoteError as exc:  # never read as "not published": say how to build without the Hub
            problem = exc.problems[0]
            raise RemoteError(
                f"{problem.message}; {_offline_advice(earlier.version, from_spec)}", file=problem.file
            ) from None
        if published is not None:
            return published
        if isinstance(from_spec, str):  # it exists, but nothing here says what it held: provenance cannot be told
            return f"spec:{earlier.version}", Unread(earlier.version, f"its spec names files not here ({from_spec})")
        return f"spec:{earlier.version}", from_spec
    on_spec = since.startswith("spec:")
    on_hub = since.startswith("hub:")
    wanted = since.removeprefix("hub:").removeprefix("spec:")
    why = version_problem(wanted)
    if not why and version_key(wanted) >= version_key(version):
        why = "is this release itself" if wanted == version else f"comes after {version}"
    if why:
        before = previous_version(version, versions_under(dist_root, MANIFEST_NAME))
        example = (
            f"e.g. {before}, hub:{before} or spec:{before}"
            if before
            else f"one staged in {dist_root}, hub:VERSION for the Hub's, or spec:VERSION for a spec's files"
        )
        raise InputError(f"{wanted!r} {why}; name a version before {version}, {example}", file="--since")
    if on_hub:
        if hub is None:
            raise InputError(
                "comparing with the Hub needs a connection; run it through `hf-release build --since hub:VERSION`",
                file="--since",
            )
        client = hub()
        if wanted not in (_published_tags(client, repo_id) or ()):
            raise InputError(
                f"{repo_id} has no tag {wanted} on the Hub; pick a version published by hf-release",
                file=f"--since {since}",
            )
        return since, hub_snapshot(client, repo_id, wanted)
    if on_spec:
        return since, _spec_previous(wanted, reach, repo_id)
    if not (dist_root / wanted / MANIFEST_NAME).is_file():
        raise InputError(
            f"{wanted} is not staged in {dist_root}; build it first, or compare with the Hub's: --since hub:{wanted}",
            file="--since",
        )
    return wanted, staged_snapshot(dist_root / wanted)


def _offline_advice(version: str, from_spec: SpecPrevious | str) -> str:
    """The options that build without the Hub: its spec's files when they are all here, else staging it."""
    if isinstance(from_spec, SpecPrevious):
        return (
            f"to build offline, compare with {version}'s spec and its files (--since spec:{version}) or stage "
            f"{version} first (`hf-release build {version}`)"
        )
    return (
        f"{version}'s spec names files not here ({from_spec}), so only the Hub can say what {version} held: "
        f"build where the Hub is reachable, or copy {version}'s staged release into the dist folder"
    )


def _spec_previous(version: str, reach: Path | None, repo_id: str) -> SpecPrevious:
    """`--since spec:vN`: that version's spec in artifacts/ and its files, all present."""
    where = f"--since spec:{version}"
    spec_path = reach / version / SPEC_NAME if reach is not None else None
    if spec_path is None or not spec_path.is_file():
        raise InputError(
            f"no spec {version}/{SPEC_NAME} in {reach or 'the artifacts folder'}; name one there", file=where
        )
    spec = load_spec(spec_path)
    if spec.repo_id.casefold() != repo_id.casefold():
        raise InputError(
            f"{spec_path} is a spec of {spec.repo_id}, not of {repo_id}; name a version of this repo", file=where
        )
    found = SpecPrevious.of(spec)
    if isinstance(found, str):
        raise InputError(
            f"{spec_path} names files not here ({found}); compare with the Hub's instead: --since hub:{version}",
            file=where,
        )
    return found


def _previous_staged(version: str, dist_root: Path, repo_id: str) -> tuple[str, Snapshot] | None:
    """The greatest staged version before this one of the same repo (a project may stage a model and its
    adapter side by side: the adapter's v2 compares with its v1, never with the model's); each manifest read once."""
    for found in reversed(
        [v for v in versions_under(dist_root, MANIFEST_NAME) if version_key(v) < version_key(version)]
    ):
        try:
            manifest = Manifest.load(dist_root / found / MANIFEST_NAME)
        except InputError:
            continue  # not a release of ours: nothing to compare with there
        if manifest.repo_id.casefold() == repo_id.casefold():
            return found, _manifest_snapshot(dist_root / found, manifest)
    return None


def _earlier_spec(version: str, reach: Path, repo_id: str) -> ReleaseSpec | None:
    """The greatest valid spec in artifacts/ of this repo for an earlier version, or None."""
    for found in reversed([v for v in versions_under(reach, SPEC_NAME) if version_key(v) < version_key(version)]):
        try:
            spec = load_spec(reach / found / SPEC_NAME)
        except InputError:
            continue  # not a spec that could have been released
        if spec.repo_id.casefold() == repo_id.casefold():
            return spec
    return None


def _previous_published(hub: Any, repo_id: str, version: str) -> tuple[str, Snapshot] | None:
    """The greatest version published on the Hub before this one (a version tag with a release.json), or None."""
    tags = [
        t
        for t in _published_tags(hub, repo_id) or ()
        if not version_problem(t) and version_key(t) < version_key(version)
    ]
    for tag in sorted(tags, key=version_key, reverse=True)[:MAX_TAGS_TRIED]:
        try:
            return f"hub:{tag}", hub_snapshot(hub, repo_id, tag)
        except InputError:
            continue  # a tag hf-release did not publish
    return None


def _published_tags(hub: Any, repo_id: str) -> list[str] | None:
    """The repo's tags on the Hub, None when the repo is not there (or not visible with this token). One request,
    retried only when transient: an unreachable Hub is a remote failure (exit 3) in seconds, never read as
    "not published"."""
    from huggingface_hub.errors import RepositoryNotFoundError

    from release.hub.client import remote_errors, with_retries

    with remote_errors(repo_id, "reading the versions published on the Hub"):
        try:
            refs = with_retries(lambda: hub.api.list_repo_refs(repo_id), "listing the tags")
        except RepositoryNotFoundError:
            return None
    return [t.name for t in refs.tags]


def staged_snapshot(folder: Path) -> Snapshot:
    """A staged release (DIST/VERSION) as the comparison reads it."""
    return _manifest_snapshot(folder, Manifest.load(folder / MANIFEST_NAME))


def _manifest_snapshot(folder: Path, manifest: Manifest) -> Snapshot:
    def read(path: str) -> bytes | None:
        return read_small(folder / path)

    return Snapshot(manifest.version, _entries(manifest), read, _metrics(manifest.metrics), manifest.evidence)


def hub_snapshot(hub: Any, repo_id: str, version: str) -> Snapshot:
    """A published release read from the Hub at its tag: release.json, then small files on demand."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    from release.hub.client import ManifestTooLarge, remote_errors

    where = f"--since hub:{version}"
    cache = Path(tempfile.mkdtemp(prefix="hf-release-since-"))
    atexit.register(shutil.rmtree, cache, True)  # read lazily during the build: removed when the command ends

    def download(path: str) -> Path:
        what = f"reading {path} at {version}"
        with remote_errors(repo_id, what):
            try:
                if path == MANIFEST_NAME:
                    return hub.download_manifest(repo_id, version, cache, what)
                return Path(hub.api.hf_hub_download(repo_id, path, revision=version, cache_dir=cache))
            except LocalEntryNotFoundError:
                raise  # the Hub could not be reached (nothing cached to fall back on): a remote failure
            except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
                raise InputError(
                    f"{repo_id} has no {path} at {version}; pick a version published by hf-release", file=where
                ) from None

    try:
        path = download(MANIFEST_NAME)
    except ManifestTooLarge as exc:  # bounded before downloading, as push bounds it
        raise InputError(
            f"{repo_id}@{version}: {MANIFEST_NAME} is {exc.size:,} bytes, more than the {limits.MAX_MANIFEST_BYTES:,} "
            "hf-release reads: not one it wrote; pick another version",
            file=where,
        ) from None
    try:  # the Hub's copy is input like any other: bounded again as it is read, schema and digest checked
        manifest = Manifest.load(path, max_bytes=limits.MAX_MANIFEST_BYTES)
    except InputError as exc:
        raise InputError(
            f"{repo_id}@{version}: {exc.problems[0].message.split(';')[0]}; pick another version", file=where
        ) from None
    entries = _entries(manifest)

    def read(path: str) -> bytes | None:
        entry = entries.get(path)
        return None if entry is None or entry.size > SMALL_FILE else read_small(download(path))

    return Snapshot(version, entries, read, _metrics(manifest.metrics), manifest.evidence)


def read_small(path: Path) -> bytes | None:
    """A file's bytes when it is at most SMALL_FILE long (its contents are compared), else None."""
    try:
        if path.stat().st_size > SMALL_FILE:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _entries(manifest: Manifest) -> dict[str, Entry]:
    """The artifacts of a manifest (the generated card and chart always change: not compared), each its own record."""
    return {f.path_in_repo: f for f in manifest.artifacts}


def _metrics(metrics: Any) -> dict[str, float] | None:
    """release.json's recorded metrics, when they are a mapping of numbers (else: not comparable)."""
    if not isinstance(metrics, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in metrics.values()
    ):
        return None
    return {str(k): float(v) for k, v in metrics.items()}
