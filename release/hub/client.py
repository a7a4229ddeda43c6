"""Talking to a Hub through huggingface_hub: endpoint and token resolution, Hub errors → one line, retries,
remote listings, the Hub's release.json (bounded), Xet detection."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
from huggingface_hub import HfApi, constants, get_token
from huggingface_hub.errors import HfHubHTTPError, OIDCError, RepositoryNotFoundError, RevisionNotFoundError
from huggingface_hub.hf_api import GitRefs, RepoFile
from huggingface_hub.utils import get_session

from release.errors import InputError, RemoteError, first_line, redact, register_secret
from release.hub import limits
from release.hub.endpoint import DEFAULT_ENDPOINT, ENV, checked_endpoint
from release.hub.library_errors import HubCall, translate
from release.hub.transport import AnswerRefused, install
from release.staged.names import MANIFEST_NAME

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class HubClient:
    """A client of one Hub (huggingface.co, a mirror, or the local Hub): huggingface_hub's HfApi and its endpoint."""

    api: HfApi
    endpoint: str

    def repo_url(self, repo_id: str) -> str:
        """The repo's address for people: without any user:password@ the endpoint carries."""
        parts = urlsplit(self.endpoint.rstrip("/"))
        return f"{urlunsplit(parts._replace(netloc=parts.netloc.rpartition('@')[2]))}/{repo_id}"

    def download_manifest(
        self, repo_id: str, revision: str, cache_dir: Path, what: str, *, size: int | None = None
    ) -> Path:
        """The Hub's release.json at `revision`, downloaded into `cache_dir` (retried when transient, as `what`) once
        its size is known to be within MAX_MANIFEST_BYTES: `size` from the caller's own listing, else the Hub's
        paths-info (a missing file: the download says so). Raises ManifestTooLarge, and huggingface_hub's errors as
        they are: the caller says what they mean. The caller reads the file within the same bound."""
        if size is None:
            with remote_errors(repo_id, f"listing {MANIFEST_NAME} at {revision}"):
                try:
                    listed = self.api.get_paths_info(repo_id, [MANIFEST_NAME], revision=revision)
                except (RepositoryNotFoundError, RevisionNotFoundError):
                    listed = []
            size = next((getattr(entry, "size", None) for entry in listed if entry.path == MANIFEST_NAME), None)
        if type(size) is int and size > limits.MAX_MANIFEST_BYTES:
            raise ManifestTooLarge(size)
        return Path(
            with_retries(
                lambda: self.api.hf_hub_download(repo_id, MANIFEST_NAME, revision=revision, cache_dir=cache_dir), what
            )
        )


class ManifestTooLarge(Exception):
    """The Hub's release.json is larger than any hf-release writes (limits.MAX_MANIFEST_BYTES): not downloaded."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{MANIFEST_NAME} is {size:,} bytes")
        self.size = size


@dataclass(frozen=True, slots=True)
class RemoteFile:
    path: str
    size: int
    blob_id: str
    sha256: str | None  # set for LFS files
    xet_hash: str | None = None  # set for files the Hub stores in Xet (hf_xet downloads them by reconstruction)


def resolve_endpoint(option: str | None) -> str:
    """`--endpoint`, else HF_ENDPOINT, else the public Hub (as the hf CLI does), checked (release/hub/endpoint.py)."""
    if option:
        return checked_endpoint(option, "--endpoint")
    return checked_endpoint(os.environ.get(ENV) or DEFAULT_ENDPOINT, ENV)


def resolve_token(option: str | None) -> str | None:
    """`--token`, else HF_TOKEN (or Trusted Publishing via HF_OIDC_RESOURCE), else the login cache
    (huggingface_hub's own resolution)."""
    try:
        token = option or get_token()
    except OIDCError as exc:
        raise InputError(
            f"trusted publishing (HF_OIDC_RESOURCE) could not get a token: {first_line(exc)}; "
            "run in a CI job with `id-token: write`, or set HF_TOKEN instead",
            file="token",
        ) from None
    except (httpx2.HTTPError, HfHubHTTPError) as exc:
        raise RemoteError(
            f"trusted publishing (HF_OIDC_RESOURCE): the token exchange failed: {first_line(exc)}", file="token"
        ) from None
    register_secret(token)
    return token


def connect(endpoint: str | None, token: str | None) -> HubClient:
    url = resolve_endpoint(endpoint)
    install()  # before the first request (a trusted-publishing token exchange included): every answer bounded
    return HubClient(HfApi(endpoint=url, token=resolve_token(token) or False), url)


@contextmanager
def remote_errors(repo_id: str, action: str) -> Iterator[None]:
    """Turn huggingface_hub and network exceptions into one-line errors naming the repo and the action
    (release/hub/library_errors.py's table)."""
    try:
        yield
    except Exception as exc:
        translated = translate(exc, HubCall(repo_id, action))
        if translated is None:
            raise
        raise translated.raised() from None


# Retries of the calls huggingface_hub sends only once (refs, repo info, the commit POST, the tag POST):
# the same statuses and backoff as its own http_backoff, but bounded lower so a dead Hub fails in ~15 s.
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
ATTEMPTS = 4
BASE_WAIT, MAX_WAIT, MAX_RETRY_AFTER = 1.0, 8.0, 60.0
sleep = time.sleep  # tests replace it


def is_transient(exc: BaseException) -> bool:
    """A failure worth retrying: rate limiting, a 5xx, a timeout or a dropped connection."""
    if isinstance(exc, HfHubHTTPError):
        return exc.response is not None and exc.response.status_code in TRANSIENT_STATUS
    # Not ConnectError: nothing listens there, so fail fast (huggingface_hub's own backoff already waited).
    # Not AnswerRefused: an answer past hf-release's bounds would be past them again.
    return isinstance(exc, httpx2.TransportError) and not isinstance(exc, httpx2.ConnectError | AnswerRefused)


def backoff(attempt: int, exc: BaseException) -> float:
    """Seconds to wait before retry number `attempt` (1-based): Retry-After when given, else exponential."""
    response = exc.response if isinstance(exc, HfHubHTTPError) else None
    if response is not None:
        try:
            return min(float(response.headers.get("retry-after", "")), MAX_RETRY_AFTER)
        except ValueError:
            pass
    return min(BASE_WAIT * 2 ** (attempt - 1), MAX_WAIT)


def wait_before_retry(attempt: int, exc: BaseException, what: str) -> None:
    wait = backoff(attempt, exc)
    logger.warning(redact(f"{what}: {first_line(exc)}; retrying in {wait:g}s (attempt {attempt + 1}/{ATTEMPTS})"))
    sleep(wait)


def with_retries(call: Callable[[], T], what: str) -> T:
    """Run an idempotent request, retrying transient failures a bounded number of times."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == ATTEMPTS or not is_transient(exc):
                raise
            wait_before_retry(attempt, exc, what)
    raise AssertionError("unreachable")


# The shapes of the Hub's answers hf-release reads (huggingface_hub parses them without checking types).
GIT_ID = re.compile(r"[0-9a-f]{40}")
SHA256 = re.compile(r"[0-9a-f]{64}")


class MalformedAnswer(RemoteError):
    """The Hub answered, but not in the shape its API has (exit 3, like any remote failure)."""


def malformed(repo_id: str, action: str, detail: str) -> MalformedAnswer:
    return MalformedAnswer(
        f"{action}: the Hub's answer is malformed ({detail}); check the endpoint, or re-run later", file=repo_id
    )


def _is(value: object, pattern: re.Pattern[str]) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def whoami(hub: HubClient, repo_id: str) -> tuple[str, str | None]:
    """The token's account name and role ("read", "write", or None when the Hub does not say)."""
    action = f"checking the token with {hub.endpoint}"
    with remote_errors(repo_id, action):
        who = with_retries(hub.api.whoami, "checking the token")
    auth = who.get("auth", {}) if isinstance(who, dict) else None
    token = auth.get("accessToken", {}) if isinstance(auth, dict) else None
    role = token.get("role") if isinstance(token, dict) else None
    if (
        not isinstance(who, dict)
        or not isinstance(who.get("name"), str)
        or token is None
        or not isinstance(role, str | None)
    ):
        raise malformed(repo_id, action, "whoami-v2 is not an object with a name and auth.accessToken.role")
    return who["name"], role


def list_refs(hub: HubClient, repo_id: str, what: str = "reading refs") -> GitRefs:
    """The repo's branches and tags (with retries), each a name and a commit id."""
    with remote_errors(repo_id, what):
        refs = with_retries(lambda: hub.api.list_repo_refs(repo_id), what)
    for ref in [*refs.branches, *refs.tags]:
        if not isinstance(ref.name, str) or not _is(ref.target_commit, GIT_ID):
            raise malformed(
                repo_id,
                what,
                f"a ref is {str(ref.name)[:80]!r} at {str(ref.target_commit)[:80]!r}, not a name at a commit id",
            )
    return refs


def commit_id(repo_id: str, action: str, oid: object) -> str:
    """A commit id the Hub answered, checked: it is what the tag is put on."""
    if not _is(oid, GIT_ID):
        raise malformed(repo_id, action, f"the commit id is {str(oid)[:80]!r}")
    return str(oid)


def remote_files(hub: HubClient, repo_id: str, revision: str) -> dict[str, RemoteFile]:
    """The files at `revision`, each kept as a small RemoteFile as its page arrives (huggingface_hub's RepoFile
    holds every field the listing has: at 50,000 files a list of them is tens of MB)."""
    action = f"listing files at {revision}"
    files, bad = {}, None
    with remote_errors(repo_id, action):
        for e in hub.api.list_repo_tree(repo_id, revision=revision, recursive=True, expand=False):
            if not isinstance(e, RepoFile):
                continue
            sha256 = e.lfs.sha256 if e.lfs else None
            if (
                not isinstance(e.path, str)
                or type(e.size) is not int
                or e.size < 0
                or not _is(e.blob_id, GIT_ID)
                or (sha256 is not None and not _is(sha256, SHA256))
            ):
                bad = e.path
                break
            xet_hash = e.xet_hash if _is(e.xet_hash, SHA256) else None  # the same 64 hex digits
            files[e.path] = RemoteFile(e.path, e.size, e.blob_id, sha256, xet_hash)
    if bad is not None:
        raise malformed(
            repo_id, action, f"the entry {str(bad)[:80]!r} is not a path with a size, a git id and an LFS sha256"
        )
    return files


def branch_commit(refs: GitRefs, name: str = "main") -> str | None:
    return next((b.target_commit for b in refs.branches if b.name == name), None)


def tag_commit(refs: GitRefs, name: str) -> str | None:
    return next((t.target_commit for t in refs.tags if t.name == name), None)


def xet_offered(hub: HubClient, repo_id: str, revision: str = "main") -> bool:
    """Whether the Hub hands out Xet write tokens for this repo (the real Hub does; the local Hub does not)."""
    try:
        response = get_session().get(
            f"{hub.endpoint}/api/models/{repo_id}/xet-write-token/{revision}",
            headers=hub.api._build_hf_headers(),
            timeout=10,
        )
    except httpx2.HTTPError:
        return False
    return response.status_code == 200


def use_xet(offered: bool) -> bool:
    """Upload through Xet where the server offers it, through plain LFS where it does not (detected, not
    configured); whether this push goes through Xet."""
    constants.HF_HUB_DISABLE_XET = constants.HF_HUB_DISABLE_XET or not offered  # never undo a user's opt-out
    return not constants.HF_HUB_DISABLE_XET


def require_token(token: str | bool | None) -> str:
    """HfApi's token, which connect() sets to a str, or False when there is none."""
    if not token:
        raise InputError(
            "no Hugging Face token: set HF_TOKEN, pass --token-file FILE or --token-stdin, or run `hf auth login`",
            file="token",
        )
    assert isinstance(token, str), "connect() never sets the token to True"
    return token
