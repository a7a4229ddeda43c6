"""Talking to a Hub through huggingface_hub: endpoint and token resolution, remote listings, remote verify."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx2
from huggingface_hub import HfApi, constants, get_token, hf_hub_url
from huggingface_hub.errors import (
    HfHubHTTPError,
    HFValidationError,
    OIDCError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from ..errors import CheckFailed, InputError, Problem, RemoteError, VerifyFailed, first_line, redact, register_secret
from ..manifest import (
    CARD_NAME,
    MANIFEST_NAME,
    REGULAR_FILE_MAX_BYTES,
    SIGNATURE_NAME,
    SUMS_NAME,
    Manifest,
    ManifestFile,
    git_blob_id,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_ENDPOINT = "https://huggingface.co"
# Files every Hub repo has that are not part of a release.
HUB_FILES = frozenset({".gitattributes"})


@dataclass(frozen=True)
class HubClient:
    """A client of one Hub (huggingface.co, a mirror, or the local Hub): huggingface_hub's HfApi and its endpoint."""

    api: HfApi
    endpoint: str

    def repo_url(self, repo_id: str) -> str:
        """The repo's address for people: without any user:password@ the endpoint carries."""
        parts = urlsplit(self.endpoint.rstrip("/"))
        return f"{urlunsplit(parts._replace(netloc=parts.netloc.rpartition('@')[2]))}/{repo_id}"


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    blob_id: str
    sha256: str | None  # set for LFS files


def resolve_endpoint(option: str | None) -> str:
    """`--endpoint`, else HF_ENDPOINT, else the public Hub (as the hf CLI does). Credentials in the URL
    (user:password@, for a proxy) are registered as secrets before anything can print them."""
    url = (option or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    parts = urlsplit(url)
    register_secret(parts.password)
    register_secret(parts.username)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{redact(url)} is not an http(s) URL; pass e.g. https://huggingface.co", file="--endpoint")
    return url


def resolve_token(option: str | None) -> str | None:
    """`--token`, else HF_TOKEN (or Trusted Publishing via HF_OIDC_RESOURCE), else the login cache
    (huggingface_hub's own resolution)."""
    try:
        token = option or get_token()
    except OIDCError as exc:
        raise InputError(f"trusted publishing (HF_OIDC_RESOURCE) could not get a token: {first_line(exc)}; "
                         "run in a CI job with `id-token: write`, or set HF_TOKEN instead", file="token") from None
    except (httpx2.HTTPError, HfHubHTTPError) as exc:
        raise RemoteError(f"trusted publishing (HF_OIDC_RESOURCE): the token exchange failed: {first_line(exc)}",
                          file="token") from None
    register_secret(token)
    return token


def connect(endpoint: str | None, token: str | None) -> HubClient:
    url = resolve_endpoint(endpoint)
    return HubClient(HfApi(endpoint=url, token=resolve_token(token) or False), url)


def hub_answer(exc: HfHubHTTPError) -> str:
    """The Hub's own reason for an HTTP error, on one line, with its request id when it sent one."""
    status = exc.response.status_code if exc.response is not None else "?"
    reason = "; ".join(line.strip() for line in (exc.server_message or "").splitlines() if line.strip())
    text = f"the Hub answered HTTP {status}: {reason or first_line(exc)}"
    return redact(text + (f" (request id {exc.request_id})" if exc.request_id else ""))


def describe_remote(exc: BaseException) -> str | None:
    """What went wrong talking to the Hub, or None if `exc` is not a remote failure."""
    if isinstance(exc, RepositoryNotFoundError):
        return "the repo does not exist or the token cannot see it"
    if isinstance(exc, RevisionNotFoundError):
        return f"revision not found ({first_line(exc)})"
    if isinstance(exc, HfHubHTTPError):
        return hub_answer(exc)
    if isinstance(exc, (httpx2.TransportError, ConnectionError, OSError)):
        return f"cannot reach the Hub ({type(exc).__name__}: {first_line(exc)})"
    return None


@contextmanager
def remote_errors(repo_id: str, action: str) -> Iterator[None]:
    """Turn huggingface_hub and network exceptions into one-line RemoteErrors naming the repo.

    huggingface_hub wraps a failed LFS upload (retries exhausted, Hub gone) in a RuntimeError whose
    cause is the HTTP or network error: that cause is what is reported.
    """
    try:
        yield
    except HFValidationError as exc:  # a name the client refuses to send: the spec's to fix
        raise InputError(f"{action}: huggingface_hub refuses it ({first_line(exc)})", file=repo_id) from None
    except (HfHubHTTPError, httpx2.TransportError, OSError) as exc:
        raise RemoteError(f"{action}: {describe_remote(exc)}", file=repo_id) from None
    except ValueError as exc:
        # huggingface_hub turns the Hub's 400 on README.md's front matter into a ValueError: the card's
        # metadata is wrong (a check failed), not the Hub; nothing was committed.
        if not isinstance(exc.__cause__, HfHubHTTPError) or not str(exc).startswith("Invalid metadata in README.md"):
            raise
        reasons = "; ".join(line.lstrip("- ").strip() for line in str(exc).splitlines()[1:] if line.strip()) or "no reason given"
        raise CheckFailed(Problem(CARD_NAME, f"the Hub refuses the card's metadata ({reasons}); fix [card.metadata] "
                                             "in the spec, build again, then push"), file=repo_id) from None
    except RuntimeError as exc:
        cause, why = exc.__cause__, None
        while cause is not None and why is None:
            why, cause = describe_remote(cause), cause.__cause__
        if why is None:
            raise
        raise RemoteError(f"{action}: {first_line(exc).rstrip('.')}: {why}", file=repo_id) from None


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
    return isinstance(exc, httpx2.TransportError) and not isinstance(exc, httpx2.ConnectError)


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



def remote_files(hub: HubClient, repo_id: str, revision: str) -> dict[str, RemoteFile]:
    with remote_errors(repo_id, f"listing files at {revision}"):
        entries = hub.api.list_repo_tree(repo_id, revision=revision, recursive=True, expand=False)
        return {
            e.path: RemoteFile(e.path, e.size, e.blob_id, e.lfs.sha256 if e.lfs else None)
            for e in entries
            if isinstance(e, RepoFile)
        }


@dataclass(frozen=True)
class Expected:
    """What the Hub must hold at a path for it to be this release's file: its size, its sha256 (what an LFS
    pointer names) and its git blob id (what the listing gives for a plain file; None for LFS-only sizes)."""

    sha256: str
    size: int
    blob_id: str | None


def matches(remote: RemoteFile, expected: Expected) -> bool:
    """Whether a remote file is the expected content: by LFS oid, or by git blob id for a plain file.
    Both sides come from release.json and the Hub's listing; the local disk is never consulted."""
    if remote.size != expected.size:
        return False
    if remote.sha256 is not None:
        return remote.sha256 == expected.sha256
    return expected.blob_id is not None and remote.blob_id == expected.blob_id


def release_paths(manifest: Manifest, dist: Path) -> dict[str, Expected]:
    """Every path a pushed release holds, as release.json says it must be: manifest files (with the git blob
    id build recorded), then release.json, SHA256SUMS and model.sig when signed (small bookkeeping files,
    read once here). A manifest of an older hf-release lacks blob ids: a staged file whose bytes still have
    the manifest's sha256 supplies it."""
    paths = {f.path_in_repo: Expected(f.sha256, f.size, f.git_blob_id or _legacy_blob_id(dist / f.path_in_repo, f))
             for f in manifest.files}
    for name in (MANIFEST_NAME, SUMS_NAME, SIGNATURE_NAME):
        if (dist / name).is_file():
            data = (dist / name).read_bytes()
            paths[name] = Expected(hashlib.sha256(data).hexdigest(), len(data), git_blob_id(data))
    return paths


def _legacy_blob_id(path: Path, f: ManifestFile) -> str | None:
    if f.size >= REGULAR_FILE_MAX_BYTES or not path.is_file():
        return None
    data = path.read_bytes()
    return git_blob_id(data) if hashlib.sha256(data).hexdigest() == f.sha256 else None


def verify_remote(
    hub: HubClient, manifest: Manifest, dist: Path, *, revision: str | None = None, commit: str | None = None,
    download: bool = False, wanted: dict[str, Expected] | None = None,
) -> dict[str, str]:
    """At the tag: the Hub's listing holds exactly the release's paths, each with the size and the LFS sha256
    (large files) or git blob id (small files) that release.json records, as the Hub records them. That
    trusts the Hub's index; with `download`, every file's bytes are also streamed from the Hub and hashed.

    Returns {"commit": …} the tag points at. With `commit`, the tag must point at exactly that commit.
    `wanted` is what push sent (its bookkeeping files as read for the commit), else read from `dist`.
    """
    repo_id, revision = manifest.repo_id, revision or manifest.version
    with remote_errors(repo_id, "reading refs"):
        refs = with_retries(lambda: hub.api.list_repo_refs(repo_id), "reading refs")
    tag = next((t for t in refs.tags if t.name == revision), None)
    problems: list[Problem] = []
    if tag is None and not any(b.name == revision for b in refs.branches):
        raise VerifyFailed(Problem(repo_id, f"has no tag or branch {revision!r}; push the release first"))
    target = tag.target_commit if tag else next(b.target_commit for b in refs.branches if b.name == revision)
    if commit is not None and target != commit:
        problems.append(Problem(repo_id, f"tag {revision} points at {target}, the push made {commit}"))
    remote = remote_files(hub, repo_id, target)
    wanted = wanted if wanted is not None else release_paths(manifest, dist)
    for path in sorted(wanted.keys() - remote.keys()):
        problems.append(Problem(f"{repo_id}@{revision}:{path}", "is missing on the Hub"))
    for path in sorted(remote.keys() - wanted.keys() - HUB_FILES):
        problems.append(Problem(f"{repo_id}@{revision}:{path}", "is on the Hub but not in the release (extra file)"))
    listed_alike = []
    for path in sorted(wanted.keys() & remote.keys()):
        sha256, size = wanted[path].sha256, wanted[path].size
        if matches(remote[path], wanted[path]):
            listed_alike.append(path)
        else:
            got = remote[path].sha256 or f"git blob {remote[path].blob_id}"
            problems.append(Problem(f"{repo_id}@{revision}:{path}", f"differs: Hub has {got} ({remote[path].size} B), the release has sha256 {sha256} ({size} B)"))
    downloaded = 0
    if download:
        # Pinned to the commit, not the tag: a tag moved meanwhile cannot mix two releases' bytes.
        for path, served in zip(listed_alike, served_digests(hub, repo_id, target, {p: wanted[p].size for p in listed_alike}), strict=True):
            downloaded += served.size
            sha256, size = wanted[path].sha256, wanted[path].size
            if (served.sha256, served.size) != (sha256, size):
                problems.append(Problem(
                    f"{repo_id}@{revision}:{path}",
                    f"bytes differ: the Hub serves sha256 {served.sha256} ({served.size}{'+' if served.more else ''} B), "
                    f"the release has sha256 {sha256} ({size} B)",
                ))
    if problems:
        raise VerifyFailed(problems)
    return {"commit": target, "files": str(len(wanted)), "downloaded": str(downloaded)}


DOWNLOAD_CHUNK = 1 << 20  # bytes held per file at a time: memory stays flat whatever the file size
DOWNLOAD_WORKERS = 4


@dataclass(frozen=True)
class Served:
    """A file as the Hub serves it: the sha256 and count of the bytes read."""

    sha256: str
    size: int
    more: bool  # the Hub sent more than the expected size (reading stopped there)


def served_digests(hub: HubClient, repo_id: str, commit: str, expected: dict[str, int]) -> list[Served]:
    """Each file of `expected` (path -> size) as the Hub serves it at `commit`, in order: streamed and
    hashed in memory, several files at a time, reading at most one chunk past the expected size."""

    def stream(url: str, limit: int) -> Served:
        sha256, read = hashlib.sha256(), 0
        with get_session().stream("GET", url, headers=build_hf_headers(token=hub.api.token),
                                  follow_redirects=True, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT) as response:
            hf_raise_for_status(response)
            for chunk in response.iter_bytes(DOWNLOAD_CHUNK):
                sha256.update(chunk)
                read += len(chunk)
                if read > limit:
                    return Served(sha256.hexdigest(), read, more=True)
        return Served(sha256.hexdigest(), read, more=False)

    def served(path: str) -> Served:
        url = hf_hub_url(repo_id, path, revision=commit, endpoint=hub.endpoint)
        with remote_errors(repo_id, f"downloading {path} at {commit[:12]}"):
            return with_retries(lambda: stream(url, expected[path]), f"downloading {path}")

    with ThreadPoolExecutor(max_workers=DOWNLOAD_WORKERS) as pool:
        return list(pool.map(served, expected))


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


def require_token(token: str | None) -> str:
    if not token:
        raise InputError("no Hugging Face token: set HF_TOKEN, pass --token-file FILE or --token-stdin, or run `hf auth login`", file="token")
    return token
