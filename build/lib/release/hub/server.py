"""A local, Hub-compatible HTTP server that the real `huggingface_hub` client can publish to.

It speaks the subset of the Hub API that `huggingface_hub` uses to create repos, upload (preupload,
LFS batch with basic and multipart transfers, NDJSON commits), tag, list and download, over plain
LFS: it offers no Xet storage, so clients must run with `HF_HUB_DISABLE_XET=1`.

Paths are routed from the raw request path, segment by segment, because revisions and file paths
arrive percent-encoded (`refs%2Fpr%2F1`) and must not be split on their encoded slashes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import math
import re
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, quote, unquote

import yaml
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from .faults import FaultMiddleware, FaultPlan, FaultState
from .storage import (
    REPO_TYPES,
    AddFile,
    AddLfsFile,
    Commit,
    Delete,
    Entry,
    HubError,
    ObjectWriter,
    Operation,
    RepoId,
    RepoMeta,
    RepoType,
    Storage,
    directory_oids,
    repo_not_found,
    validate_path,
)

MiB = 1024 * 1024
LFS_SIZE_THRESHOLD = 10 * MiB  # what the Hub sends to LFS whatever its name or content
MAX_COMMIT_BODY = 512 * MiB  # regular files travel base64 inside the commit; LFS content never does
TICKET_LIFETIME = 24 * 3600
LFS_JSON = "application/vnd.git-lfs+json"
BAD_CREDENTIALS = "Invalid credentials in Authorization header"  # the client keys off this exact text
XET_UNAVAILABLE = "This server offers no Xet storage; upload over LFS (set HF_HUB_DISABLE_XET=1)."
_FRONT_MATTER = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")
_SHA256 = re.compile(r"[0-9a-f]{64}")

Handler = Callable[[Request], Awaitable[Response]]
logger = logging.getLogger(__name__)


@dataclass
class HubStats:
    """Counters tests read from `app.state.stats`. Only the event loop thread updates them."""

    requests: Counter[str] = field(default_factory=Counter)  # "METHOD route" -> count
    upload_bytes: Counter[str] = field(default_factory=Counter)  # LFS oid -> bytes received, all attempts
    commits: int = 0
    faults: Counter[str] = field(default_factory=Counter)  # fault kind -> times fired


@dataclass(frozen=True)
class _Ticket:
    """What a signed LFS upload href authorizes: one object of one size, cut in one chunk size."""

    oid: str
    size: int
    chunk_size: int

    @property
    def parts(self) -> int:
        return math.ceil(self.size / self.chunk_size)

    def part_size(self, number: int) -> int:
        return min(self.chunk_size, self.size - (number - 1) * self.chunk_size)


def create_app(
    root: Path,
    tokens: Mapping[str, str],
    faults: FaultPlan | None = None,
    *,
    username: str = "local-user",
    multipart_chunk_size: int = 64 * MiB,
    tree_page_size: int = 1000,
    commits_page_size: int = 50,
) -> Starlette:
    """Build the Hub app over `root`. `tokens` maps each accepted token to its role, "read" or "write"."""
    bad_roles = {role for role in tokens.values() if role not in ("read", "write")}
    if bad_roles:
        raise ValueError(f"token roles must be 'read' or 'write', not {sorted(bad_roles)}")
    stats = HubStats()
    fault_state = FaultState(faults or FaultPlan(), stats.faults)
    hub = _Hub(Storage(root), dict(tokens), username, multipart_chunk_size, tree_page_size, commits_page_size, stats)
    app = Starlette(
        routes=[Route("/{path:path}", hub.dispatch, methods=["GET", "HEAD", "POST", "PUT", "DELETE"])],
        middleware=[Middleware(FaultMiddleware, state=fault_state)],
        exception_handlers={Exception: _internal_error},
    )
    app.state.stats = stats
    return app


async def _internal_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "Internal server error"}, status_code=500)


def _error(err: HubError) -> Response:
    # Header values must be latin-1 and single-line; messages may quote paths in any script.
    safe = err.message.encode("ascii", "backslashreplace").decode().replace("\r", " ").replace("\n", " ")
    headers = {**err.headers, "X-Error-Message": safe}
    if err.code:
        headers["X-Error-Code"] = err.code
    return JSONResponse({"error": err.message}, status_code=err.status, headers=headers)


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "yes")


def _front_matter(text: str) -> tuple[Any, str | None]:
    """The YAML block at the top of a README, parsed: (data, None) or (None, error message)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, None
    try:
        return yaml.safe_load(match.group(2)), None
    except yaml.YAMLError as exc:
        return None, f"Invalid YAML in README.md metadata: {exc}"


def _metadata_errors(text: str) -> list[str]:
    data, error = _front_matter(text)
    if error:
        return [error]
    if data is not None and not isinstance(data, dict):
        return ["README.md metadata must be a YAML mapping"]
    return [f'"{key}" must not be null' for key in _null_keys(data, "")]


def _null_keys(node: Any, where: str) -> Iterator[str]:
    if node is None and where:
        yield where
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _null_keys(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _null_keys(value, f"{where}[{i}]")


def _lfs_patterns(gitattributes: str) -> list[str]:
    return [line.split()[0] for line in gitattributes.splitlines() if "filter=lfs" in line.split()[1:]]


def _matches_gitattributes(pattern: str, path: str) -> bool:
    if "/" not in pattern:  # like git: a bare pattern matches the name at any depth
        return fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    pattern = pattern.lstrip("/")
    return fnmatchcase(path, pattern) or fnmatchcase(path, pattern.replace("**/", ""))


class _Hub:
    def __init__(
        self,
        storage: Storage,
        tokens: dict[str, str],
        username: str,
        chunk_size: int,
        tree_page_size: int,
        commits_page_size: int,
        stats: HubStats,
    ) -> None:
        self.storage = storage
        self.tokens = tokens
        self.username = username
        self.chunk_size = chunk_size
        self.tree_page_size = tree_page_size
        self.commits_page_size = commits_page_size
        self.stats = stats

    # ---- routing ----------------------------------------------------------------------------------

    async def dispatch(self, request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.scope["path"].encode()
        segments = [unquote(s) for s in raw.decode("utf-8", "replace").split("/")[1:]]
        if segments and segments[-1] == "":
            segments.pop()
        try:
            name, handlers = self._route(segments)
            method = "GET" if request.method == "HEAD" else request.method
            if method not in handlers:
                raise HubError(405, f"Method {request.method} not allowed here")
            self.stats.requests[f"{request.method} {name}"] += 1
            return await handlers[method](request)
        except HubError as err:
            return _error(err)
        except Exception:  # noqa: BLE001 - answer 500 and keep the connection orderly
            # Starlette's Exception handler re-raises after answering, and uvicorn then resets the
            # connection, which can reach the client before the 500 does. The state on disk is safe:
            # a failed commit never moved its ref.
            logger.exception("internal error on %s %s", request.method, request.url.path)
            return JSONResponse({"error": "Internal server error"}, status_code=500)

    def _route(self, seg: list[str]) -> tuple[str, dict[str, Handler]]:
        match seg:
            case ["api", "whoami-v2"]:
                return "whoami", {"GET": self.whoami}
            case ["api", "repos", "create"]:
                return "create_repo", {"POST": self.create_repo}
            case ["api", "validate-yaml"]:
                return "validate_yaml", {"POST": self.validate_yaml}
            case ["api", "models" | "datasets" | "spaces" as kind, namespace, name, *rest]:
                return self._api_route(_repo_id(kind.removesuffix("s"), namespace, name), rest)
            case ["_lfs", ticket]:
                return "lfs_object", {
                    "PUT": partial(self.upload, ticket=ticket),
                    "POST": partial(self.complete, ticket=ticket),
                }
            case ["_lfs", ticket, part]:
                return "lfs_part", {"PUT": partial(self.upload_part, ticket=ticket, part=part)}
        repo_type = "model"
        if seg and seg[0] in ("datasets", "spaces"):
            repo_type, seg = seg[0].removesuffix("s"), seg[1:]
        match seg:
            case [namespace, git_name, "info", "lfs", "objects", "batch"] if git_name.endswith(".git"):
                repo = _repo_id(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_batch", {"POST": partial(self.lfs_batch, repo=repo)}
            case [namespace, git_name, "info", "lfs", "objects", "verify"] if git_name.endswith(".git"):
                repo = _repo_id(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_verify", {"POST": partial(self.lfs_verify, repo=repo)}
            case [namespace, name, "resolve", revision, *path] if path:
                repo = _repo_id(repo_type, namespace, name)
                return "resolve", {"GET": partial(self.resolve, repo=repo, revision=revision, path="/".join(path))}
        raise HubError(404, "Not found")

    def _api_route(self, repo: RepoId, rest: list[str]) -> tuple[str, dict[str, Handler]]:
        action, tail = (rest[0], rest[1:]) if rest else ("", [])
        revision = "/".join(tail)  # tolerate revisions sent with unencoded slashes
        match action:
            case "" if not tail:
                return "info", {"GET": partial(self.info, repo=repo, revision="main")}
            case "revision" if revision:
                return "info", {"GET": partial(self.info, repo=repo, revision=revision)}
            case "tree" if tail:
                return "tree", {"GET": partial(self.tree, repo=repo, revision=tail[0], path="/".join(tail[1:]))}
            case "refs" if not tail:
                return "refs", {"GET": partial(self.refs, repo=repo)}
            case "commits":
                return "commits", {"GET": partial(self.commits, repo=repo, revision=revision or "main")}
            case "preupload" if revision:
                return "preupload", {"POST": partial(self.preupload, repo=repo, revision=revision)}
            case "commit" if revision:
                return "commit", {"POST": partial(self.commit, repo=repo, revision=revision)}
            case "paths-info" if revision:
                return "paths_info", {"POST": partial(self.paths_info, repo=repo, revision=revision)}
            case "tag" if revision:
                # POST names the revision to tag, DELETE names the tag.
                return "tag", {
                    "POST": partial(self.create_tag, repo=repo, revision=revision),
                    "DELETE": partial(self.delete_tag, repo=repo, tag=revision),
                }
            case "branch" if revision:
                return "branch", {
                    "POST": partial(self.create_branch, repo=repo, branch=revision),
                    "DELETE": partial(self.delete_branch, repo=repo, branch=revision),
                }
            case "xet-write-token" | "xet-read-token":
                return "xet", {"GET": self.no_xet}
        raise HubError(404, "Not found")

    # ---- auth -------------------------------------------------------------------------------------

    def _role(self, request: Request) -> str | None:
        """The caller's role, None if anonymous; a token we do not know is a 401 on every route."""
        header = request.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        role = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if role is None:
            raise HubError(401, BAD_CREDENTIALS)
        return role

    def _require_role(self, request: Request) -> str:
        role = self._role(request)
        if role is None:
            raise HubError(401, BAD_CREDENTIALS)
        return role

    def _writable(self, request: Request, repo: RepoId | None = None) -> None:
        if self._require_role(request) != "write":
            raise HubError(403, "This token is read-only: write access is required")
        if repo is not None and self.storage.repo_meta(repo) is None:
            raise repo_not_found(repo.id)

    def _readable(self, request: Request, repo: RepoId) -> RepoMeta:
        role = self._role(request)
        meta = self.storage.repo_meta(repo)
        if meta is None or (meta.private and role is None):
            raise repo_not_found(repo.id)  # like the Hub, never confirm a private repo exists
        return meta

    def _commit_at(self, repo: RepoId, revision: str) -> Commit:
        return self.storage.commit_record(repo, self.storage.resolve(repo, revision))

    # ---- account and repos ------------------------------------------------------------------------

    async def whoami(self, request: Request) -> Response:
        role = self._require_role(request)
        return JSONResponse(
            {
                "type": "user",
                "name": self.username,
                "fullname": self.username,
                "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": f"local {role}", "role": role}},
            }
        )

    async def create_repo(self, request: Request) -> Response:
        self._writable(request)
        body = await _json_body(request)
        repo_type = body.get("type") or "model"
        repo = _repo_id(str(repo_type), str(body.get("organization") or self.username), str(body.get("name", "")))
        private = body.get("visibility", "public") == "private" or body.get("private") is True
        url = f"{_base(request)}/{repo.url_prefix}{repo.id}"
        created = await run_in_threadpool(self.storage.create_repo, repo, private=private, author=self.username)
        if not created:
            return JSONResponse({"error": f"You already created this {repo_type} repo", "url": url}, status_code=409)
        return JSONResponse({"url": url, "name": repo.id})

    async def validate_yaml(self, request: Request) -> Response:
        self._require_role(request)
        body = await _json_body(request)
        errors = _metadata_errors(str(body.get("content", "")))
        return JSONResponse(
            {"errors": [{"message": e} for e in errors], "warnings": []}, status_code=400 if errors else 200
        )

    async def no_xet(self, request: Request) -> Response:
        return JSONResponse({"error": XET_UNAVAILABLE}, status_code=501, headers={"X-Error-Message": XET_UNAVAILABLE})

    # ---- reading ----------------------------------------------------------------------------------

    async def info(self, request: Request, repo: RepoId, revision: str) -> Response:
        meta = self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        with_blobs = _truthy(request.query_params.get("blobs"))
        siblings = []
        for path in sorted(commit.tree):
            entry = commit.tree[path]
            sibling: dict[str, Any] = {"rfilename": path}
            if with_blobs:
                sibling |= {"size": entry.size, "blobId": entry.oid}
                if entry.lfs:
                    sibling["lfs"] = {
                        "sha256": entry.lfs.oid,
                        "size": entry.lfs.size,
                        "pointerSize": entry.lfs.pointer_size,
                    }
            siblings.append(sibling)
        card = self._card_data(commit)
        data: dict[str, Any] = {
            "_id": hashlib.sha1(f"{repo.type}/{repo.id}".encode(), usedforsecurity=False).hexdigest()[:24],
            "id": repo.id,
            "author": repo.namespace,
            "sha": commit.id,
            "lastModified": commit.date,
            "createdAt": meta.created_at,
            "private": meta.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": _card_tags(card),
            "siblings": siblings,
        }
        if repo.type == "model":
            data["modelId"] = repo.id
        if card:
            data["cardData"] = card
            for key in ("library_name", "pipeline_tag"):
                if isinstance(card.get(key), str):
                    data[key] = card[key]
        return JSONResponse(data)

    def _card_data(self, commit: Commit) -> dict[str, Any] | None:
        entry = commit.tree.get("README.md")
        if entry is None or entry.lfs is not None:
            return None
        data, _ = _front_matter(self.storage.read_blob(entry).decode("utf-8", "replace"))
        return data if isinstance(data, dict) else None

    async def tree(self, request: Request, repo: RepoId, revision: str, path: str) -> Response:
        self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        folder = path.strip("/")
        dirs = directory_oids(commit.tree)
        if folder and folder not in dirs:
            raise HubError(
                404, f"{path} is not a folder at revision {revision}", "EntryNotFound", {"X-Repo-Commit": commit.id}
            )
        recursive = _truthy(request.query_params.get("recursive"))
        prefix = f"{folder}/" if folder else ""

        def listed(p: str) -> bool:
            return p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])

        paths = sorted([p for p in commit.tree if listed(p)] + [d for d in dirs if listed(d)])
        cursor = request.query_params.get("cursor")
        start = bisect_right(paths, _unb64(cursor)) if cursor else 0
        page = paths[start : start + self.tree_page_size]
        headers = {}
        if start + self.tree_page_size < len(paths):
            # Later pages are pinned to the commit, so a branch moving mid-listing cannot mix trees.
            folder_part = f"/{quote(folder, safe='')}" if folder else ""
            next_url = (
                f"{_base(request)}/api/{repo.type}s/{repo.id}/tree/{commit.id}{folder_part}"
                f"?recursive={str(recursive).lower()}&cursor={_b64(page[-1])}"
            )
            headers["Link"] = f'<{next_url}>; rel="next"'
        entries = [_path_info(p, commit.tree.get(p), dirs) for p in page]
        return JSONResponse(entries, headers=headers)

    async def paths_info(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        dirs = directory_oids(commit.tree)
        found = []
        for path in dict.fromkeys(p.strip("/") for p in form.get("paths", [])):
            if path in commit.tree or path in dirs:
                found.append(_path_info(path, commit.tree.get(path), dirs))
        return JSONResponse(found)

    async def commits(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._readable(request, repo)
        head = self.storage.resolve(repo, revision)
        try:
            page_number = int(request.query_params.get("p", "0"))
        except ValueError as exc:
            raise HubError(400, "p must be a page number") from exc
        if page_number < 0:
            raise HubError(400, "p must be a page number")
        start = page_number * self.commits_page_size
        window = list(islice(self.storage.history(repo, head), start, start + self.commits_page_size + 1))
        headers = {}
        if len(window) > self.commits_page_size:
            next_url = f"{_base(request)}/api/{repo.type}s/{repo.id}/commits/{head}?p={page_number + 1}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        items = [
            {"id": c.id, "title": c.title, "message": c.message, "date": c.date, "authors": [{"user": c.author}]}
            for c in window[: self.commits_page_size]
        ]
        return JSONResponse(items, headers=headers)

    async def refs(self, request: Request, repo: RepoId) -> Response:
        self._readable(request, repo)
        refs = self.storage.refs(repo)
        data: dict[str, Any] = {
            "branches": [
                {"name": n, "ref": f"refs/heads/{n}", "targetCommit": c} for n, c in sorted(refs.branches.items())
            ],
            "converts": [],
            "tags": [
                {"name": n, "ref": f"refs/tags/{n}", "targetCommit": t["target"]} for n, t in sorted(refs.tags.items())
            ],
        }
        if _truthy(request.query_params.get("include_prs")):
            data["pullRequests"] = [
                {"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": c}
                for n, c in sorted(refs.pulls.items())
            ]
        return JSONResponse(data)

    async def resolve(self, request: Request, repo: RepoId, revision: str, path: str) -> Response:
        self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        headers = {"X-Repo-Commit": commit.id}
        entry = commit.tree.get(path)
        if entry is None:
            raise HubError(404, f"Entry not found: {path} at revision {revision}", "EntryNotFound", headers)
        if entry.lfs:
            etag = f'"{entry.lfs.oid}"'
            headers |= {"ETag": etag, "X-Linked-Etag": etag, "X-Linked-Size": str(entry.size)}
        else:
            headers["ETag"] = f'"{entry.oid}"'
        requested = _RANGE.fullmatch(request.headers.get("range", ""))
        if requested and int(requested.group(1)) >= entry.size:
            raise HubError(
                416, "Requested range not satisfiable", headers=headers | {"Content-Range": f"bytes */{entry.size}"}
            )
        # FileResponse streams from disk and answers HEAD and Range (206 + Content-Range) itself.
        return FileResponse(self.storage.content_path(entry), headers=headers, media_type="application/octet-stream")

    # ---- writing ----------------------------------------------------------------------------------

    async def preupload(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._writable(request, repo)
        files = (await _json_body(request)).get("files")
        if not isinstance(files, list):
            raise HubError(400, "files must be a list")
        try:
            tree = self._commit_at(repo, revision).tree
        except HubError as err:
            if err.code != "RevisionNotFound":
                raise
            tree = {}  # a branch that does not exist yet has no files to compare with
        attributes = tree.get(".gitattributes")
        patterns = _lfs_patterns(self.storage.read_blob(attributes).decode("utf-8", "replace")) if attributes else []
        answers = []
        for item in files:
            path = validate_path(item.get("path") if isinstance(item, dict) else None)
            try:
                sample = base64.b64decode(item.get("sample", ""), validate=True)
                size = int(item.get("size", 0))
            except (binascii.Error, TypeError, ValueError) as exc:
                raise HubError(400, f"Invalid sample or size for {path}") from exc
            lfs = (
                size >= LFS_SIZE_THRESHOLD
                or b"\0" in sample  # git's own test for binary content
                or any(_matches_gitattributes(p, path) for p in patterns)
            )
            remote = tree.get(path)
            answers.append(
                {
                    "path": path,
                    "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False,
                    "oid": remote.remote_oid if remote else None,
                }
            )
        return JSONResponse({"files": answers})

    async def commit(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._writable(request, repo)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_COMMIT_BODY:
                raise HubError(413, "Commit payload too large: send large files through LFS")
        header, operations = _parse_commit(bytes(body))
        create_pr = _truthy(request.query_params.get("create_pr"))
        commit, pull = await run_in_threadpool(
            partial(
                self.storage.commit,
                repo,
                revision,
                operations,
                title=header["summary"],
                message=str(header.get("description") or ""),
                author=self.username,
                parent_commit=header.get("parentCommit"),
                create_pr=create_pr,
            )
        )
        self.stats.commits += 1
        repo_url = f"{_base(request)}/{repo.url_prefix}{repo.id}"
        data: dict[str, Any] = {
            "success": True,
            "commitOid": commit.id,
            "commitUrl": f"{repo_url}/commit/{commit.id}",
            "hookOutput": "",
        }
        if pull is not None:
            data["pullRequestUrl"] = f"{repo_url}/discussions/{pull}"
        return JSONResponse(data)

    async def create_tag(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._writable(request, repo)
        body = await _json_body(request)
        tag = body.get("tag")
        if not isinstance(tag, str):
            raise HubError(400, "tag must be a string")
        message = str(body.get("message") or "")
        await run_in_threadpool(self.storage.create_tag, repo, tag, revision, message)
        return JSONResponse({})

    async def delete_tag(self, request: Request, repo: RepoId, tag: str) -> Response:
        self._writable(request, repo)
        await run_in_threadpool(self.storage.delete_tag, repo, tag)
        return JSONResponse({})

    async def create_branch(self, request: Request, repo: RepoId, branch: str) -> Response:
        self._writable(request, repo)
        body = await _json_body(request) if await request.body() else {}
        starting_point = str(body.get("startingPoint") or "main")
        await run_in_threadpool(self.storage.create_branch, repo, branch, starting_point)
        return JSONResponse({})

    async def delete_branch(self, request: Request, repo: RepoId, branch: str) -> Response:
        self._writable(request, repo)
        await run_in_threadpool(self.storage.delete_branch, repo, branch)
        return JSONResponse({})

    # ---- LFS --------------------------------------------------------------------------------------

    async def lfs_batch(self, request: Request, repo: RepoId) -> Response:
        self._writable(request, repo)
        body = await _json_body(request)
        if body.get("operation") != "upload":
            raise HubError(422, "Only the upload operation is supported")
        objects = body.get("objects")
        if not isinstance(objects, list):
            raise HubError(422, "objects must be a list")
        base = _base(request)
        verify_href = f"{base}/{repo.url_prefix}{repo.id}.git/info/lfs/objects/verify"
        answers = [self._batch_answer(obj, base, verify_href) for obj in objects]
        multipart = any("header" in answer.get("actions", {}).get("upload", {}) for answer in answers)
        data = {"transfer": "multipart" if multipart else "basic", "objects": answers, "hash_algo": "sha256"}
        return JSONResponse(data, media_type=LFS_JSON)

    def _batch_answer(self, obj: object, base: str, verify_href: str) -> dict[str, Any]:
        oid, size = (obj.get("oid"), obj.get("size")) if isinstance(obj, dict) else (None, None)
        if not isinstance(oid, str) or not _SHA256.fullmatch(oid) or not isinstance(size, int) or size < 0:
            return _batch_error(oid, size, "oid must be a sha256 hex digest and size a non-negative integer")
        stored = self.storage.lfs_size(oid)
        if stored == size:
            return {"oid": oid, "size": size}  # no actions: already stored, the client skips it
        if stored is not None:
            return _batch_error(oid, size, f"object {oid} is stored with size {stored}")
        ticket = _Ticket(oid, size, self.chunk_size)
        href = f"{base}/_lfs/{self._sign(ticket)}"
        upload: dict[str, Any] = {"href": href}
        if size > self.chunk_size:
            # Multipart: numbered part URLs in the header; the href itself takes the completion POST.
            parts = {str(n): f"{href}/{n}" for n in range(1, ticket.parts + 1)}
            upload["header"] = {"chunk_size": str(self.chunk_size), **parts}
        return {"oid": oid, "size": size, "actions": {"upload": upload, "verify": {"href": verify_href}}}

    async def lfs_verify(self, request: Request, repo: RepoId) -> Response:
        self._writable(request, repo)
        body = await _json_body(request)
        oid, size = body.get("oid"), body.get("size")
        if not isinstance(oid, str) or self.storage.lfs_size(oid) != size:
            raise HubError(404, f"Object {oid} of size {size} is not stored")
        return JSONResponse({"oid": oid, "size": size}, media_type=LFS_JSON)

    def _sign(self, ticket: _Ticket) -> str:
        payload = {"o": ticket.oid, "s": ticket.size, "c": ticket.chunk_size, "x": int(time.time()) + TICKET_LIFETIME}
        raw = _b64(json.dumps(payload, separators=(",", ":")))
        return f"{raw}.{self._mac(raw)}"

    def _mac(self, raw: str) -> str:
        return hmac.new(self.storage.secret, raw.encode(), hashlib.sha256).hexdigest()[:32]

    def _ticket(self, signed: str) -> _Ticket:
        """Upload hrefs carry no Authorization header: the signed ticket in the URL is the authority."""
        raw, _, mac = signed.partition(".")
        if not hmac.compare_digest(mac, self._mac(raw)):
            raise HubError(403, "Invalid upload URL")
        payload = json.loads(_unb64(raw))
        if payload["x"] < time.time():
            raise HubError(403, "Expired upload URL: ask the LFS batch endpoint for a new one")
        return _Ticket(payload["o"], payload["s"], payload["c"])

    async def _receive(self, request: Request, oid: str, expected_size: int) -> ObjectWriter:
        """Stream a request body into a temp file, hashing as it goes; refuse more bytes than announced."""
        writer = self.storage.new_writer()
        try:
            async for chunk in request.stream():
                writer.write(chunk)
                self.stats.upload_bytes[oid] += len(chunk)
                if writer.size > expected_size:
                    raise HubError(400, f"Upload is larger than the announced {expected_size} bytes")
            if writer.size != expected_size:
                raise HubError(400, f"Upload has {writer.size} bytes, not the announced {expected_size}")
        except BaseException:
            writer.discard()
            raise
        return writer

    async def upload(self, request: Request, ticket: str) -> Response:
        t = self._ticket(ticket)
        writer = await self._receive(request, t.oid, t.size)
        if writer.hexdigest() != t.oid:
            writer.discard()
            raise HubError(400, f"sha256 mismatch: the uploaded content is not {t.oid}")
        await run_in_threadpool(self.storage.keep, writer, self.storage.lfs_path(t.oid))
        return JSONResponse({})

    async def upload_part(self, request: Request, ticket: str, part: str) -> Response:
        t = self._ticket(ticket)
        if not part.isdigit() or not 1 <= int(part) <= t.parts:
            raise HubError(400, f"Part number must be between 1 and {t.parts}")
        number = int(part)
        writer = await self._receive(request, t.oid, t.part_size(number))
        etag = writer.hexdigest()
        dest = self.storage.part_path(t.oid, t.size, t.chunk_size, number)
        await run_in_threadpool(partial(self.storage.keep, writer, dest, overwrite=True))
        return JSONResponse({}, headers={"ETag": f'"{etag}"'})

    async def complete(self, request: Request, ticket: str) -> Response:
        t = self._ticket(ticket)
        body = await _json_body(request)
        parts = body.get("parts")
        if body.get("oid") != t.oid or not isinstance(parts, list):
            raise HubError(400, "Completion must name the ticket's oid and list its parts")
        try:
            ordered = sorted((int(p["partNumber"]), str(p["etag"])) for p in parts)
        except (KeyError, TypeError, ValueError) as exc:
            raise HubError(400, "Each part needs a partNumber and an etag") from exc
        if [n for n, _ in ordered] != list(range(1, t.parts + 1)):
            raise HubError(400, f"Expected parts 1 to {t.parts}")
        etags = [etag for _, etag in ordered]
        await run_in_threadpool(self.storage.assemble_parts, t.oid, t.size, t.chunk_size, etags)
        return JSONResponse({})


def _repo_id(repo_type: str, namespace: str, name: str) -> RepoId:
    if repo_type not in REPO_TYPES:
        raise HubError(400, f"Invalid repo type: {repo_type!r}")
    return RepoId(cast(RepoType, repo_type), namespace, name)


def _batch_error(oid: object, size: object, message: str) -> dict[str, Any]:
    return {"oid": str(oid), "size": size if isinstance(size, int) else 0, "error": {"code": 422, "message": message}}


def _path_info(path: str, entry: Entry | None, dirs: Mapping[str, str]) -> dict[str, Any]:
    if entry is None:
        return {"type": "directory", "oid": dirs[path], "size": 0, "path": path}
    info: dict[str, Any] = {"type": "file", "oid": entry.oid, "size": entry.size, "path": path}
    if entry.lfs:
        info["lfs"] = {"oid": entry.lfs.oid, "size": entry.lfs.size, "pointerSize": entry.lfs.pointer_size}
    return info


def _card_tags(card: Mapping[str, Any] | None) -> list[str]:
    if not card:
        return []
    tags = [t for t in card.get("tags") or [] if isinstance(t, str)] if isinstance(card.get("tags"), list) else []
    if isinstance(card.get("library_name"), str):
        tags.append(card["library_name"])
    if isinstance(card.get("license"), str):
        tags.append(f"license:{card['license']}")
    return tags


def _parse_commit(body: bytes) -> tuple[dict[str, Any], list[Operation]]:
    header: dict[str, Any] | None = None
    operations: list[Operation] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            key, value = item["key"], item["value"]
        except (ValueError, TypeError, KeyError) as exc:
            raise HubError(400, f"Line {number} of the commit is not a {{key, value}} JSON object") from exc
        if not isinstance(value, dict):
            raise HubError(400, f"Line {number} of the commit has no value object")
        if key == "header":
            header = value
        elif key == "file":
            path = validate_path(value.get("path"))
            content = value.get("content", "")
            try:
                if value.get("encoding", "base64") == "base64":
                    data = base64.b64decode(content, validate=True)
                else:
                    data = str(content).encode()
            except (binascii.Error, TypeError, ValueError) as exc:
                raise HubError(400, f"Content of {path} is not valid base64") from exc
            operations.append(AddFile(path, data))
        elif key == "lfsFile":
            path = validate_path(value.get("path"))
            size = value.get("size")
            if value.get("algo", "sha256") != "sha256" or not isinstance(value.get("oid"), str):
                raise HubError(400, f"LFS file {path} needs a sha256 oid")
            if size is not None and not isinstance(size, int):
                raise HubError(400, f"LFS file {path} has a non-integer size")
            operations.append(AddLfsFile(path, value["oid"], size))
        elif key in ("deletedFile", "deletedFolder"):
            raw = value.get("path")
            path = validate_path(raw.rstrip("/") if isinstance(raw, str) else raw)
            operations.append(Delete(path, folder=key == "deletedFolder"))
        else:
            raise HubError(400, f"Unknown commit operation {key!r} on line {number}")
    if header is None or not isinstance(header.get("summary"), str) or not header["summary"].strip():
        raise HubError(400, "A commit needs a header line with a non-empty summary")
    parent = header.get("parentCommit")
    if parent is not None and not (isinstance(parent, str) and re.fullmatch(r"[0-9a-fA-F]{5,40}", parent)):
        raise HubError(400, "parentCommit must be a commit id")
    return header, operations


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError as exc:
        raise HubError(400, "Request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise HubError(400, "Request body must be a JSON object")
    return data


def _base(request: Request) -> str:
    """The URL the client reached us at: hrefs we hand out must be absolute and come back here."""
    return str(request.base_url).rstrip("/")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def _unb64(text: str) -> str:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise HubError(400, "Malformed cursor or upload URL") from exc
