"""A local, Hub-compatible HTTP server that the real `huggingface_hub` client can publish to.

It speaks the subset of the Hub API that `huggingface_hub` uses to create repos, upload (preupload,
LFS batch with basic and multipart transfers, NDJSON commits), tag, list and download, over plain
LFS: it offers no Xet storage, so clients must run with `HF_HUB_DISABLE_XET=1`.

Paths are routed from the raw request path, segment by segment, because revisions and file paths
arrive percent-encoded (`refs%2Fpr%2F1`) and must not be split on their encoded slashes.
"""

from __future__ import annotations

import html
import logging
import re
import uuid
from bisect import bisect_right
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from .faults import FaultMiddleware, FaultPlan, FaultState
from .gitignore import MAX_GITIGNORE, ignored_paths
from .lfs import LfsTransfers
from .metadata import front_matter, validate_card
from .storage import (
    AddFile,
    Commit,
    HubError,
    RepoId,
    RepoMeta,
    RepoType,
    Storage,
    directory_oids,
    repo_not_found,
    validate_path,
)
from .wire import (
    MAX_CARD_BODY,
    MAX_COMMIT_BODY,
    MAX_JSON_BODY,
    MAX_LISTED,
    MAX_PATHS_INFO,
    MAX_PREUPLOAD_FILES,
    MiB,
    b64,
    base_url,
    bounded_body,
    card_tags,
    error_response,
    html_paragraphs,
    json_body,
    lfs_patterns,
    listed,
    matches_gitattributes,
    parse_commit,
    path_info,
    repo_id,
    sample_and_size,
    truthy,
    unb64,
)

LFS_SIZE_THRESHOLD = 10 * MiB  # what the Hub sends to LFS whatever its name or content
MAX_LAST_COMMIT_WALK = 1000  # commits walked to find a path's last commit (expand=true)
BAD_CREDENTIALS = "Invalid credentials in Authorization header"  # the client keys off this exact text
FORBIDDEN_READ_TOKEN = "You have read access but not the required permissions for this operation."
# Every response carries this header, so a client (push, demo) can tell it rehearsed against the
# local Hub and say that Xet was not exercised.
LOCAL_HUB_HEADER = "X-Local-Hub"
LOCAL_HUB_VALUE = "hf-release; xet=unavailable"
XET_UNAVAILABLE = "This server offers no Xet storage; upload over LFS (set HF_HUB_DISABLE_XET=1)."
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")

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
class Account:
    """Who a token acts as. `orgs=None` (a one-user rehearsal) may write in every namespace; otherwise
    only in its own name and its orgs', as on the Hub."""

    name: str
    role: str = "write"  # "read" or "write"
    orgs: Mapping[str, str] | None = None  # org name -> its full name
    fullname: str = ""

    def member_of(self, namespace: str) -> bool:
        return self.orgs is None or namespace.lower() in {self.name.lower(), *(o.lower() for o in self.orgs)}


def create_app(
    root: Path,
    tokens: Mapping[str, str | Account],
    faults: FaultPlan | None = None,
    *,
    username: str = "local-user",
    multipart_chunk_size: int = 64 * MiB,
    tree_page_size: int = 1000,
    commits_page_size: int = 50,
) -> Starlette:
    """Build the Hub app over `root`. `tokens` maps each accepted token to its role ("read" or "write",
    acting as `username` in every namespace) or to an `Account`."""
    accounts = {t: a if isinstance(a, Account) else Account(username, a) for t, a in tokens.items()}
    bad_roles = {account.role for account in accounts.values() if account.role not in ("read", "write")}
    if bad_roles:
        raise ValueError(f"token roles must be 'read' or 'write', not {sorted(bad_roles)}")
    stats = HubStats()
    fault_state = FaultState(faults or FaultPlan(), stats.faults)
    storage = Storage(root)  # takes the root's lock: a second server on it stops here
    hub = _Hub(storage, accounts, multipart_chunk_size, tree_page_size, commits_page_size, stats)
    app = Starlette(
        routes=[Route("/{path:path}", hub.dispatch, methods=["GET", "HEAD", "POST", "PUT", "DELETE"])],
        middleware=[Middleware(FaultMiddleware, state=fault_state)],
        exception_handlers={Exception: _internal_error},
    )
    app.state.stats = stats
    app.state.storage = storage  # whoever runs the app closes it: that frees the root for the next server
    return app


async def _internal_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "Internal server error"}, status_code=500)


class _Hub:
    def __init__(
        self,
        storage: Storage,
        tokens: dict[str, Account],
        chunk_size: int,
        tree_page_size: int,
        commits_page_size: int,
        stats: HubStats,
    ) -> None:
        self.storage = storage
        self.tokens = tokens
        self.lfs = LfsTransfers(storage, stats.upload_bytes, chunk_size)
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
            response = await handlers[method](request)
        except HubError as err:
            response = error_response(err)
        except ClientDisconnect:  # the client went away mid-upload (a killed push): nothing to answer, nothing wrong here
            logger.info("client disconnected during %s %s", request.method, request.url.path)
            response = Response(status_code=499)
        except Exception:  # noqa: BLE001 - answer 500 and keep the connection orderly
            # Starlette's Exception handler re-raises after answering, and uvicorn then resets the
            # connection, which can reach the client before the 500 does. The state on disk is safe:
            # a failed commit never moved its ref.
            logger.exception("internal error on %s %s", request.method, request.url.path)
            response = JSONResponse({"error": "Internal server error"}, status_code=500)
        # Like the Hub: clients quote it in every error message ("(Request ID: …)").
        response.headers["X-Request-Id"] = f"Root=1-{uuid.uuid4().hex}"
        # Not the Hub's: says what a rehearsal here cannot prove (uploads went over LFS, never Xet).
        response.headers[LOCAL_HUB_HEADER] = LOCAL_HUB_VALUE
        return response

    def _route(self, seg: list[str]) -> tuple[str, dict[str, Handler]]:
        match seg:
            case ["api", "whoami-v2"]:
                return "whoami", {"GET": self.whoami}
            case ["api", "repos", "create"]:
                return "create_repo", {"POST": self.create_repo}
            case ["api", "repos", "delete"]:
                return "delete_repo", {"POST": self.delete_repo, "DELETE": self.delete_repo}
            case ["api", "repos", "move"]:
                return "move_repo", {"POST": self.move_repo}
            case ["api", "validate-yaml"]:
                return "validate_yaml", {"POST": self.validate_yaml}
            case ["api", "models" | "datasets" | "spaces" as kind]:
                return "list_repos", {"GET": partial(self.list_repos, repo_type=kind.removesuffix("s"))}
            case ["api", "models" | "datasets" | "spaces", name]:
                raise repo_not_found(name)  # every repo here has a namespace
            case ["api", "models" | "datasets" | "spaces" as kind, namespace, name, *rest]:
                return self._api_route(self._repo(kind.removesuffix("s"), namespace, name), rest)
            case ["_lfs", ticket]:
                return "lfs_object", {
                    "PUT": partial(self.lfs.upload, ticket=ticket),
                    "POST": partial(self.lfs.complete, ticket=ticket),
                }
            case ["_lfs", ticket, part]:
                return "lfs_part", {"PUT": partial(self.lfs.upload_part, ticket=ticket, part=part)}
        repo_type = "model"
        if seg and seg[0] in ("datasets", "spaces"):
            repo_type, seg = seg[0].removesuffix("s"), seg[1:]
        match seg:
            case [namespace, git_name, "info", "lfs", "objects", "batch"] if git_name.endswith(".git"):
                repo = self._repo(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_batch", {"POST": partial(self.lfs_batch, repo=repo)}
            case [namespace, git_name, "info", "lfs", "objects", "verify"] if git_name.endswith(".git"):
                repo = self._repo(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_verify", {"POST": partial(self.lfs_verify, repo=repo)}
            case [namespace, name, "resolve", revision, *path] if path:
                repo = self._repo(repo_type, namespace, name)
                return "resolve", {"GET": partial(self.resolve, repo=repo, revision=revision, path="/".join(path))}
            case [name, "resolve", _, *path] if path:
                raise repo_not_found(name)
        raise HubError(404, "Not found")

    def _repo(self, repo_type: str, namespace: str, name: str) -> RepoId:
        return self.storage.canonical(repo_id(repo_type, namespace, name))

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
            case "settings" if not tail:
                return "settings", {"PUT": partial(self.settings, repo=repo)}
            case "auth-check" if not tail:
                return "auth_check", {"GET": partial(self.auth_check, repo=repo)}
        if self.storage.repo_meta(repo) is None:
            raise repo_not_found(repo.id)  # an id with a slash too many names no repo either
        raise HubError(404, "Not found")

    # ---- auth -------------------------------------------------------------------------------------

    def _account(self, request: Request) -> Account | None:
        """The caller, None if anonymous; a token we do not know is a 401 on every route."""
        header = request.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        account = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if account is None:
            raise HubError(401, BAD_CREDENTIALS)
        return account

    def _signed_in(self, request: Request) -> Account:
        account = self._account(request)
        if account is None:
            raise HubError(401, BAD_CREDENTIALS)
        return account

    def _writable(
        self, request: Request, repo: RepoId | None = None, namespace: str | None = None, *, pull_request: bool = False
    ) -> Account:
        """The caller, allowed to write `repo` (which must exist) or to create repos in `namespace`.
        Anyone with a write token may open a pull request on a public repo."""
        account = self._signed_in(request)
        if repo is not None:
            meta = self.storage.repo_meta(repo)
            if meta is None or (meta.private and not account.member_of(repo.namespace)):
                raise repo_not_found(repo.id)
            namespace = None if pull_request and not meta.private else repo.namespace
        if account.role != "write":
            raise HubError(403, FORBIDDEN_READ_TOKEN)
        if namespace is not None and not account.member_of(namespace):
            what = "create a repository" if repo is None else f"write to {repo.id}"
            raise HubError(403, f"You don't have the rights to {what} under the namespace {namespace}")
        return account

    def _readable(self, request: Request, repo: RepoId) -> RepoMeta:
        account = self._account(request)
        meta = self.storage.repo_meta(repo)
        if meta is None or (meta.private and (account is None or not account.member_of(repo.namespace))):
            raise repo_not_found(repo.id)  # like the Hub, never confirm a private repo exists
        return meta

    def _commit_at(self, repo: RepoId, revision: str) -> Commit:
        return self.storage.commit_record(repo, self.storage.resolve(repo, revision))

    # ---- account and repos ------------------------------------------------------------------------

    async def whoami(self, request: Request) -> Response:
        account = self._signed_in(request)
        role = account.role
        return JSONResponse(
            {
                "type": "user",
                "name": account.name,
                "fullname": account.fullname or account.name,
                "orgs": [{"type": "org", "name": n, "fullname": f} for n, f in sorted((account.orgs or {}).items())],
                "auth": {"type": "access_token", "accessToken": {"displayName": f"local {role}", "role": role}},
            }
        )

    async def create_repo(self, request: Request) -> Response:
        account = self._signed_in(request)
        body = await json_body(request)
        repo_type = body.get("type") or "model"
        namespace = str(body.get("organization") or account.name)
        self._writable(request, namespace=namespace)
        repo = repo_id(str(repo_type), namespace, str(body.get("name", "")))
        private = body.get("visibility", "public") == "private" or body.get("private") is True
        url = f"{base_url(request)}/{repo.url_prefix}{repo.id}"
        created = await run_in_threadpool(self.storage.create_repo, repo, private=private, author=account.name)
        if not created:
            return JSONResponse({"error": f"You already created this {repo_type} repo", "url": url}, status_code=409)
        return JSONResponse({"url": url, "name": repo.id})

    async def validate_yaml(self, request: Request) -> Response:
        self._signed_in(request)
        body = await json_body(request, MAX_CARD_BODY)
        content, repo_type = body.get("content", ""), body.get("repoType") or "model"
        if not isinstance(content, str) or not isinstance(repo_type, str):
            raise HubError(400, "content and repoType must be strings")
        errors, warnings = await run_in_threadpool(validate_card, content, repo_type)
        return JSONResponse(
            {"errors": [{"message": e} for e in errors], "warnings": [{"message": w} for w in warnings]},
            status_code=400 if errors else 200,
        )

    async def delete_repo(self, request: Request) -> Response:
        repo = await self._named_repo(request)
        self._writable(request, repo)
        await run_in_threadpool(self.storage.delete_repo, repo)
        return JSONResponse({})

    async def move_repo(self, request: Request) -> Response:
        body = await json_body(request)
        repo_type = str(body.get("type") or "model")
        ids = [body.get("fromRepo"), body.get("toRepo")]
        if not all(isinstance(i, str) and i.count("/") == 1 for i in ids):
            raise HubError(400, "fromRepo and toRepo must be repo ids namespace/name")
        source, dest = (self._repo(repo_type, *str(i).split("/")) for i in ids)
        self._writable(request, source)
        self._writable(request, namespace=dest.namespace)
        await run_in_threadpool(self.storage.move_repo, source, dest)
        return JSONResponse({})

    async def _named_repo(self, request: Request) -> RepoId:
        """The repo a `{name, organization, type}` body names (create and delete take it this way)."""
        body = await json_body(request)
        namespace = body.get("organization") or self._signed_in(request).name
        return self._repo(str(body.get("type") or "model"), str(namespace), str(body.get("name", "")))

    async def list_repos(self, request: Request, repo_type: RepoType) -> Response:
        account = self._account(request)
        author = request.query_params.get("author")
        search = (request.query_params.get("search") or "").lower()
        try:
            limit = min(int(request.query_params.get("limit") or MAX_LISTED), MAX_LISTED)
        except ValueError as exc:
            raise HubError(400, "limit must be a number") from exc
        found = []
        for repo, meta in await run_in_threadpool(self.storage.list_repos, repo_type, author):
            if meta.private and (account is None or not account.member_of(repo.namespace)):
                continue
            if search in repo.id.lower():
                found.append(listed(repo, meta))
        found.sort(key=lambda item: item["createdAt"], reverse=True)
        return JSONResponse(found[:limit])

    async def settings(self, request: Request, repo: RepoId) -> Response:
        self._writable(request, repo)
        body = await json_body(request)
        private, gated, visibility = body.get("private"), body.get("gated"), body.get("visibility")
        if visibility is not None:
            if visibility not in ("public", "private"):
                raise HubError(400, '"visibility" must be one of [public, private]')
            private = visibility == "private"
        if private is not None and not isinstance(private, bool):
            raise HubError(400, '"private" must be a boolean')
        if gated is not None and gated not in (False, "auto", "manual"):
            raise HubError(400, '"gated" must be one of [auto, manual, false]')
        await run_in_threadpool(partial(self.storage.update_settings, repo, private=private, gated=gated))
        return JSONResponse({})

    async def auth_check(self, request: Request, repo: RepoId) -> Response:
        self._downloadable(request, repo)
        return JSONResponse({})

    def _downloadable(self, request: Request, repo: RepoId) -> RepoMeta:
        """Readable, and for a gated repo the caller is a member (no access requests here)."""
        meta = self._readable(request, repo)
        account = self._account(request)
        if meta.gated and (account is None or not account.member_of(repo.namespace)):
            raise HubError(
                401 if account is None else 403,
                f"Access to {repo.type} {repo.id} is restricted and you are not in the authorized list. "
                f"Visit {base_url(request)}/{repo.url_prefix}{repo.id} to ask for access.",
                "GatedRepo",
            )
        return meta

    async def no_xet(self, request: Request) -> Response:
        return JSONResponse({"error": XET_UNAVAILABLE}, status_code=501, headers={"X-Error-Message": XET_UNAVAILABLE})

    # ---- reading ----------------------------------------------------------------------------------

    async def info(self, request: Request, repo: RepoId, revision: str) -> Response:
        meta = self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        with_blobs = truthy(request.query_params.get("blobs"))
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
        # what the listing says of the repo, and what only its info page has
        data: dict[str, Any] = {**listed(repo, meta), "sha": commit.id, "lastModified": commit.date, "disabled": False,
                                "tags": card_tags(card), "siblings": siblings}
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
        data, _ = front_matter(self.storage.read_blob(entry).decode("utf-8", "replace"))
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
        recursive = truthy(request.query_params.get("recursive"))
        prefix = f"{folder}/" if folder else ""

        def listed(p: str) -> bool:
            return p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])

        paths = sorted([p for p in commit.tree if listed(p)] + [d for d in dirs if listed(d)])
        cursor = request.query_params.get("cursor")
        start = bisect_right(paths, unb64(cursor)) if cursor else 0
        page = paths[start : start + self.tree_page_size]
        headers = {}
        if start + self.tree_page_size < len(paths):
            # Later pages are pinned to the commit, so a branch moving mid-listing cannot mix trees.
            folder_part = f"/{quote(folder, safe='')}" if folder else ""
            next_url = (
                f"{base_url(request)}/api/{repo.type}s/{repo.id}/tree/{commit.id}{folder_part}"
                f"?recursive={str(recursive).lower()}&cursor={b64(page[-1])}"
            )
            headers["Link"] = f'<{next_url}>; rel="next"'
        entries = [path_info(p, commit.tree.get(p), dirs) for p in page]
        if truthy(request.query_params.get("expand")):
            await run_in_threadpool(self._add_last_commits, repo, commit, entries)
        return JSONResponse(entries, headers=headers)

    async def paths_info(self, request: Request, repo: RepoId, revision: str) -> Response:
        self._readable(request, repo)
        commit = self._commit_at(repo, revision)
        form = parse_qs((await bounded_body(request, MAX_JSON_BODY)).decode("utf-8", "replace"))
        asked = form.get("paths", [])
        if len(asked) > MAX_PATHS_INFO:
            raise HubError(400, f"paths-info takes at most {MAX_PATHS_INFO} paths per request")
        dirs = directory_oids(commit.tree)
        found = []
        for path in dict.fromkeys(p.strip("/") for p in asked):
            if path in commit.tree or path in dirs:
                found.append(path_info(path, commit.tree.get(path), dirs))
        if truthy(form.get("expand", ["false"])[-1]):
            await run_in_threadpool(self._add_last_commits, repo, commit, found)
        return JSONResponse(found)

    def _add_last_commits(self, repo: RepoId, head: Commit, entries: list[dict[str, Any]]) -> None:
        """Add `lastCommit` (the newest commit that changed each path) to tree entries, as expand=true does."""
        pending = {entry["path"]: entry for entry in entries}
        current, current_dirs = head, directory_oids(head.tree)
        for _ in range(MAX_LAST_COMMIT_WALK):
            if not pending:
                return
            parent = self.storage.commit_record(repo, current.parent) if current.parent else None
            parent_tree = parent.tree if parent else {}
            parent_dirs = directory_oids(parent_tree) if parent else {}
            for path in list(pending):
                before = parent_tree.get(path) if path in current.tree else parent_dirs.get(path)
                now = current.tree.get(path) if path in current.tree else current_dirs.get(path)
                if parent is None or before != now:
                    pending.pop(path)["lastCommit"] = {"id": current.id, "title": current.title, "date": current.date}
            if parent is None:
                return
            current, current_dirs = parent, parent_dirs

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
            expand = "".join(f"&expand[]={quote(e)}" for e in request.query_params.getlist("expand[]"))
            next_url = f"{base_url(request)}/api/{repo.type}s/{repo.id}/commits/{head}?p={page_number + 1}{expand}"
            headers["Link"] = f'<{next_url}>; rel="next"'
        items: list[dict[str, Any]] = [
            {"id": c.id, "title": c.title, "message": c.message, "date": c.date, "authors": [{"user": c.author}]}
            for c in window[: self.commits_page_size]
        ]
        if "formatted" in request.query_params.getlist("expand[]"):
            for item in items:  # the Hub renders title and message as HTML
                item["formatted"] = {"title": html.escape(item["title"]), "message": html_paragraphs(item["message"])}
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
        if truthy(request.query_params.get("include_prs")):
            data["pullRequests"] = [
                {"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": c}
                for n, c in sorted(refs.pulls.items())
            ]
        return JSONResponse(data)

    async def resolve(self, request: Request, repo: RepoId, revision: str, path: str) -> Response:
        self._downloadable(request, repo)
        commit = self._commit_at(repo, revision)
        headers = {"X-Repo-Commit": commit.id}
        entry = commit.tree.get(path)
        if entry is None:
            raise HubError(404, "Entry not found", "EntryNotFound", headers)  # the Hub's text; the client adds the URL
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
        self._writable(request, repo, pull_request=truthy(request.query_params.get("create_pr")))
        body = await json_body(request)
        files, gitignore = body.get("files"), body.get("gitIgnore")
        if not isinstance(files, list) or len(files) > MAX_PREUPLOAD_FILES:
            raise HubError(400, f"files must be a list of at most {MAX_PREUPLOAD_FILES}")
        try:
            tree = self._commit_at(repo, revision).tree
        except HubError as err:
            if err.code != "RevisionNotFound":
                raise
            tree = {}  # a branch that does not exist yet has no files to compare with
        attributes = tree.get(".gitattributes")
        patterns = lfs_patterns(self.storage.read_blob(attributes).decode("utf-8", "replace")) if attributes else []
        if gitignore is None and (hosted := tree.get(".gitignore")) is not None and not hosted.lfs:
            gitignore = self.storage.read_blob(hosted).decode("utf-8", "replace")
        if gitignore is not None and (not isinstance(gitignore, str) or len(gitignore) > MAX_GITIGNORE):
            raise HubError(400, f"gitIgnore must be a string of at most {MAX_GITIGNORE} characters")
        answers = []
        for item in files:
            path = validate_path(item.get("path") if isinstance(item, dict) else None)
            sample, size = sample_and_size(item, path)
            lfs = size > 0 and (  # the Hub stores an empty file as a regular one, whatever its name
                size >= LFS_SIZE_THRESHOLD
                or b"\0" in sample  # git's own test for binary content
                or any(matches_gitattributes(p, path) for p in patterns)
            )
            remote = tree.get(path)
            answers.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "oid": remote and remote.remote_oid})
        ignored = ignored_paths(gitignore, (a["path"] for a in answers))
        for answer in answers:
            answer["shouldIgnore"] = answer["path"] in ignored
        return JSONResponse({"files": answers})

    async def commit(self, request: Request, repo: RepoId, revision: str) -> Response:
        create_pr = truthy(request.query_params.get("create_pr"))
        account = self._writable(request, repo, pull_request=create_pr)
        # Regular files travel base64 inside the commit; send large ones through LFS.
        header, operations = parse_commit(await bounded_body(request, MAX_COMMIT_BODY))
        card = next((op for op in operations if isinstance(op, AddFile) and op.path == "README.md"), None)
        if card is not None:
            # The Hub checks the card again at commit time: a client that skipped validate-yaml is refused too.
            text = card.content.decode("utf-8", "replace")
            errors, _ = await run_in_threadpool(validate_card, text, repo.type)
            if errors:
                raise HubError(400, "Invalid metadata in README.md.\n" + "\n".join(f"- {e}" for e in errors))
        commit, pull = await run_in_threadpool(
            partial(
                self.storage.commit,
                repo,
                revision,
                operations,
                title=header["summary"],
                message=str(header.get("description") or ""),
                author=account.name,
                parent_commit=header.get("parentCommit"),
                create_pr=create_pr,
            )
        )
        self.stats.commits += 1
        repo_url = f"{base_url(request)}/{repo.url_prefix}{repo.id}"
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
        body = await json_body(request)
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
        body = await json_body(request) if await request.body() else {}
        starting_point = str(body.get("startingPoint") or "main")
        await run_in_threadpool(self.storage.create_branch, repo, branch, starting_point)
        return JSONResponse({})

    async def delete_branch(self, request: Request, repo: RepoId, branch: str) -> Response:
        self._writable(request, repo)
        await run_in_threadpool(self.storage.delete_branch, repo, branch)
        return JSONResponse({})

    # ---- LFS --------------------------------------------------------------------------------------

    async def lfs_batch(self, request: Request, repo: RepoId) -> Response:
        self._writable(request, repo, pull_request=True)  # the commit itself checks who may write where
        return await self.lfs.batch(request, repo)

    async def lfs_verify(self, request: Request, repo: RepoId) -> Response:
        self._writable(request, repo, pull_request=True)
        return await self.lfs.verify(request)
