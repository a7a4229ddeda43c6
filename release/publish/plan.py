"""The push plan: a pure function of what the release holds (wanted) and what the Hub holds (present).

pip-tools' shape (`diff()`, then `sync(dry_run=…)`): the plan is computed from the two listings alone, with
no I/O, so `--dry-run` prints exactly what a real run carries out and the plan is tested without a Hub.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from release.hub.client import RemoteFile
from release.publish.files import Expected, matches
from release.staged.names import HUB_FILES


@dataclass(frozen=True)
class Present:
    """What the Hub holds for the release's repo, as the preflight read it."""

    repo_exists: bool = False
    head: str | None = None  # main's commit
    at_head: dict[str, RemoteFile] = field(default_factory=dict)  # main's files
    tag_commit: str | None = None  # the version tag's commit, when the tag exists
    at_tag: dict[str, RemoteFile] = field(default_factory=dict)  # the files at the version tag


@dataclass
class PushPlan:
    repo_id: str
    version: str
    repo_exists: bool = False
    head: str | None = None  # main's commit seen at preflight: the commit's parent
    add: list[tuple[str, int]] = field(default_factory=list)
    change: list[tuple[str, int]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    unchanged: list[tuple[str, int]] = field(default_factory=list)
    # create | keep (already published, same content) | move (--force-tag) | none (--create-pr)
    # | taken (published with other files: the preflight refuses)
    tag: str = "create"
    tag_commit: str | None = None
    warnings: list[str] = field(default_factory=list)  # the Hub's recommendations this release crosses

    @property
    def commit_needed(self) -> bool:
        return self.tag != "keep" and bool(self.add or self.change or self.delete)

    @property
    def bytes_to_send(self) -> int:
        return sum(size for _, size in self.add + self.change) if self.commit_needed else 0

    def as_dict(self) -> dict[str, object]:
        return {
            "repo_id": self.repo_id,
            "version": self.version,
            "repo_exists": self.repo_exists,
            "head": self.head,
            "add": [{"path": p, "size": s} for p, s in self.add],
            "change": [{"path": p, "size": s} for p, s in self.change],
            "delete": self.delete,
            "unchanged": [{"path": p, "size": s} for p, s in self.unchanged],
            "commit": self.commit_needed,
            "tag": self.tag,
            "bytes_to_send": self.bytes_to_send,
            "warnings": self.warnings,
        }


def push_plan(
    repo_id: str,
    version: str,
    wanted: dict[str, Expected],
    present: Present,
    *,
    keep_extra: bool = False,
    create_pr: bool = False,
    force_tag: bool = False,
    warnings: Sequence[str] = (),
) -> PushPlan:
    """What a push of `wanted` onto `present` does: files to add, change, delete (unless `keep_extra`) and keep,
    and what becomes of the version tag."""
    plan = PushPlan(
        repo_id,
        version,
        present.repo_exists,
        present.head,
        tag_commit=present.tag_commit,
        tag=_tag_action(wanted, present, create_pr=create_pr, force_tag=force_tag),
        warnings=list(warnings),
    )
    for path, expected in sorted(wanted.items()):
        remote = present.at_head.get(path)
        if remote is None:
            plan.add.append((path, expected.size))
        elif matches(remote, expected):
            plan.unchanged.append((path, expected.size))
        else:
            plan.change.append((path, expected.size))
    if not keep_extra:
        plan.delete = sorted(present.at_head.keys() - wanted.keys() - HUB_FILES)
    return plan


def _tag_action(wanted: dict[str, Expected], present: Present, *, create_pr: bool, force_tag: bool) -> str:
    """A published version is immutable: its tag is kept when it holds exactly this release, and re-pointed only
    deliberately (--force-tag); a pull request publishes nothing, so it leaves the tag alone."""
    if present.tag_commit is None:
        return "none" if create_pr else "create"
    if _same_release(present.at_tag, wanted, present.at_head):
        return "keep"
    if create_pr:
        return "none"
    return "move" if force_tag else "taken"


def _same_release(remote: dict[str, RemoteFile], wanted: dict[str, Expected], head: dict[str, RemoteFile]) -> bool:
    """The tag holds exactly the release, plus only files main still holds alike (kept by `push --keep-extra`)."""
    extra = remote.keys() - wanted.keys() - HUB_FILES
    kept = all(p in head and head[p].blob_id == remote[p].blob_id for p in extra)
    return kept and all(p in remote and matches(remote[p], e) for p, e in wanted.items())


def tag_differences(wanted: dict[str, Expected], present: Present) -> list[str]:
    """How the files at the version's tag differ from this release, one phrase a path: `model.sig (not at the
    tag)`, `model.safetensors (differs)`, `notes.txt (only at the tag)`. A signature made again after publishing
    differs (each signing is new), and a refusal naming no file left the user guessing which."""
    at_tag, head = present.at_tag, present.at_head
    found = [
        f"{path} ({'not at the tag' if path not in at_tag else 'differs'})"
        for path, expected in sorted(wanted.items())
        if path not in at_tag or not matches(at_tag[path], expected)
    ]
    kept = {p for p in at_tag if p in head and head[p].blob_id == at_tag[p].blob_id}  # as _same_release keeps them
    return found + [f"{path} (only at the tag)" for path in sorted(at_tag.keys() - wanted.keys() - HUB_FILES - kept)]
