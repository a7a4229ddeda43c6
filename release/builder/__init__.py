"""`hf-release build`: spec → staged files → checks and digests → card → manifest, all or nothing (steps.py)."""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.builder.collect import resolve_sources
from release.builder.previous import Snapshot, find_previous
from release.builder.previous_spec import SpecPrevious
from release.builder.steps import BUILD_STEPS
from release.card.render import chosen_template
from release.errors import InputError, ReleaseError
from release.history.compare import Unread
from release.pipeline import Context, Sources, StepResult, note_steps_ran, run_steps
from release.spec import ReleaseSpec
from release.staged import check_destination, record_stat
from release.staged.digest_record import DigestRecord, Recorded, filesystem_now
from release.staged.file_stat import FileStat, file_stat
from release.staged.locks import version_lock
from release.staged.manifest import Manifest
from release.staged.names import DIGEST_RECORD_NAME, replaced_prefix, staging_prefix
from release.staged.staged_file import StagedFile

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildResult:
    dist: Path
    manifest: Manifest
    steps: list[tuple[str, StepResult]]
    copied: list[str]  # files that had to be copied (another filesystem) instead of hard-linked


def build(
    spec: ReleaseSpec,
    dist_root: Path,
    *,
    template: Path | None = None,
    progress: bool = False,
    since: str | None = None,
    hub: Callable[[], Any] | None = None,
    prove_with: str | None = None,
    trust_remote_code: bool = False,
) -> BuildResult:
    """Stage, check, hash and describe a release in a temporary folder, then move it into place.

    Only a staged release hf-release wrote itself is ever replaced (`check_destination`, before any write).
    A failed build removes the temporary folder and that earlier staging of this version, so nothing is
    left that `verify` or `push` could mistake for a good release of these inputs.
    `prove_with` names an interpreter that has the kind's library for the load proof; `trust_remote_code` lets
    that proof run the model's own code (builder/proof.py).
    `since` picks the version to compare with (`v5`, `hub:v5` read through `hub()`, or `spec:v5`); by default the
    previous version of this repo, staged, else published on the Hub (through `hub()`, when given).
    """
    # before staging: a missing template or a bad --since stages nothing
    chosen_template(spec, template)
    previous = find_previous(spec.version, dist_root, since, hub, spec.repo_id, spec.reach)
    dist = dist_root / spec.version
    sources = resolve_sources(spec)  # once: what check_destination keeps the staging out of, and what Collect stages
    check_destination(spec, dist, sources.folders)
    try:
        dist_root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot create the staging folder ({exc.strerror}); pass a writable --dist", file=str(dist_root)
        ) from None
    # One writer per version: a second build, or a push reading this version's files, is refused meanwhile.
    with version_lock(dist, f"hf-release build {spec.version}"), _imports_left_out_of_collections():
        return _build_locked(spec, dist, template, progress, previous, sources, (prove_with, trust_remote_code))


@contextlib.contextmanager
def _imports_left_out_of_collections() -> Iterator[None]:
    """The objects that exist before the build (the imported modules: ~100,000) are left out of the garbage
    collections during it (gc.freeze), then handed back: the build's per-file records would otherwise set off
    full collections that scan them all (measured: one more, ~0.1 s, at 5,000 files)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _build_locked(
    spec: ReleaseSpec,
    dist: Path,
    template: Path | None,
    progress: bool,
    previous: tuple[str, Snapshot | SpecPrevious | Unread] | None,
    sources: Sources,
    proving: tuple[str | None, bool] = (None, False),
) -> BuildResult:
    try:
        stage = Path(tempfile.mkdtemp(prefix=staging_prefix(spec.version), dir=dist.parent))
    except OSError as exc:
        raise InputError(
            f"cannot create the staging folder ({exc.strerror}); pass a writable --dist", file=str(dist.parent)
        ) from None
    ctx = Context(spec=spec, stage=stage, template=template, progress=progress)
    ctx.previous, ctx.sources = previous, sources
    ctx.prove_with, ctx.trust_remote_code = proving
    ctx.digests, ctx.started_ns = DigestRecord(dist.parent), filesystem_now(stage)
    try:
        run_steps(ctx, BUILD_STEPS)
        # The earlier staging goes first: unlinking its hard links changes the ctime of the inodes this
        # staging shares with it, and a record taken before that would make the next push re-hash everything.
        _remove(dist)
        # The record before the rename: a kill between them leaves a record that matches no staged file,
        # which push treats as "changed since build", never as a good release. The digest record learns each
        # file's stat as it is recorded.
        record_stat(dist, stage, ctx.files, functools.partial(_learn, ctx))
    except BaseException as exc:
        note_steps_ran(exc, ctx, BUILD_STEPS)  # the CLI shows what ran and where it stopped
        if ctx.hashing is not None:  # a step after collect failed while the files were being hashed
            ctx.hashing.cancel()
        shutil.rmtree(stage, ignore_errors=True)
        _remove(dist)
        raise
    finally:
        if ctx.drawer is not None:  # a build that ended before its card: the child is drawing for nobody
            ctx.drawer.close()
    stage.rename(dist)
    _save_digests(ctx)
    assert ctx.manifest is not None, "WriteManifest, the last step, sets it"
    return BuildResult(dist, ctx.manifest, ctx.log, [f.path_in_repo for f in ctx.files if f.copied])


def _save_digests(ctx: Context) -> None:
    """The release is in place: a digest record that cannot be saved only costs the next build its reuse."""
    assert ctx.digests is not None
    try:
        ctx.digests.save()
    except (ReleaseError, OSError) as exc:
        why = exc.problems[0].message if isinstance(exc, ReleaseError) else exc.strerror
        logger.warning(
            "warning: %s: the digest record was not saved (%s); the release is staged, the next build hashes its files",
            ctx.digests.root / DIGEST_RECORD_NAME,
            why,
        )


def _learn(ctx: Context, f: StagedFile, now: FileStat) -> None:
    """Tell the digest record what this build read (or reused) and confirmed unchanged (`now`: its stat at the end;
    saved only when the build succeeds); files it generated are never reused (they are written anew by every build)."""
    record = ctx.digests
    assert record is not None
    if f.generated or f.stat is None:
        return
    digests = Recorded(f.size, f.sha256, f.md5, f.git_blob_id)
    if f.reused:
        record.relinked(f.stat, now)  # an earlier staging's unlink moved ctime
    else:
        record.confirmed(now, digests, ctx.started_ns)
    if f.source_stat is not None:  # a clone's or copy's source, another inode: status and push compare it
        try:
            source = file_stat(ctx.sources.targets.get(f.source, f.source) if ctx.sources else f.source)
        except OSError:
            return
        if source == f.source_stat:  # untouched since it was staged
            record.confirmed(source, digests, ctx.started_ns)


def _remove(folder: Path) -> None:
    """Move aside first (one rename), then delete: the folder never exists half-deleted under its name.

    Called only on a folder `check_destination` found to be a staged release of ours."""
    if folder.exists():
        doomed = Path(tempfile.mkdtemp(prefix=replaced_prefix(folder.name), dir=folder.parent))
        folder.rename(doomed / folder.name)
        shutil.rmtree(doomed, ignore_errors=True)
