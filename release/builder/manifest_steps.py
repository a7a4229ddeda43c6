"""Steps: the release digest (what the card quotes), then release.json and SHA256SUMS, built once.

The manifest is built a single time, at the end, from the one list of staged files (`ctx.files`,
the card and chart included). Before the card is rendered, `ReleaseDigest` computes the digest of the
artifacts alone — the same function `Manifest.release_digest` uses — so the card can quote it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from release.errors import CheckFailed, Problem
from release.pipeline import Context, Done, StepResult
from release.staged.manifest import Manifest, ManifestFile, release_digest_in_order, write_manifest
from release.staged.names import MANIFEST_NAME
from release.staged.staged_file import StagedFile
from release.util.wording import counted


def manifest_entry(f: StagedFile) -> ManifestFile:
    return ManifestFile(
        f.path_in_repo, f.size, f.sha256, f.role, f.md5, generated=f.generated, git_blob_id=f.git_blob_id
    )


def source_commit(folder: Path) -> str | None:
    """The git commit of the repo holding the spec, when there is one."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class ReleaseDigest:
    """Digest the artifacts (every file but the generated ones): the card, rendered next, quotes it."""

    name = "release-digest"

    def run(self, ctx: Context) -> StepResult:
        ordered = sorted(ctx.files, key=lambda f: f.path_in_repo)
        ctx.release_digest = release_digest_in_order(ctx.spec.repo_id, ctx.spec.version, map(manifest_entry, ordered))
        return Done(f"release digest {ctx.release_digest[:12]}")


class WriteManifest:
    """Build the manifest once from the staged files and write release.json and SHA256SUMS."""

    name = "write-manifest"

    def run(self, ctx: Context) -> StepResult:
        manifest = Manifest(
            repo_id=ctx.spec.repo_id,
            version=ctx.spec.version,
            spec_sha256=ctx.spec.sha256,
            files=tuple(manifest_entry(f) for f in ctx.files),
            source_commit=source_commit(ctx.spec.root),
            card=ctx.card_record,
            changes=ctx.changes.as_dict() if ctx.changes is not None else None,
            metrics=ctx.metrics,
            evidence=ctx.evidence,
            proof=ctx.proof,
        )
        if manifest.release_digest != ctx.release_digest:  # a step changed an artifact after the card quoted it
            raise CheckFailed(
                Problem(MANIFEST_NAME, "the artifacts changed after the card quoted their digest; build again")
            )
        write_manifest(ctx.stage, manifest)
        ctx.manifest = manifest
        return Done(f"{counted(len(manifest.files), 'file')} in {MANIFEST_NAME}")
