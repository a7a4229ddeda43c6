"""On-disk state of the local Hub: repos, commits, refs and content-addressed objects.

Layout under the root directory:

    objects/sha256/ab/cdef...        LFS object contents, addressed by their sha256
    objects/blob/ab/cdef...          regular file contents, addressed by their git blob sha1
    repos/<type>s/<ns>/<name>/
        repo.json                    visibility and creation date; written last, so it marks a whole repo
        commits/<id>.json            immutable commit records, tree inline
        refs.json                    branches, tags and PR refs: the only file that is ever overwritten
        lfs/ab/cdef...               (empty) this repo holds that LFS object: it was uploaded to this repo
    uploads/<repo>-<oid>-<size>-<chunk>/<n>  multipart parts waiting for their completion request

Over LFS the Hub keeps objects per repository: a repo holds the objects uploaded to it (and those its
commits point at), its LFS batch answers for those only, and a commit may point only at those. The bytes
are stored once (objects/), but another repo's upload never lets anyone skip an upload, learn that an oid
exists, or commit a pointer to bytes they never had (a private or gated repo's, read off a listing).
    secret                           key that signs LFS upload hrefs (kept so they survive a restart)
    server.lock                      held (flock) by the one server using this root
    .work-XXXXXXXX/                  this server's temp files (fs.py)

Every file is written whole (fs.py). A commit writes its blobs and its commit record first and rewrites
refs.json last, so a process killed at any point leaves each repo at either its old or its new state.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from release.localhub.errors import HubError, repo_not_found, revision_not_found
from release.localhub.fs import LockedRoot
from release.localhub.records import (
    SHA1_RE,
    SHA256_RE,
    AddFile,
    Commit,
    Delete,
    Entry,
    LfsInfo,
    Operation,
    Refs,
    RepoId,
    RepoMeta,
    RepoType,
    apply_operations,
    git_blob_sha1,
    lfs_pointer,
    now_iso,
    repo_id,
    validate_ref_name,
)

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

_SHORT_SHA_RE = re.compile(r"[0-9a-f]{7,39}")


@functools.lru_cache(maxsize=256)
def _load_commit(path: Path) -> Commit:
    # Commit files are immutable once renamed into place, so caching by path is safe.
    data = json.loads(path.read_bytes())
    tree = {p: Entry.from_json(e) for p, e in data["tree"].items()}
    return Commit(data["id"], data["parent"], tree, data["title"], data["message"], data["date"], data["author"])


class Storage:
    """The repos and objects under one root, which this server alone serves; repo and ref changes take one lock."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.fs = LockedRoot(self.root)  # a second server on this root stops here
        self._lock = threading.Lock()
        self.secret = self._load_secret()
        # The Xet store's answer to "which Xet file of this repo has this sha256" (xet/store.py), set by the app.
        self.xet_file_for: Callable[[RepoId, str], str | None] | None = None

    def close(self) -> None:
        """Remove this server's work folder and release the root."""
        self.fs.close()

    def _load_secret(self) -> bytes:
        path = self.root / "secret"
        if not path.exists():
            self.fs.atomic_write(path, base64.b64encode(secrets.token_bytes(32)))  # mkstemp makes it 0600
        return base64.b64decode(path.read_bytes())

    # ---- objects ----------------------------------------------------------------------------------

    def lfs_path(self, oid: str) -> Path:
        if not SHA256_RE.fullmatch(oid):
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
            self.fs.atomic_write(path, content)
        return Entry(len(content), oid)

    def held_size(self, repo: RepoId, oid: str) -> int | None:
        """The size of LFS object `oid` if `repo` holds it (uploaded to it, or pointed at by one of its refs'
        trees: roots written before repos kept their own), else None."""
        size = self.lfs_size(oid)  # validates the oid
        if size is None:
            return None
        if self._held_mark(repo, oid).exists():
            return size
        refs = self.refs(repo) if self.repo_meta(repo) is not None else None
        heads = (
            []
            if refs is None
            else [*refs.branches.values(), *(t["target"] for t in refs.tags.values()), *refs.pulls.values()]
        )
        if any(oid in _lfs_oids(self._repo_dir(repo) / "commits" / f"{head}.json") for head in heads):
            self.hold(repo, oid)
            return size
        return None

    def hold(self, repo: RepoId, oid: str) -> None:
        """Record that `repo` holds LFS object `oid` (its bytes were uploaded to it)."""
        if self.repo_meta(repo) is None:
            raise repo_not_found(repo.id)
        mark = self._held_mark(repo, oid)
        if not mark.exists():
            self.fs.atomic_write(mark, b"")

    def _held_mark(self, repo: RepoId, oid: str) -> Path:
        self.lfs_path(oid)  # validates the oid, which names the mark
        return self._repo_dir(repo) / "lfs" / oid[:2] / oid[2:]

    def _lfs_entry(self, repo: RepoId, oid: str, size: int | None) -> Entry:
        stored = self.held_size(repo, oid)
        if stored is None:
            raise HubError(422, f"LFS object {oid} was never uploaded to {repo.id}; upload it before committing")
        if size is not None and size != stored:
            raise HubError(422, f"LFS object {oid} has size {stored}, not {size}")
        pointer = lfs_pointer(oid, stored)
        xet_hash = self.xet_file_for(repo, oid) if self.xet_file_for else None
        return Entry(stored, git_blob_sha1(pointer), LfsInfo(oid, stored, len(pointer)), xet_hash)

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

    def repo_named(self, repo_type: str, namespace: str, name: str) -> RepoId:
        """The stored spelling of the repo a route or a request body names (its type checked)."""
        return self.canonical(repo_id(repo_type, namespace, name))

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
            self.fs.atomic_write(self._repo_dir(repo) / "repo.json", json.dumps(meta.to_json()).encode())

    def delete_repo(self, repo: RepoId) -> None:
        """Take the repo out of sight in one rename (its objects stay: they are shared by content)."""
        with self._lock:
            if self.repo_meta(repo) is None:
                raise repo_not_found(repo.id)
            self.fs.remove_dir(self._repo_dir(repo))

    def move_repo(self, source: RepoId, dest: RepoId) -> None:
        with self._lock:
            if self.repo_meta(source) is None:
                raise repo_not_found(source.id)
            if self.repo_meta(self.canonical(dest)) is not None:
                raise HubError(409, f"A {dest.type} repository called {dest.id} already exists")
            self.fs.move_dir(self._repo_dir(source), self._repo_dir(dest))

    def create_repo(self, repo: RepoId, *, private: bool, author: str) -> bool:
        """Create a repo with an initial commit on main; False if it already exists."""
        with self._lock:
            if self.repo_meta(repo) is not None:
                return False
            tree = {".gitattributes": self._store_blob(DEFAULT_GITATTRIBUTES.encode())}
            commit = self._write_commit(repo, None, tree, "initial commit", "", author)
            self._write_refs(repo, Refs(branches={"main": commit.id}))
            meta = RepoMeta(private, commit.date)
            self.fs.atomic_write(self._repo_dir(repo) / "repo.json", json.dumps(meta.to_json()).encode())
            return True

    def refs(self, repo: RepoId) -> Refs:
        return Refs.from_json(json.loads((self._repo_dir(repo) / "refs.json").read_bytes()))

    def _write_refs(self, repo: RepoId, refs: Refs) -> None:
        self.fs.atomic_write(self._repo_dir(repo) / "refs.json", json.dumps(refs.to_json(), indent=1).encode())

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
        if SHA1_RE.fullmatch(revision) and (self._repo_dir(repo) / "commits" / f"{revision}.json").exists():
            return revision
        if _SHORT_SHA_RE.fullmatch(revision):  # a short commit id, resolved when unambiguous, like git
            matches = [p.stem for p in (self._repo_dir(repo) / "commits").glob(f"{revision}*.json")]
            if len(matches) == 1:
                return matches[0]
        raise revision_not_found(revision)

    def commit_record(self, repo: RepoId, commit_id: str) -> Commit:
        return _load_commit(self._repo_dir(repo) / "commits" / f"{commit_id}.json")

    def commit_at(self, repo: RepoId, revision: str) -> Commit:
        return self.commit_record(repo, self.resolve(repo, revision))

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
            self.fs.atomic_write(path, json.dumps({"id": commit_id, **body}).encode())
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
            op.path: self._store_blob(op.content) if isinstance(op, AddFile) else self._lfs_entry(repo, op.oid, op.size)
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
                    raise HubError(
                        412, "The branch was updated since you opened this page. Please refresh and try again."
                    )
                base = head
            else:  # a PR may start from any ancestor
                found = (c.id for c in self.history(repo, head) if c.id.startswith(parent_commit.lower()))
                if (ancestor := next(found, None)) is None:
                    raise revision_not_found(parent_commit)
                base = ancestor
            tree = apply_operations(dict(self.commit_record(repo, base).tree), operations, entries)
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

    def part_path(self, repo: RepoId, oid: str, size: int, chunk_size: int, number: int) -> Path:
        self.lfs_path(oid)  # validates the oid, which names a directory here
        key = hashlib.sha1(f"{repo.type}/{repo.id}".encode(), usedforsecurity=False).hexdigest()[:16]
        return self.root / "uploads" / f"{key}-{oid}-{size}-{chunk_size}" / str(number)

    def assemble_parts(self, repo: RepoId, oid: str, size: int, chunk_size: int, etags: list[str]) -> None:
        """Concatenate the parts uploaded to `repo` into the LFS object, checking each part's etag and the whole
        sha256; the repo then holds it."""
        parts_dir = self.part_path(repo, oid, size, chunk_size, 1).parent
        # Assembled and hashed even when the bytes are stored already (for another repo): the repo holds the
        # object only once its own upload proved it has them.
        writer = self.fs.new_writer()
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
        self.fs.keep(writer, self.lfs_path(oid))  # leaves an object already stored as it is
        self.hold(repo, oid)
        shutil.rmtree(parts_dir, ignore_errors=True)


@functools.lru_cache(maxsize=256)
def _lfs_oids(commit_path: Path) -> frozenset[str]:
    """The LFS objects a commit's tree points at (commit files are immutable: cached by path)."""
    if not commit_path.exists():
        return frozenset()
    return frozenset(e.lfs.oid for e in _load_commit(commit_path).tree.values() if e.lfs)


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
