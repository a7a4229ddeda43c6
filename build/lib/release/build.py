"""`hf-release build`: spec → staged files → checks and digests → manifest → card, all or nothing."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .card import DrawChartEarly, LintCard, RenderCard
from .checks import CONTENT_CHECKS, DIGEST_CHECKS
from .collect import Collect
from .digest import Digest
from .manifest import BuildManifest, Manifest, WriteManifest
from .pipeline import Context, Gate, Step, StepResult, run_steps
from .spec import ReleaseSpec
from .staging import record_stat

BUILD_STEPS: tuple[Step, ...] = (
    Collect(),
    *CONTENT_CHECKS,
    Gate("checks"),
    DrawChartEarly(),
    Digest(),
    *DIGEST_CHECKS,
    Gate("expected-digests"),
    BuildManifest(),
    RenderCard(),
    LintCard(),
    Gate("card-lint"),
    WriteManifest(),
)


@dataclass(frozen=True)
class BuildResult:
    dist: Path
    manifest: Manifest
    steps: list[tuple[str, StepResult]]
    copied: list[str]  # files that had to be copied (another filesystem) instead of hard-linked


def build(spec: ReleaseSpec, dist_root: Path, *, template: Path | None = None, progress: bool = False) -> BuildResult:
    """Stage, check, hash and describe a release in a temporary folder, then move it into place.

    A failed build removes the temporary folder and any earlier staging of this version, so
    nothing is left that `verify` or `push` could mistake for a good release of these inputs.
    """
    dist_root.mkdir(parents=True, exist_ok=True)
    dist = dist_root / spec.version
    stage = Path(tempfile.mkdtemp(prefix=f".{spec.version}.building-", dir=dist_root))
    ctx = Context(spec=spec, stage=stage, template=template, progress=progress)
    try:
        run_steps(ctx, BUILD_STEPS)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        _remove(dist)
        raise
    _remove(dist)
    stage.rename(dist)
    record_stat(dist, ctx.manifest)
    return BuildResult(dist, ctx.manifest, ctx.log, [f.path_in_repo for f in ctx.files if f.copied])


def _remove(folder: Path) -> None:
    """Move aside first (one rename), then delete: the folder never exists half-deleted under its name."""
    if folder.exists():
        doomed = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
        folder.rename(doomed / folder.name)
        shutil.rmtree(doomed, ignore_errors=True)
