"""On-disk state of the local Hub: repos, commits, refs and content-addressed objects.

Layout under the root directory:

    objects/sha256/ab/cdef...        LFS object contents, addressed by their sha256
    objects/blob/ab/cdef...          regular file contents, addressed by their git blob sha1
    repos/<type>s/<ns>/<name>/
        repo.json                    visibility and creation date; written last, so it marks a whole repo
        commits/<id>.json            immutable commit records, tree inline
        refs.json                    branches, tags and PR refs: the only file that is ever overwritten
    uploads/<oid>-<size>-<chunk>/<n> multipart parts waiting for their completion request
    secret                           key that signs LFS upload hrefs (kept so they survive a restart)
    server.lock                      held (flock) by the one server using this root
    .work-XXXXXXXX/                  this server's temp files (same filesystem, so os.replace is atomic)

Every write goes to a temp file, is fsynced and renamed into place, and the directory is fsynced.
A commit writes its blobs and its commit record first and rewrites refs.json last, so a process
killed at any point leaves each repo at either its old or its new state. One server per root: a
second one refuses to start. Temp files live in a folder the server made itself (mkdtemp, marked); at
start-up it removes only such marked folders, left by a server that was killed — never anything else.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

RepoType = Literal["model", "dataset", "space"]
REPO_TYPES: tuple[RepoType, ...] = ("model", "dataset", "space")

# The default .gitattributes of a new Hub repo (plus common image types): these paths go to LFS.
# fmt: off
_LFS_PATTERNS = (
    "*.7z", "*.arrow", "*.bin", "*.bz2", "*.ckpt", "*.ftz", "*.gz", "*.h5", "*.joblib", "*.lfs.*", "*.mlmodel",
    "*.model", "*.msgpack", "*.npy", "*.npz", "*.onnx", "*.ot", "*.parquet", "*.pb", "*.pickle", "*.pkl", "*.pt",
    "*.pth", "*.rar", "*.safetensors", "saved_model/**/*", "*.tar.*", "*.tar", "*.tflite", "*.tgz", "*.wasm",
    "*.xz", "*.zip", "*.zst", "*tfevents*", "*.png", "*.jpg", "*.jpeg", "*.gif", "*.webp",
)
# fmt: on
DEFAULT_GITATTRIBUTES = "".join(f"{pattern} filter=lfs diff=lfs merge=lfs -text\n" for pattern in _LFS_PATTERNS)

# The client's own rule (utils/_validators.py): word characters, "-" and ".", starting and ending with a
# word character, at most 96, no "--" or "..".
_NAME_RE = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")
_REF_RE = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/+-]{0,199}")
_SHA1_RE = re.compile(r"[0-9a-f]{40}")
_SHORT_SHA_RE = re.compile(r"[0-9a-f]{7,39}")
WORK_PREFIX = ".work-"
WORK_MARK = "made-by-hf-release-hub"  # a file in each work folder: only marked folders are ever removed
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


class HubError(Exception):
    """An error with the HTTP status, Hub error code and message the server should answer with."""

    def __init__(
        self, status: int, message: str, code: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = dict(headers or {})


def repo_not_found(repo_id: str) -> HubError:
    # The Hub's exact text: the client folds it into its own "Repository Not Found for url: …" line.
    return HubError(404, "Repository not found", "RepoNotFound")


def revision_not_found(revision: str) -> HubError:
    return HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")


class RootInUse(OSError):
    """Another local Hub serves this root: two would delete each other's uploads."""


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

    def to_json(self) -> dict[str, Any]:
        lfs = self.lfs and {"oid": self.lfs.oid, "size": self.lfs.size, "pointerSize": self.lfs.pointer_size}
        return {"size": self.size, "oid": self.oid, "lfs": lfs}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        lfs = data.get("lfs")
        return cls(data["size"], data["oid"], lfs and LfsInfo(lfs["oid"], lfs["size"], lfs["pointerSize"]))

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
        or _SHA1_RE.fullmatch(name)
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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _ensure_dir(path: Path) -> None:
    """mkdir -p that also fsyncs each parent whose listing changed, so new directories survive a crash."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
        _fsync_dir(directory.parent)


@functools.lru_cache(maxsize=256)
def _load_commit(path: Path) -> Commit:
    # Commit files are immutable once renamed into place, so caching by path is safe.
    data = json.loads(path.read_bytes())
    tree = {p: Entry.from_json(e) for p, e in data["tree"].items()}
    return Commit(data["id"], data["parent"], tree, data["title"], data["message"], data["date"], data["author"])


class ObjectWriter:
    """Streams one object into a temp file while hashing it, so no object is ever held in memory."""

    def __init__(self, tmp_dir: Path) -> None:
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
        self.path = Path(name)
        self._file: IO[bytes] = os.fdopen(fd, "wb")
        self._sha256 = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self._file.write(chunk)
        self._sha256.update(chunk)
        self.size += len(chunk)

    def hexdigest(self) -> str:
        return self._sha256.hexdigest()

    def close(self) -> None:
        """Flush and fsync the temp file; it stays in place for `Storage.keep`."""
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()

    def discard(self) -> None:
        self._file.close()
        self.path.unlink(missing_ok=True)


class Storage:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        _ensure_dir(self.root)
        self._lock_file = (self.root / "server.lock").open("a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            raise RootInUse(f"{self.root} is already served by another local Hub; stop it or use another root") from None
        # Holding the lock, any marked work folder is a killed server's: its files belong to no state.
        for stale in self.root.glob(f"{WORK_PREFIX}*"):
            if stale.is_dir() and not stale.is_symlink() and (stale / WORK_MARK).is_file():
                shutil.rmtree(stale)
        self.tmp = Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=self.root))
        (self.tmp / WORK_MARK).touch()
        self._lock = threading.Lock()
        self.secret = self._load_secret()

    def close(self) -> None:
        """Remove this server's work folder and release the root."""
        if not self._lock_file.closed:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self._lock_file.close()  # releases the flock

    # ---- low-level writes -------------------------------------------------------------------------

    def atomic_write(self, path: Path, data: bytes) -> None:
        _ensure_dir(path.parent)
        fd, name = tempfile.mkstemp(dir=self.tmp)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        _fsync_dir(path.parent)

    def keep(self, writer: ObjectWriter, dest: Path, *, overwrite: bool = False) -> None:
        """Move a finished upload into place; content-addressed objects already stored are left alone."""
        writer.close()
        if dest.exists() and not overwrite:
            writer.path.unlink()
            return
        _ensure_dir(dest.parent)
        os.replace(writer.path, dest)
        _fsync_dir(dest.parent)

    def new_writer(self) -> ObjectWriter:
        return ObjectWriter(self.tmp)

    def _load_secret(self) -> bytes:
        path = self.root / "secret"
        if not path.exists():
            self.atomic_write(path, base64.b64encode(secrets.token_bytes(32)))  # mkstemp makes it 0600
        return base64.b64decode(path.read_bytes())

    # ---- objects ----------------------------------------------------------------------------------

    def lfs_path(self, oid: str) -> Path:
        if not _SHA256_RE.fullmatch(oid):
            raise HubError(400, f"Invalid sha256 oid: {oid!r}")
        return self.root / "objects" / "sha256" / oid[:2] / oid[2:]

    def lfs_size(self, oid: str) -> int | None:
        path = self.lfs_path(oid)
        return path.stat().st_size if path.exists() else None

    def blob_path(self, oid: str) -> Path:
        return self.root / "objects" / "blob" / oid[:2] / oid[2:]

    def content_path(self, entry: Entry) -> Path:
        return self.lfs_path(entry.lfs.oid) if entry.lfs else self.blob_path(entry.oid)

    def read_blob(self, entry: Entry) -> bytes:
        return self.content_path(entry).read_bytes()

    def _store_blob(self, content: bytes) -> Entry:
        oid = git_blob_sha1(content)
        path = self.blob_path(oid)
        if not path.exists():
            self.atomic_write(path, content)
        return Entry(len(content), oid)

    def _lfs_entry(self, oid: str, size: int | None) -> Entry:
        stored = self.lfs_size(oid)
        if stored is None:
            raise HubError(422, f"LFS object {oid} was never uploaded; upload it before committing")
        if size is not None and size != stored:
            raise HubError(422, f"LFS object {oid} has size {stored}, not {size}")
        pointer = lfs_pointer(oid, stored)
        return Entry(stored, git_blob_sha1(pointer), LfsInfo(oid, stored, len(pointer)))

    # ---- repos and refs ---------------------------------------------------------------------------

    def _repo_dir(self, repo: RepoId) -> Path:
        return self.root / "repos" / f"{repo.type}s" / repo.namespace / repo.name

    def canonical(self, repo: RepoId) -> RepoId:
        """The stored spelling of a repo id: the Hub matches namespaces and names case-insensitively."""
        base = self.root / "repos" / f"{repo.type}s"
        if (base / repo.namespace / repo.name / "repo.json").exists():
            return repo
        namespace = _find_folded(base, repo.namespace) or repo.namespace
        name = _find_folded(base / namespace, repo.name) or repo.name
        return RepoId(repo.type, namespace, name)

    def repo_meta(self, repo: RepoId) -> RepoMeta | None:
        path = self._repo_dir(repo) / "repo.json"
        if not path.exists():
            return None
        data = json.loads(path.read_bytes())
        return RepoMeta(data["private"], data["createdAt"], data.get("gated", False))

    def list_repos(self, repo_type: RepoType, namespace: str | None) -> list[tuple[RepoId, RepoMeta]]:
        base = self.root / "repos" / f"{repo_type}s"
        spaces = [namespace] if namespace else sorted(p.name for p in base.iterdir()) if base.exists() else []
        found = []
        for space in spaces:
            folder = base / (_find_folded(base, space) or space)
            for path in sorted(folder.iterdir()) if folder.is_dir() else []:
                repo = RepoId(repo_type, folder.name, path.name)
                if (meta := self.repo_meta(repo)) is not None:
                    found.append((repo, meta))
        return found

    def update_settings(self, repo: RepoId, *, private: bool | None, gated: str | bool | None) -> None:
        with self._lock:
            meta = self.repo_meta(repo)
            if meta is None:
                raise repo_not_found(repo.id)
            meta = RepoMeta(
                meta.private if private is None else private, meta.created_at, meta.gated if gated is None else gated
            )
            self.atomic_write(self._repo_dir(repo) / "repo.json", json.dumps(meta.to_json()).encode())

    def delete_repo(self, repo: RepoId) -> None:
        """Take the repo out of sight in one rename (its objects stay: they are shared by content)."""
        with self._lock:
            if self.repo_meta(repo) is None:
                raise repo_not_found(repo.id)
            doomed = Path(tempfile.mkdtemp(dir=self.tmp)) / "repo"
            os.replace(self._repo_dir(repo), doomed)
            _fsync_dir(self._repo_dir(repo).parent)
            shutil.rmtree(doomed.parent)

    def move_repo(self, source: RepoId, dest: RepoId) -> None:
        with self._lock:
            if self.repo_meta(source) is None:
                raise repo_not_found(source.id)
            if self.repo_meta(self.canonical(dest)) is not None:
                raise HubError(409, f"A {dest.type} repository called {dest.id} already exists")
            _ensure_dir(self._repo_dir(dest).parent)
            os.replace(self._repo_dir(source), self._repo_dir(dest))
            _fsync_dir(self._repo_dir(dest).parent)
            _fsync_dir(self._repo_dir(source).parent)

    def create_repo(self, repo: RepoId, *, private: bool, author: str) -> bool:
        """Create a repo with an initial commit on main; False if it already exists."""
        with self._lock:
            if self.repo_meta(repo) is not None:
                return False
            tree = {".gitattributes": self._store_blob(DEFAULT_GITATTRIBUTES.encode())}
            commit = self._write_commit(repo, None, tree, "initial commit", "", author)
            self._write_refs(repo, Refs(branches={"main": commit.id}))
            meta = RepoMeta(private, commit.date)
            self.atomic_write(self._repo_dir(repo) / "repo.json", json.dumps(meta.to_json()).encode())
            return True

    def refs(self, repo: RepoId) -> Refs:
        return Refs.from_json(json.loads((self._repo_dir(repo) / "refs.json").read_bytes()))

    def _write_refs(self, repo: RepoId, refs: Refs) -> None:
        self.atomic_write(self._repo_dir(repo) / "refs.json", json.dumps(refs.to_json(), indent=1).encode())

    def resolve(self, repo: RepoId, revision: str) -> str:
        """Commit id a revision names: branch, tag, `refs/heads|tags|pr/...`, or a full commit id."""
        refs = self.refs(repo)
        pull = _pull_number(revision)
        if pull in refs.pulls:
            return refs.pulls[pull]
        name = revision.removeprefix("refs/heads/").removeprefix("refs/tags/")
        if not revision.startswith("refs/tags/") and name in refs.branches:
            return refs.branches[name]
        if not revision.startswith("refs/heads/") and name in refs.tags:
            return refs.tags[name]["target"]
        if _SHA1_RE.fullmatch(revision) and (self._repo_dir(repo) / "commits" / f"{revision}.json").exists():
            return revision
        if _SHORT_SHA_RE.fullmatch(revision):  # a short commit id, resolved when unambiguous, like git
            matches = [p.stem for p in (self._repo_dir(repo) / "commits").glob(f"{revision}*.json")]
            if len(matches) == 1:
                return matches[0]
        raise revision_not_found(revision)

    def commit_record(self, repo: RepoId, commit_id: str) -> Commit:
        return _load_commit(self._repo_dir(repo) / "commits" / f"{commit_id}.json")

    def history(self, repo: RepoId, commit_id: str) -> Iterator[Commit]:
        current: str | None = commit_id
        while current is not None:
            commit = self.commit_record(repo, current)
            yield commit
            current = commit.parent

    def _write_commit(
        self, repo: RepoId, parent: str | None, tree: Mapping[str, Entry], title: str, message: str, author: str
    ) -> Commit:
        body = {
            "parent": parent,
            "tree": {p: tree[p].to_json() for p in sorted(tree)},
            "title": title,
            "message": message,
            "date": now_iso(),
            "author": author,
        }
        commit_id = hashlib.sha1(json.dumps(body, sort_keys=True).encode(), usedforsecurity=False).hexdigest()
        path = self._repo_dir(repo) / "commits" / f"{commit_id}.json"
        if not path.exists():
            self.atomic_write(path, json.dumps({"id": commit_id, **body}).encode())
        return _load_commit(path)

    # ---- commits ----------------------------------------------------------------------------------

    def commit(
        self,
        repo: RepoId,
        revision: str,
        operations: Iterable[Operation],
        *,
        title: str,
        message: str,
        author: str,
        parent_commit: str | None = None,
        create_pr: bool = False,
    ) -> tuple[Commit, int | None]:
        """Apply operations on top of a branch (or PR ref) and move it; returns the commit and PR number."""
        operations = list(operations)
        # Content first, outside the lock: blobs are content-addressed, so an orphan is harmless.
        entries = {
            op.path: self._store_blob(op.content) if isinstance(op, AddFile) else self._lfs_entry(op.oid, op.size)
            for op in operations
            if not isinstance(op, Delete)
        }
        with self._lock:
            refs = self.refs(repo)
            pull = _pull_number(revision)
            branch = revision.removeprefix("refs/heads/")
            if pull is not None and pull in refs.pulls and not create_pr:
                head = refs.pulls[pull]
            elif branch in refs.branches:
                head = refs.branches[branch]
            else:
                raise revision_not_found(revision)
            if parent_commit is None:
                base = head
            elif not create_pr:
                # The Hub's optimistic lock: refuse unless the branch still points at the parent.
                if not head.startswith(parent_commit.lower()):
                    raise HubError(412, "The branch was updated since you opened this page. Please refresh and try again.")
                base = head
            else:  # a PR may start from any ancestor
                found = (c.id for c in self.history(repo, head) if c.id.startswith(parent_commit.lower()))
                if (ancestor := next(found, None)) is None:
                    raise revision_not_found(parent_commit)
                base = ancestor
            tree = _apply(dict(self.commit_record(repo, base).tree), operations, entries)
            commit = self._write_commit(repo, base, tree, title, message, author)
            number = None
            if create_pr:
                number = refs.next_pull
                refs.pulls[number] = commit.id
                refs.next_pull += 1
            elif pull is not None and pull in refs.pulls:
                refs.pulls[pull] = commit.id
            else:
                refs.branches[branch] = commit.id
            self._write_refs(repo, refs)  # the single atomic step that publishes the commit
            return commit, number

    # ---- tags and branches ------------------------------------------------------------------------

    def create_tag(self, repo: RepoId, tag: str, revision: str, message: str) -> None:
        with self._lock:
            target = self.resolve(repo, revision)  # the Hub checks the revision before the name
            validate_ref_name(tag)
            refs = self.refs(repo)
            if tag in refs.tags:
                raise HubError(409, f"Reference refs/tags/{tag} already exists")
            refs.tags[tag] = {"target": target, "message": message}
            self._write_refs(repo, refs)

    def delete_tag(self, repo: RepoId, tag: str) -> None:
        with self._lock:
            refs = self.refs(repo)
            if refs.tags.pop(tag.removeprefix("refs/tags/"), None) is None:
                raise revision_not_found(tag)
            self._write_refs(repo, refs)

    def create_branch(self, repo: RepoId, branch: str, starting_point: str) -> None:
        validate_ref_name(branch)
        with self._lock:
            target = self.resolve(repo, starting_point)
            refs = self.refs(repo)
            if branch in refs.branches:
                raise HubError(409, f"Reference refs/heads/{branch} already exists")
            refs.branches[branch] = target
            self._write_refs(repo, refs)

    def delete_branch(self, repo: RepoId, branch: str) -> None:
        branch = branch.removeprefix("refs/heads/")
        with self._lock:
            refs = self.refs(repo)
            if branch == "main":
                raise HubError(403, "Cannot delete refs/heads/main: it is the default branch")
            if refs.branches.pop(branch, None) is None:
                raise revision_not_found(branch)
            self._write_refs(repo, refs)

    # ---- multipart uploads ------------------------------------------------------------------------

    def part_path(self, oid: str, size: int, chunk_size: int, number: int) -> Path:
        self.lfs_path(oid)  # validates the oid, which names a directory here
        return self.root / "uploads" / f"{oid}-{size}-{chunk_size}" / str(number)

    def assemble_parts(self, oid: str, size: int, chunk_size: int, etags: list[str]) -> None:
        """Concatenate uploaded parts into the LFS object, checking each part's etag and the whole sha256."""
        parts_dir = self.part_path(oid, size, chunk_size, 1).parent
        if self.lfs_size(oid) is None:
            writer = self.new_writer()
            try:
                for number, etag in enumerate(etags, start=1):
                    part = parts_dir / str(number)
                    if not part.exists():
                        raise HubError(400, f"Part {number} of {oid} was never uploaded")
                    part_sha = hashlib.sha256()
                    with part.open("rb") as f:
                        while chunk := f.read(1 << 20):
                            part_sha.update(chunk)
                            writer.write(chunk)
                    if part_sha.hexdigest() != etag.strip('"'):
                        raise HubError(400, f"Part {number} of {oid} does not match its etag")
                if writer.size != size or writer.hexdigest() != oid:
                    raise HubError(400, f"Assembled object does not match sha256 {oid} and size {size}")
            except BaseException:
                writer.discard()
                raise
            self.keep(writer, self.lfs_path(oid))
        shutil.rmtree(parts_dir, ignore_errors=True)


def _find_folded(folder: Path, name: str) -> str | None:
    """The entry of `folder` whose name equals `name` ignoring case, if any."""
    if (folder / name).exists():
        return name
    folded = name.casefold()
    with contextlib.suppress(OSError):
        return next((entry for entry in os.listdir(folder) if entry.casefold() == folded), None)
    return None


def _pull_number(revision: str) -> int | None:
    rest = revision.removeprefix("refs/pr/")
    return int(rest) if rest != revision and rest.isdigit() else None


def _apply(tree: dict[str, Entry], operations: list[Operation], entries: Mapping[str, Entry]) -> dict[str, Entry]:
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
