"""The local Hub's read routes: who am I, repo listings and info, trees, paths-info, commits, refs, downloads."""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from itertools import islice
from typing import Any
from urllib.parse import parse_qs, quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from release.localhub.auth import Auth, sees
from release.localhub.errors import HubError
from release.localhub.metadata import front_matter
from release.localhub.records import Commit, RepoId, RepoType, directory_oids
from release.localhub.storage import Storage
from release.localhub.wire import (
    MAX_JSON_BODY,
    MAX_LISTED,
    MAX_PATHS_INFO,
    b64,
    base_url,
    bounded_body,
    card_tags,
    html_paragraphs,
    listed,
    path_info,
    truthy,
    unb64,
)
from release.localhub.xet.cas import XetApi

MAX_LAST_COMMIT_WALK = 1000  # commits walked to find a path's last commit (expand=true)
MAX_COMMIT_PAGE = 10**9  # commits pages: far past any history (50 commits a page)
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


class ReadApi:
    """Handlers of the routes that only read; each asks auth.py what the caller may see."""

    def __init__(
        self, storage: Storage, auth: Auth, tree_page_size: int, commits_page_size: int, xet: XetApi | None = None
    ) -> None:
        self.storage = storage
        self.xet = xet
        self.auth = auth
        self.tree_page_size = tree_page_size
        self.commits_page_size = commits_page_size

    async def whoami(self, request: Request) -> Response:
        account = self.auth.signed_in(request)
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

    async def list_repos(self, request: Request, repo_type: RepoType) -> Response:
        account = self.auth.account(request)
        author = request.query_params.get("author")
        search = (request.query_params.get("search") or "").lower()
        try:
            limit = min(int(request.query_params.get("limit") or MAX_LISTED), MAX_LISTED)
        except ValueError as exc:
            raise HubError(400, "limit must be a number") from exc
        found = []
        for repo, meta in await run_in_threadpool(self.storage.list_repos, repo_type, author):
            if not sees(account, repo, meta):
                continue
            if search in repo.id.lower():
                found.append(listed(repo, meta))
        found.sort(key=lambda item: item["createdAt"], reverse=True)
        return JSONResponse(found[:limit])

    async def auth_check(self, request: Request, repo: RepoId) -> Response:
        self.auth.downloadable(request, repo)
        return JSONResponse({})

    async def info(self, request: Request, repo: RepoId, revision: str) -> Response:
        meta = self.auth.readable(request, repo)
        commit = self.storage.commit_at(repo, revision)
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
        data: dict[str, Any] = {
            **listed(repo, meta),
            "sha": commit.id,
            "lastModified": commit.date,
            "disabled": False,
            "tags": card_tags(card),
            "siblings": siblings,
        }
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
        self.auth.readable(request, repo)
        commit = self.storage.commit_at(repo, revision)
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
        self.auth.readable(request, repo)
        commit = self.storage.commit_at(repo, revision)
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
        self.auth.readable(request, repo)
        head = self.storage.resolve(repo, revision)
        try:
            page_number = int(request.query_params.get("p", "0"))
        except ValueError as exc:
            raise HubError(400, "p must be a page number") from exc
        if not 0 <= page_number <= MAX_COMMIT_PAGE:  # past it, the start index would not even be a machine integer
            raise HubError(400, f"p must be a page number from 0 to {MAX_COMMIT_PAGE}")
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
        self.auth.readable(request, repo)
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
        self.auth.downloadable(request, repo)
        commit = self.storage.commit_at(repo, revision)
        headers = {"X-Repo-Commit": commit.id}
        entry = commit.tree.get(path)
        if entry is None:
            raise HubError(404, "Entry not found", "EntryNotFound", headers)  # the Hub's text; the client adds the URL
        if entry.xet_hash and self.xet is not None:
            return self.xet.resolve(request, repo, commit.id, entry)
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
