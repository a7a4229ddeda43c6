"""Remote verify: the Hub holds exactly the release at its tag, by its listing or by every byte it serves."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

from huggingface_hub import constants, hf_hub_url
from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

from release.errors import Problem, VerifyFailed
from release.hub.client import (
    HubClient,
    RemoteFile,
    branch_commit,
    list_refs,
    remote_errors,
    remote_files,
    tag_commit,
    with_retries,
)
from release.hub.transport import answer_limit
from release.publish.files import Expected, matches, release_paths
from release.publish.reconstruct import reconstructed_digests, xet_downloads_possible
from release.staged import StagedRelease
from release.staged.names import HUB_FILES
from release.util.wording import exact_size


def verify_remote(
    hub: HubClient,
    staged: StagedRelease,
    *,
    revision: str | None = None,
    commit: str | None = None,
    download: bool = False,
    wanted: dict[str, Expected] | None = None,
    kept: Collection[str] | None = None,
) -> dict[str, str]:
    """At the tag: the Hub's listing holds exactly the release's paths, each with the size and the LFS sha256
    (large files) or git blob id (small files) that release.json records, as the Hub records them. That
    trusts the Hub's index; with `download`, every file's bytes are also streamed from the Hub and hashed, and
    each Xet-backed file is also rebuilt through hf_xet (where it is installed and not switched off) and hashed.

    Returns {"commit": …} the tag points at. With `commit`, the tag must point at exactly that commit.
    `wanted` is what push sent (its digests of the bookkeeping files, not computed again), else from `staged`.
    `kept`: the files a `push --keep-extra` kept beside the release; by default, every file the tagged commit
    carried over unchanged from its parent (a file the release's own commit added is never the release's).
    """
    repo_id, named, revision = staged.manifest.repo_id, revision is not None, revision or staged.manifest.version
    refs = list_refs(hub, repo_id)
    target = tag_commit(refs, revision) or branch_commit(refs, revision)
    if target is None:
        if not named:  # the version's own tag: this release was not pushed (yet)
            raise VerifyFailed(Problem(repo_id, f"has no tag {revision!r}; push the release first"))
        refs_held = [r.name for r in (*refs.tags, *refs.branches)]
        held = ", ".join(refs_held[:10]) + (", …" if len(refs_held) > 10 else "")
        raise VerifyFailed(
            Problem(repo_id, f"has no tag or branch {revision!r}; check --revision (it has: {held or 'none'})")
        )
    problems: list[Problem] = []
    if commit is not None and target != commit:
        problems.append(Problem(repo_id, f"tag {revision} points at {target}, the push made {commit}"))
    remote = remote_files(hub, repo_id, target)
    wanted = wanted if wanted is not None else release_paths(staged)
    for path in sorted(wanted.keys() - remote.keys()):
        problems.append(Problem(f"{repo_id}@{revision}:{path}", "is missing on the Hub"))
    extra = remote.keys() - wanted.keys() - HUB_FILES
    if extra and kept is None:
        kept = carried_over(hub, repo_id, target, {p: remote[p] for p in extra})
    for path in sorted(extra - set(kept or ())):
        problems.append(Problem(f"{repo_id}@{revision}:{path}", "is on the Hub but not in the release (extra file)"))
    listed_alike = []
    for path in sorted(wanted.keys() & remote.keys()):
        sha256, size = wanted[path].sha256, wanted[path].size
        if matches(remote[path], wanted[path]):
            listed_alike.append(path)
        else:
            got = remote[path].sha256 or f"git blob {remote[path].blob_id}"
            problems.append(
                Problem(
                    f"{repo_id}@{revision}:{path}",
                    f"differs: Hub has {got} ({exact_size(remote[path].size)}), "
                    f"the release has sha256 {sha256} ({exact_size(size)})",
                )
            )
    downloaded = reconstructed = 0
    if download:
        # Pinned to the commit, not the tag: a tag moved meanwhile cannot mix two releases' bytes.
        for path, served in zip(
            listed_alike, served_digests(hub, repo_id, target, {p: wanted[p].size for p in listed_alike}), strict=True
        ):
            downloaded += served.size
            sha256, size = wanted[path].sha256, wanted[path].size
            if (served.sha256, served.size) != (sha256, size):
                problems.append(
                    Problem(
                        f"{repo_id}@{revision}:{path}",
                        f"bytes differ: the Hub serves sha256 {served.sha256} "
                        f"({exact_size(served.size)}{' or more' if served.more else ''}), "
                        f"the release has sha256 {sha256} ({exact_size(size)})",
                    )
                )
        # The path hf_xet users download by: each Xet-backed file rebuilt from the CAS's reconstruction.
        rebuilt = {p: wanted[p].size for p in listed_alike if remote[p].xet_hash} if xet_downloads_possible() else {}
        for path, (got, got_size) in zip(rebuilt, reconstructed_digests(hub, repo_id, target, rebuilt), strict=True):
            reconstructed += got_size
            sha256, size = wanted[path].sha256, wanted[path].size
            if (got, got_size) != (sha256, size):
                problems.append(
                    Problem(
                        f"{repo_id}@{revision}:{path}",
                        "bytes differ through Xet reconstruction: "
                        f"hf_xet rebuilds sha256 {got} ({exact_size(got_size)}), "
                        f"the release has sha256 {sha256} ({exact_size(size)})",
                    )
                )
    if problems:
        raise VerifyFailed(problems)
    return {
        "commit": target,
        "files": str(len(wanted)),
        "downloaded": str(downloaded),
        "reconstructed": str(reconstructed),
    }


def carried_over(hub: HubClient, repo_id: str, commit: str, files: dict[str, RemoteFile]) -> set[str]:
    """Which of `files` (at `commit`) its parent commit held alike: files the commit kept, not added."""
    what = f"reading the parent of {commit[:12]}"
    url = f"{hub.endpoint}/api/models/{repo_id}/commits/{quote(commit, safe='')}"

    def first_page() -> object:
        response = get_session().get(url, headers=build_hf_headers(token=hub.api.token))
        hf_raise_for_status(response)
        return response.json()

    with remote_errors(repo_id, what):
        page = with_retries(first_page, what)
    parent = page[1].get("id") if isinstance(page, list) and len(page) > 1 and isinstance(page[1], dict) else None
    if not isinstance(parent, str):
        return set()
    before = remote_files(hub, repo_id, parent)
    return {p for p, f in files.items() if p in before and before[p].blob_id == f.blob_id}


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
        with get_session().stream(
            "GET",
            url,
            headers=build_hf_headers(token=hub.api.token),
            follow_redirects=True,
            timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT,
        ) as response:
            hf_raise_for_status(response)
            for chunk in response.iter_bytes(DOWNLOAD_CHUNK):
                sha256.update(chunk)
                read += len(chunk)
                if read > limit:
                    return Served(sha256.hexdigest(), read, more=True)
        return Served(sha256.hexdigest(), read, more=False)

    def served(path: str) -> Served:
        url = hf_hub_url(repo_id, path, revision=commit, endpoint=hub.endpoint)
        # The file's own size bounds its answer (the stream stops a chunk past it; raw reads arrive in smaller pieces).
        with (
            remote_errors(repo_id, f"downloading {path} at {commit[:12]}"),
            answer_limit(expected[path] + 2 * DOWNLOAD_CHUNK),
        ):
            return with_retries(lambda: stream(url, expected[path]), f"downloading {path}")

    with ThreadPoolExecutor(max_workers=DOWNLOAD_WORKERS) as pool:
        return list(pool.map(served, expected))
