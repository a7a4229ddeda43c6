"""The local Hub's records: repo ids, tree entries, commits, refs and repo settings, the operations a
commit applies, and the rules that say which names and paths are valid.

They are plain values: storage.py writes them as JSON and reads them back; nothing here touches the disk.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

from release.localhub.errors import HubError

RepoType = Literal["model", "dataset", "space"]
REPO_TYPES: tuple[RepoType, ...] = ("model", "dataset", "space")

# The client's own rule (utils/_validators.py): word characters, "-" and ".", starting and ending with a
# word character, at most 96, no "--" or "..".
_NAME_RE = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")
_REF_RE = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/+-]{0,199}")
SHA1_RE = re.compile(r"[0-9a-f]{40}")  # a git id: commits, blobs
SHA256_RE = re.compile(r"[0-9a-f]{64}")  # an LFS oid


@dataclass(frozen=True)
class RepoId:
    type: RepoType
    namespace: str
    name: str

    def __post_init__(self) -> None:
        for part in (self.namespace, self.name):
            if not _NAME_RE.fullmatch(part) or ".." in part or "--" in part or part.endswith(".git"):
                raise HubError(400, f"Invalid repo id: {self.namespace}/{self.name}")

    @property
    def id(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def url_prefix(self) -> str:
        """Path prefix of the repo's web URLs: none for models, `datasets/` or `spaces/` otherwise."""
        return "" if self.type == "model" else f"{self.type}s/"


def repo_id(repo_type: str, namespace: str, name: str) -> RepoId:
    if repo_type not in REPO_TYPES:
        raise HubError(400, f"Invalid repo type: {repo_type!r}")
    return RepoId(cast(RepoType, repo_type), namespace, name)


@dataclass(frozen=True)
class LfsInfo:
    oid: str  # sha256 of the content
    size: int
    pointer_size: int


@dataclass(frozen=True)
class Entry:
    size: int
    oid: str  # git blob sha1 of the content, or of the LFS pointer for LFS files
    lfs: LfsInfo | None = None
    xet_hash: str | None = None  # an LFS file whose bytes the Xet CAS holds: its Xet file hash

    def to_json(self) -> dict[str, Any]:
        lfs = self.lfs and {"oid": self.lfs.oid, "size": self.lfs.size, "pointerSize": self.lfs.pointer_size}
        data = {"size": self.size, "oid": self.oid, "lfs": lfs}
        return data | {"xetHash": self.xet_hash} if self.xet_hash else data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        lfs = data.get("lfs")
        lfs_info = lfs and LfsInfo(lfs["oid"], lfs["size"], lfs["pointerSize"])
        return cls(data["size"], data["oid"], lfs_info, data.get("xetHash"))

    @property
    def remote_oid(self) -> str:
        """What preupload reports as `oid`: the sha256 for LFS files, the git blob sha1 otherwise."""
        return self.lfs.oid if self.lfs else self.oid


@dataclass(frozen=True)
class Commit:
    id: str
    parent: str | None
    tree: Mapping[str, Entry]  # path -> entry; shared between readers, never mutated
    title: str
    message: str
    date: str  # ISO 8601, UTC, milliseconds, 'Z' suffix (the only format the client parses)
    author: str


@dataclass
class Refs:
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> {"target", "message"}
    pulls: dict[int, str] = field(default_factory=dict)
    next_pull: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "branches": self.branches,
            "tags": self.tags,
            "pulls": {str(n): c for n, c in self.pulls.items()},
            "nextPull": self.next_pull,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Refs:
        pulls = {int(n): c for n, c in data["pulls"].items()}
        return cls(dict(data["branches"]), dict(data["tags"]), pulls, data["nextPull"])


@dataclass(frozen=True)
class RepoMeta:
    private: bool
    created_at: str
    gated: str | bool = False  # False, "auto" or "manual", as the Hub's settings take it

    def to_json(self) -> dict[str, Any]:
        return {"private": self.private, "createdAt": self.created_at, "gated": self.gated}


@dataclass(frozen=True)
class AddFile:
    path: str
    content: bytes


@dataclass(frozen=True)
class AddLfsFile:
    path: str
    oid: str
    size: int | None  # a copy of an LFS file may omit it


@dataclass(frozen=True)
class Delete:
    path: str
    folder: bool


Operation = AddFile | AddLfsFile | Delete


def git_blob_sha1(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


def lfs_pointer(oid: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def validate_path(path: object) -> str:
    """The Hub's rule (422): a repo path is relative and stays inside the repo, also when a Windows client
    reads its backslashes as separators; no empty, `.`, `..` or `.git` component, no NUL, at most 1024."""
    if not isinstance(path, str) or not path or len(path) > 1024 or "\0" in path:
        raise HubError(422, f"Invalid path in repo: {path!r}")
    first = re.split(r"[/\\]", path, maxsplit=1)[0]
    if first in ("", ".", "..") or re.match(r"[A-Za-z]:", path):
        raise HubError(422, f"Invalid path in repo: {path!r} (paths are relative to the repo root)")
    if any(part in ("", ".", "..", ".git") for part in path.split("/")):
        raise HubError(422, f"Invalid path in repo: {path!r}")
    return path


def validate_ref_name(name: str) -> str:
    if (
        not _REF_RE.fullmatch(name)
        or ".." in name
        or "//" in name
        or name.endswith(("/", ".lock"))
        or name.startswith("refs/")
        or SHA1_RE.fullmatch(name)
    ):
        raise HubError(400, f"Invalid reference name: {name!r}")
    return name


def directory_oids(tree: Mapping[str, Entry]) -> dict[str, str]:
    """A stable id for every directory of a tree: a hash of the paths and oids beneath it."""
    listings: dict[str, list[str]] = {}
    for path in sorted(tree):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            listings.setdefault("/".join(parts[:depth]), []).append(f"{path}\0{tree[path].oid}\n")
    return {
        d: hashlib.sha1("".join(lines).encode(), usedforsecurity=False).hexdigest() for d, lines in listings.items()
    }


def apply_operations(
    tree: dict[str, Entry], operations: list[Operation], entries: Mapping[str, Entry]
) -> dict[str, Entry]:
    """Apply a commit's operations to `tree` in place and return it; added files take their entry from `entries`."""
    for op in operations:
        if isinstance(op, Delete) and op.folder:
            prefix = op.path.rstrip("/") + "/"
            doomed = [p for p in tree if p.startswith(prefix)]
            if not doomed:
                raise HubError(404, f"A folder with this name doesn't exist: {op.path}", "EntryNotFound")
            for path in doomed:
                del tree[path]
        elif isinstance(op, Delete):
            if tree.pop(op.path, None) is None:
                # Like the Hub, a file deletion that names a folder deletes the folder.
                doomed = [p for p in tree if p.startswith(op.path + "/")]
                if not doomed:
                    raise HubError(404, f"A file with this name doesn't exist: {op.path}", "EntryNotFound")
                for path in doomed:
                    del tree[path]
        else:
            tree[op.path] = entries[op.path]
    # Git cannot hold a file and a directory at the same path.
    directories = {p.rsplit("/", 1)[0] for p in tree if "/" in p}
    directories |= {d.rsplit("/", i)[0] for d in directories for i in range(1, d.count("/") + 1)}
    clash = sorted(directories & tree.keys())
    if clash:
        raise HubError(400, f"Path is both a file and a directory: {clash[0]}")
    return tree
