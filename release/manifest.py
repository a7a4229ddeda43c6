"""Step: the manifest (release.json) and SHA256SUMS — what the release is, byte for byte.

Deterministic: no timestamps, sorted entries, canonical JSON; two builds of the same inputs are identical.
The release digest covers the artifacts (not the generated card), so the card can quote it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .errors import InputError
from .pipeline import Context, Done, StagedFile, StepResult

MANIFEST_NAME = "release.json"
SUMS_NAME = "SHA256SUMS"
SIGNATURE_NAME = "model.sig"
FORMAT = "hf-release/manifest/1"


@dataclass(frozen=True)
class ManifestFile:
    path_in_repo: str
    size: int
    sha256: str
    role: str
    md5: str | None = None
    generated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and v is not False}


@dataclass(frozen=True)
class Manifest:
    repo_id: str
    version: str
    spec_sha256: str
    files: tuple[ManifestFile, ...]
    source_commit: str | None = None
    tool_version: str = __version__

    @property
    def artifacts(self) -> tuple[ManifestFile, ...]:
        return tuple(f for f in self.files if not f.generated)

    @property
    def release_digest(self) -> str:
        """sha256 over the canonical artifact list: what the card quotes as this release's identity."""
        files = sorted(self.artifacts, key=lambda f: f.path_in_repo)
        body = {"repo_id": self.repo_id, "version": self.version, "files": [f.as_dict() for f in files]}
        return hashlib.sha256(canonical_json(body)).hexdigest()

    def file(self, path_in_repo: str) -> ManifestFile | None:
        return next((f for f in self.files if f.path_in_repo == path_in_repo), None)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "repo_id": self.repo_id,
            "version": self.version,
            "release_digest": self.release_digest,
            "tool": {"name": "hf-release", "version": self.tool_version},
            "spec_sha256": self.spec_sha256,
            "files": [f.as_dict() for f in sorted(self.files, key=lambda f: f.path_in_repo)],
        }
        if self.source_commit:
            out["source_commit"] = self.source_commit
        return out

    def to_bytes(self) -> bytes:
        return json.dumps(self.as_dict(), indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"

    def sha256sums(self, manifest_sha256: str) -> bytes:
        """`sha256sum -c` format, sorted by path, covering every file and the manifest itself."""
        rows = [(f.path_in_repo, f.sha256) for f in self.files] + [(MANIFEST_NAME, manifest_sha256)]
        return "".join(f"{sha}  {path}\n" for path, sha in sorted(rows)).encode()

    @classmethod
    def load(cls, path: Path) -> Manifest:
        try:
            data = json.loads(path.read_text("utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"format is {data.get('format')!r}, expected {FORMAT!r}")
            files = tuple(
                ManifestFile(
                    path_in_repo=f["path_in_repo"],
                    size=int(f["size"]),
                    sha256=f["sha256"],
                    role=f["role"],
                    md5=f.get("md5"),
                    generated=bool(f.get("generated", False)),
                )
                for f in data["files"]
            )
            manifest = cls(
                repo_id=data["repo_id"],
                version=data["version"],
                spec_sha256=data["spec_sha256"],
                files=files,
                source_commit=data.get("source_commit"),
                tool_version=data["tool"]["version"],
            )
        except FileNotFoundError:
            raise InputError("no staged release here; run `hf-release build` first", file=str(path)) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a valid hf-release manifest ({exc}); rebuild the release", file=str(path)) from None
        if manifest.release_digest != data.get("release_digest"):
            raise InputError("release_digest does not match the files listed; the manifest was edited", file=str(path))
        return manifest


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_entry(f: StagedFile) -> ManifestFile:
    return ManifestFile(f.path_in_repo, f.size, f.sha256, f.role, f.md5, generated=f.spec is None)


def source_commit(folder: Path) -> str | None:
    """The git commit of the repo holding the spec, when there is one."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


class BuildManifest:
    """Describe the artifacts: the card, rendered next, quotes this manifest's release digest."""

    name = "manifest"

    def run(self, ctx: Context) -> StepResult:
        ctx.manifest = Manifest(
            repo_id=ctx.spec.repo_id,
            version=ctx.spec.version,
            spec_sha256=ctx.spec.sha256,
            files=tuple(manifest_entry(f) for f in ctx.files),
            source_commit=source_commit(ctx.spec.root),
        )
        return Done(f"release digest {ctx.manifest.release_digest[:12]}")


class WriteManifest:
    """Write release.json (every file, generated ones included) and SHA256SUMS into the staging folder."""

    name = "write-manifest"

    def run(self, ctx: Context) -> StepResult:
        manifest = Manifest(
            repo_id=ctx.manifest.repo_id,
            version=ctx.manifest.version,
            spec_sha256=ctx.manifest.spec_sha256,
            files=tuple(manifest_entry(f) for f in ctx.files),
            source_commit=ctx.manifest.source_commit,
        )
        assert manifest.release_digest == ctx.manifest.release_digest, "artifacts changed after the card quoted them"
        body = manifest.to_bytes()
        (ctx.stage / MANIFEST_NAME).write_bytes(body)
        (ctx.stage / SUMS_NAME).write_bytes(manifest.sha256sums(hashlib.sha256(body).hexdigest()))
        ctx.manifest = manifest
        return Done(f"{len(manifest.files)} files in {MANIFEST_NAME}")
