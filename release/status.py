"""`hf-release status`: every version of a project — its spec, its staged release, its tag on the Hub.

Read-only and cheap: the staged files are checked against the stat record build left (a file whose
size, times or inode changed is re-hashed), the Hub is asked once per repo for its tags and once per
published version for its file list.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from release.errors import InputError, Problem, RemoteError, VerifyFailed
from release.spec import SPEC_NAME, load_spec
from release.spec.project import ARTIFACTS
from release.spec.versions import sort_versions, version_problem
from release.staged import StagedRelease, changed_since_build, read_staged
from release.staged.names import MANIFEST_NAME
from release.staged.sources import compare_sources

if TYPE_CHECKING:
    from release.hub.client import HubClient


@dataclass
class VersionStatus:
    version: str
    repo_id: str | None = None
    spec: str = "missing"  # ok | missing | invalid
    staged: str = "no"  # no | verified | changed | damaged
    spec_changed_since_build: bool | None = None
    sources: str = "not compared"  # not compared | unchanged | changed | not told | not here | partly here (sources.py)
    hub: str = "not checked"  # not checked | published | not published
    commit: str | None = None  # the tag's commit on the Hub
    hub_matches: bool | None = None  # the Hub's files at the tag equal the local manifest
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not looked at, and why (never a failure)

    @property
    def failed_locally(self) -> bool:
        """The staged release is not what build left, or a source changed since: push would refuse it."""
        return self.staged in ("changed", "damaged") or self.sources == "changed"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def project_status(
    root: Path, dist: Path, hub: HubClient | None, hub_errors: list[Problem] | None = None
) -> list[VersionStatus]:
    """The status of every version found under ROOT/artifacts/ or staged under DIST, in version order.
    `hub_errors`: where a Hub that cannot be reached (or seen) is reported, the local state kept, instead of
    raising RemoteError."""
    names = {
        p.name
        for folder in (root / ARTIFACTS, dist)
        if folder.is_dir()
        for p in folder.iterdir()
        if p.is_dir()
        and version_problem(p.name) is None
        and ((p / SPEC_NAME).is_file() or (p / MANIFEST_NAME).is_file())
    }
    statuses = [
        _local(version, root / ARTIFACTS / version / SPEC_NAME, dist / version) for version in sort_versions(names)
    ]
    if hub is not None:
        try:
            _on_the_hub(hub, statuses)
        except RemoteError as exc:
            if hub_errors is None:
                raise
            hub_errors.extend(exc.problems)
    return [s for s, _ in statuses]


def _local(version: str, spec_path: Path, folder: Path) -> tuple[VersionStatus, StagedRelease | None]:
    status = VersionStatus(version)
    spec_sha = None
    if spec_path.is_file():
        try:
            spec = load_spec(spec_path)
            status.spec, status.repo_id, spec_sha = "ok", spec.repo_id, spec.sha256
        except InputError as exc:
            status.spec = "invalid"
            status.problems += [str(p) for p in exc.problems]
    staged = None
    if (folder / MANIFEST_NAME).is_file():
        try:
            staged = read_staged(folder)
        except InputError as exc:
            status.staged = "damaged"
            status.problems += [str(p) for p in exc.problems]
    if staged is not None:
        changed, _ = changed_since_build(staged)
        status.staged = "changed" if changed else "verified"
        status.problems += [f"{folder.name}/{p}" for p in changed]
        status.repo_id = status.repo_id or staged.manifest.repo_id
        if spec_sha is not None:
            status.spec_changed_since_build = spec_sha != staged.manifest.spec_sha256
        sources = compare_sources(spec_path, staged, bounded=True)
        status.sources = sources.state
        status.problems += [str(p) for p in sources.changed]
        status.notes += sources.notes()
    return status, staged


def _on_the_hub(hub: HubClient, statuses: list[tuple[VersionStatus, StagedRelease | None]]) -> None:
    # the Hub's half imported here: `status --local` (or offline) loads no Hub client (~0.3 s)
    from release.publish.verify_remote import verify_remote

    tags_by_repo: dict[str, dict[str, str]] = {}
    for status, staged in statuses:
        if status.repo_id is None:
            continue
        if status.repo_id not in tags_by_repo:
            tags_by_repo[status.repo_id] = _tags(hub, status.repo_id)
        commit = tags_by_repo[status.repo_id].get(status.version)
        status.hub, status.commit = ("published", commit) if commit else ("not published", None)
        if commit is None or staged is None or status.staged == "damaged":
            continue
        try:
            verify_remote(hub, staged, commit=commit)
            status.hub_matches = True
        except VerifyFailed as exc:
            status.hub_matches = False
            status.problems += [str(p) for p in exc.problems]


def _tags(hub: HubClient, repo_id: str) -> dict[str, str]:
    """Tag → commit for a repo; none for a repo that does not exist (yet). Without a token a private repo looks
    the same as none: that is not "not published" but a repo status cannot see (exit 3, as verify --remote)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    from release.hub.client import remote_errors, with_retries

    with remote_errors(repo_id, "reading tags"):
        try:
            refs = with_retries(lambda: hub.api.list_repo_refs(repo_id), "reading tags")
        except RepositoryNotFoundError:
            if not hub.api.token:
                raise RemoteError(
                    "cannot be seen without a token: it does not exist, or it is private; give a token "
                    "(HF_TOKEN, --token-file or --token-stdin) to tell, or --local to skip the Hub",
                    file=repo_id,
                ) from None
            return {}
    return {t.name: t.target_commit for t in refs.tags}
