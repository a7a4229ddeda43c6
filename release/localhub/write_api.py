"""The local Hub's write routes: repos (create, delete, move, settings), card checks, preupload, commits,
tags, branches, and the credential checks in front of the LFS transfers."""

from __future__ import annotations

from functools import partial
from typing import Any, NotRequired, TypedDict

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from release.localhub.auth import Auth
from release.localhub.errors import HubError
from release.localhub.gitignore import MAX_GITIGNORE, ignored_paths
from release.localhub.lfs import LfsTransfers
from release.localhub.metadata import EVAL_RESULTS_FOLDER, validate_card, validate_eval_results
from release.localhub.records import AddFile, RepoId, repo_id, validate_path
from release.localhub.stats import HubStats
from release.localhub.storage import Storage
from release.localhub.wire import (
    MAX_CARD_BODY,
    MAX_COMMIT_BODY,
    MAX_PREUPLOAD_FILES,
    MiB,
    base_url,
    bounded_body,
    json_body,
    lfs_patterns,
    matches_gitattributes,
    parse_commit,
    sample_and_size,
    truthy,
)

LFS_SIZE_THRESHOLD = 10 * MiB  # what the Hub sends to LFS whatever its name or content


class PreuploadAnswer(TypedDict):
    """The preupload route's answer for one file."""

    path: str
    uploadMode: str  # "lfs" or "regular"
    oid: str | None  # the file's at the revision, if it has one
    shouldIgnore: NotRequired[bool]


class WriteApi:
    """Handlers of the routes that write, and of validate-yaml (the card check a commit repeats); each asks
    auth.py what the caller may write."""

    def __init__(self, storage: Storage, auth: Auth, lfs: LfsTransfers, stats: HubStats) -> None:
        self.storage = storage
        self.auth = auth
        self.lfs = lfs
        self.stats = stats

    async def create_repo(self, request: Request) -> Response:
        account = self.auth.signed_in(request)
        body = await json_body(request)
        repo_type = body.get("type") or "model"
        namespace = str(body.get("organization") or account.name)
        self.auth.writable(request, namespace=namespace)
        repo = repo_id(str(repo_type), namespace, str(body.get("name", "")))
        private = body.get("visibility", "public") == "private" or body.get("private") is True
        url = f"{base_url(request)}/{repo.url_prefix}{repo.id}"
        created = await run_in_threadpool(self.storage.create_repo, repo, private=private, author=account.name)
        if not created:
            return JSONResponse({"error": f"You already created this {repo_type} repo", "url": url}, status_code=409)
        return JSONResponse({"url": url, "name": repo.id})

    async def validate_yaml(self, request: Request) -> Response:
        self.auth.signed_in(request)
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
        self.auth.writable(request, repo)
        await run_in_threadpool(self.storage.delete_repo, repo)
        return JSONResponse({})

    async def move_repo(self, request: Request) -> Response:
        body = await json_body(request)
        repo_type = str(body.get("type") or "model")
        ids = [body.get("fromRepo"), body.get("toRepo")]
        if not all(isinstance(i, str) and i.count("/") == 1 for i in ids):
            raise HubError(400, "fromRepo and toRepo must be repo ids namespace/name")
        source, dest = (self.storage.repo_named(repo_type, *str(i).split("/")) for i in ids)
        self.auth.writable(request, source)
        self.auth.writable(request, namespace=dest.namespace)
        await run_in_threadpool(self.storage.move_repo, source, dest)
        return JSONResponse({})

    async def _named_repo(self, request: Request) -> RepoId:
        """The repo a `{name, organization, type}` body names (create and delete take it this way)."""
        body = await json_body(request)
        namespace = body.get("organization") or self.auth.signed_in(request).name
        return self.storage.repo_named(str(body.get("type") or "model"), str(namespace), str(body.get("name", "")))

    async def settings(self, request: Request, repo: RepoId) -> Response:
        self.auth.writable(request, repo)
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

    async def preupload(self, request: Request, repo: RepoId, revision: str) -> Response:
        self.auth.writable(request, repo, pull_request=truthy(request.query_params.get("create_pr")))
        body = await json_body(request)
        files, gitignore = body.get("files"), body.get("gitIgnore")
        if not isinstance(files, list) or len(files) > MAX_PREUPLOAD_FILES:
            raise HubError(400, f"files must be a list of at most {MAX_PREUPLOAD_FILES}")
        try:
            tree = self.storage.commit_at(repo, revision).tree
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
        answers: list[PreuploadAnswer] = []
        for item in files:
            path = validate_path(item.get("path") if isinstance(item, dict) else None)
            sample, size = sample_and_size(item, path)
            lfs = size > 0 and (  # the Hub stores an empty file as a regular one, whatever its name
                size >= LFS_SIZE_THRESHOLD
                or b"\0" in sample  # git's own test for binary content
                or any(matches_gitattributes(p, path) for p in patterns)
            )
            remote = tree.get(path)
            answers.append(
                {"path": path, "uploadMode": "lfs" if lfs else "regular", "oid": remote.remote_oid if remote else None}
            )
        ignored = ignored_paths(gitignore, (a["path"] for a in answers))
        for answer in answers:
            answer["shouldIgnore"] = answer["path"] in ignored
        return JSONResponse({"files": answers})

    async def commit(self, request: Request, repo: RepoId, revision: str) -> Response:
        create_pr = truthy(request.query_params.get("create_pr"))
        account = self.auth.writable(request, repo, pull_request=create_pr)
        # Regular files travel base64 inside the commit; send large ones through LFS.
        header, operations = parse_commit(await bounded_body(request, MAX_COMMIT_BODY))
        card = next((op for op in operations if isinstance(op, AddFile) and op.path == "README.md"), None)
        if card is not None:
            # The Hub checks the card again at commit time: a client that skipped validate-yaml is refused too.
            text = card.content.decode("utf-8", "replace")
            errors, _ = await run_in_threadpool(validate_card, text, repo.type)
            if errors:
                raise HubError(400, "Invalid metadata in README.md.\n" + "\n".join(f"- {e}" for e in errors))
        for op in operations:
            if isinstance(op, AddFile) and op.path.startswith(EVAL_RESULTS_FOLDER) and op.path.endswith(".yaml"):
                errors = await run_in_threadpool(validate_eval_results, op.content)
                if errors:
                    raise HubError(
                        400, f"Invalid evaluation results in {op.path}.\n" + "\n".join(f"- {e}" for e in errors)
                    )
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
        self.auth.writable(request, repo)
        body = await json_body(request)
        tag = body.get("tag")
        if not isinstance(tag, str):
            raise HubError(400, "tag must be a string")
        message = str(body.get("message") or "")
        await run_in_threadpool(self.storage.create_tag, repo, tag, revision, message)
        return JSONResponse({})

    async def delete_tag(self, request: Request, repo: RepoId, tag: str) -> Response:
        self.auth.writable(request, repo)
        await run_in_threadpool(self.storage.delete_tag, repo, tag)
        return JSONResponse({})

    async def create_branch(self, request: Request, repo: RepoId, branch: str) -> Response:
        self.auth.writable(request, repo)
        body = await json_body(request) if await request.body() else {}
        starting_point = str(body.get("startingPoint") or "main")
        await run_in_threadpool(self.storage.create_branch, repo, branch, starting_point)
        return JSONResponse({})

    async def delete_branch(self, request: Request, repo: RepoId, branch: str) -> Response:
        self.auth.writable(request, repo)
        await run_in_threadpool(self.storage.delete_branch, repo, branch)
        return JSONResponse({})

    async def lfs_batch(self, request: Request, repo: RepoId) -> Response:
        self.auth.writable(request, repo, pull_request=True)  # the commit itself checks who may write where
        return await self.lfs.batch(request, repo)

    async def lfs_verify(self, request: Request, repo: RepoId) -> Response:
        self.auth.writable(request, repo, pull_request=True)
        return await self.lfs.verify(request, repo)
