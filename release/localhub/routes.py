"""The local Hub's route table: which handler answers a request path, segment by segment.

Paths are routed from the raw request path because revisions and file paths arrive percent-encoded
(`refs%2Fpr%2F1`) and must not be split on their encoded slashes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from release.localhub.errors import HubError, repo_not_found
from release.localhub.lfs import LfsTransfers
from release.localhub.read_api import ReadApi
from release.localhub.records import REPO_TYPES, RepoId, RepoType
from release.localhub.storage import Storage
from release.localhub.write_api import WriteApi
from release.localhub.xet.cas import XetApi

Handler = Callable[[Request], Awaitable[Response]]
XET_UNAVAILABLE = "This server offers no Xet storage; upload over LFS (set HF_HUB_DISABLE_XET=1)."
ROUTE_REPO_TYPES: dict[str, RepoType] = {f"{t}s": t for t in REPO_TYPES}  # /api/models → model


async def no_xet(request: Request) -> Response:
    return JSONResponse({"error": XET_UNAVAILABLE}, status_code=501, headers={"X-Error-Message": XET_UNAVAILABLE})


class Routes:
    """Maps a request path to the read, write or LFS handler that answers it."""

    def __init__(
        self, storage: Storage, read: ReadApi, write: WriteApi, lfs: LfsTransfers, xet: XetApi | None = None
    ) -> None:
        self.storage = storage
        self.read = read
        self.write = write
        self.lfs = lfs
        self.xet = xet

    def find(self, seg: list[str]) -> tuple[str, dict[str, Handler]]:
        """The route's name (counted in `HubStats.requests`) and its handler per method."""
        match seg:
            case ["api", "whoami-v2"]:
                return "whoami", {"GET": self.read.whoami}
            case ["api", "repos", "create"]:
                return "create_repo", {"POST": self.write.create_repo}
            case ["api", "repos", "delete"]:
                return "delete_repo", {"POST": self.write.delete_repo, "DELETE": self.write.delete_repo}
            case ["api", "repos", "move"]:
                return "move_repo", {"POST": self.write.move_repo}
            case ["api", "validate-yaml"]:
                return "validate_yaml", {"POST": self.write.validate_yaml}
            case ["api", "models" | "datasets" | "spaces" as kind]:
                return "list_repos", {"GET": partial(self.read.list_repos, repo_type=ROUTE_REPO_TYPES[kind])}
            case ["api", "models" | "datasets" | "spaces", name]:
                raise repo_not_found(name)  # every repo here has a namespace
            case ["api", "models" | "datasets" | "spaces" as kind, namespace, name, *rest]:
                return self._api_route(self.storage.repo_named(kind.removesuffix("s"), namespace, name), rest)
            case ["_lfs", ticket]:
                return "lfs_object", {
                    "PUT": partial(self.lfs.upload, ticket=ticket),
                    "POST": partial(self.lfs.complete, ticket=ticket),
                }
            case ["_lfs", ticket, part]:
                return "lfs_part", {"PUT": partial(self.lfs.upload_part, ticket=ticket, part=part)}
            case ["_xet", *rest] if self.xet is not None:
                return self.xet.route(rest)
        repo_type = "model"
        if seg and seg[0] in ("datasets", "spaces"):
            repo_type, seg = seg[0].removesuffix("s"), seg[1:]
        match seg:
            case [namespace, git_name, "info", "lfs", "objects", "batch"] if git_name.endswith(".git"):
                repo = self.storage.repo_named(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_batch", {"POST": partial(self.write.lfs_batch, repo=repo)}
            case [namespace, git_name, "info", "lfs", "objects", "verify"] if git_name.endswith(".git"):
                repo = self.storage.repo_named(repo_type, namespace, git_name.removesuffix(".git"))
                return "lfs_verify", {"POST": partial(self.write.lfs_verify, repo=repo)}
            case [namespace, name, "resolve", revision, *path] if path:
                repo = self.storage.repo_named(repo_type, namespace, name)
                return "resolve", {"GET": partial(self.read.resolve, repo=repo, revision=revision, path="/".join(path))}
            case [name, "resolve", _, *path] if path:
                raise repo_not_found(name)
        raise HubError(404, "Not found")

    def _api_route(self, repo: RepoId, rest: list[str]) -> tuple[str, dict[str, Handler]]:
        action, tail = (rest[0], rest[1:]) if rest else ("", [])
        revision = "/".join(tail)  # tolerate revisions sent with unencoded slashes
        match action:
            case "" if not tail:
                return "info", {"GET": partial(self.read.info, repo=repo, revision="main")}
            case "revision" if revision:
                return "info", {"GET": partial(self.read.info, repo=repo, revision=revision)}
            case "tree" if tail:
                return "tree", {"GET": partial(self.read.tree, repo=repo, revision=tail[0], path="/".join(tail[1:]))}
            case "refs" if not tail:
                return "refs", {"GET": partial(self.read.refs, repo=repo)}
            case "commits":
                return "commits", {"GET": partial(self.read.commits, repo=repo, revision=revision or "main")}
            case "preupload" if revision:
                return "preupload", {"POST": partial(self.write.preupload, repo=repo, revision=revision)}
            case "commit" if revision:
                return "commit", {"POST": partial(self.write.commit, repo=repo, revision=revision)}
            case "paths-info" if revision:
                return "paths_info", {"POST": partial(self.read.paths_info, repo=repo, revision=revision)}
            case "tag" if revision:
                # POST names the revision to tag, DELETE names the tag.
                return "tag", {
                    "POST": partial(self.write.create_tag, repo=repo, revision=revision),
                    "DELETE": partial(self.write.delete_tag, repo=repo, tag=revision),
                }
            case "branch" if revision:
                return "branch", {
                    "POST": partial(self.write.create_branch, repo=repo, branch=revision),
                    "DELETE": partial(self.write.delete_branch, repo=repo, branch=revision),
                }
            case "xet-write-token" | "xet-read-token" if self.xet is not None and revision:
                write = action == "xet-write-token"
                return "xet_token", {"GET": partial(self.xet.token, repo=repo, revision=revision, write=write)}
            case "xet-write-token" | "xet-read-token":
                return "xet", {"GET": no_xet}
            case "settings" if not tail:
                return "settings", {"PUT": partial(self.write.settings, repo=repo)}
            case "auth-check" if not tail:
                return "auth_check", {"GET": partial(self.read.auth_check, repo=repo)}
        if self.storage.repo_meta(repo) is None:
            raise repo_not_found(repo.id)  # an id with a slash too many names no repo either
        raise HubError(404, "Not found")
