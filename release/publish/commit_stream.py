"""The release's one commit at any file count: content uploaded in chunks, then the commit streamed.

huggingface_hub's create_commit holds ~6 KB per file until it returns (the decoded LFS-batch answers,
hf_thread_map's futures, each operation with its 512-byte sample) and joins the whole NDJSON commit, every
small file base64 inside it, into one bytes object: ~350 MB at 50,000 files. Here the same two stages keep
memory to one chunk of files:

- upload: `HfApi.preupload_lfs_files` (the Hub's preupload answer: LFS, regular or ignored; then LFS or Xet
  content through huggingface_hub) for PREUPLOAD_CHUNK files at a time; each chunk's operations are
  dropped once their upload mode is known, keeping one small tuple per file;
- commit: huggingface_hub's NDJSON lines (`_prepare_commit_payload`'s format), generated as they are sent,
  each small file read, checked against release.json and base64-encoded as its line is written. The exact
  Content-Length is declared up front (an ordinary request to any server). A file whose bytes are not the
  built ones stops the stream before its line: the Hub receives fewer bytes than declared and commits nothing.

The POST goes through huggingface_hub's own session, headers and `hf_raise_for_status` (auth, user agent,
endpoint, error mapping stay the library's). What this relies on of the library's internals (the upload
mode it records on an operation, its commit line format, `HfApi._build_hf_headers`, `_validate_yaml`) is
pinned by tests/publish/test_commit_stream.py, which fails when an upgrade changes it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from huggingface_hub import constants
from huggingface_hub.utils import get_session, hf_raise_for_status

from release.errors import Problem, PublishRefused
from release.hub.client import HubClient
from release.publish.context import PushContext
from release.publish.landed import refuse_what_the_hub_would_drop
from release.publish.upload_meter import CHANGED_SINCE_BUILD, CHANGED_WHILE_SENT, MeteredAdd, UploadMeter
from release.publish.xet_meter import metered_xet
from release.staged import moved_since

# Files whose upload mode is asked (and whose LFS content is uploaded) at once: the Hub's preupload takes 256
# per request (huggingface_hub splits), so one chunk is 4 requests; its state is a few MB, then freed.
PREUPLOAD_CHUNK = 1_000
# LFS uploads at once (the client's default is 5). A killed push loses the part-uploaded content of every file
# in flight (multipart parts are not resumable across processes through the client): 2 bounds that loss to
# two shards while still overlapping one file's tail with the next one's start. Xet manages its own transfers.
LFS_FILES_IN_FLIGHT = 2
MAX_REDIRECTS = 3  # same-Hub redirects of the commit POST followed (a renamed repo answers with one)
FLUSH_BYTES = 256 * 1024  # commit lines are handed to the socket in writes of about this size

REGULAR, LFS, IGNORED = "regular", "lfs", "ignored"  # how a file travels: inside the commit, as a pointer, not at all


@dataclass(frozen=True)
class CommitBody:
    """The commit's NDJSON, ready to stream: the header, then one line per file (by upload mode), then deletes."""

    dist: Path
    header: dict[str, str]
    adds: list[tuple[str, str, int, str]]  # path in repo, sha256 (release.json's), size, REGULAR/LFS/IGNORED
    deletes: list[str]
    seen: dict[str, list[int]]  # each file's stat as the preflight saw it
    meter: UploadMeter

    def length(self) -> int:
        """The body's size in bytes, computed without reading a file (a small file's line has a known length)."""
        total = len(_line("header", self.header))
        for path, sha256, size, mode in self.adds:
            if mode == REGULAR:
                prefix, suffix = _file_line(path)
                total += len(prefix) + 4 * -(-size // 3) + len(suffix)
            elif mode == LFS:
                total += len(_lfs_line(path, sha256, size))
        return total + sum(len(_line("deletedFile", {"path": path})) for path in self.deletes)

    def chunks(self) -> Iterator[bytes]:
        """The body, each small file read for sending as its line is written (PublishRefused if its bytes moved)."""
        buffer = bytearray(_line("header", self.header))
        for path, sha256, size, mode in self.adds:
            if mode == REGULAR:
                prefix, suffix = _file_line(path)
                buffer += prefix + base64.b64encode(self._read(path, sha256, size)) + suffix
            elif mode == LFS:
                buffer += _lfs_line(path, sha256, size)
            if len(buffer) >= FLUSH_BYTES:
                yield bytes(buffer)
                buffer.clear()
        for path in self.deletes:
            buffer += _line("deletedFile", {"path": path})
        yield bytes(buffer)

    def _read(self, path: str, sha256: str, size: int) -> bytes:
        """A small file's bytes, only if they are the ones release.json lists (and its stat the preflight's)."""
        what = moved_since(self.dist / path, self.seen.get(path))
        if what:
            raise PublishRefused(Problem(path, CHANGED_WHILE_SENT.format(what=what)))
        with open(self.dist / path, "rb") as file:
            data = file.read(size + 1)
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            raise PublishRefused(Problem(path, CHANGED_SINCE_BUILD))
        self.meter.count(path, size)
        return data


def _line(key: str, value: Mapping[str, object]) -> bytes:
    return (json.dumps({"key": key, "value": value}) + "\n").encode()


def _file_line(path: str) -> tuple[bytes, bytes]:
    """A small file's line around its base64 content (json.dumps' own spelling, as huggingface_hub sends it)."""
    return (
        b'{"key": "file", "value": {"content": "',
        f'", "path": {json.dumps(path)}, "encoding": "base64"}}}}\n'.encode(),
    )


def _lfs_line(path: str, sha256: str, size: int) -> bytes:
    return _line("lfsFile", {"path": path, "algo": "sha256", "oid": sha256, "size": size})


def upload_content(ctx: PushContext, xet: bool, header: dict[str, str]) -> CommitBody:
    """Upload the LFS (or Xet) content of every file to send, PREUPLOAD_CHUNK files at a time; the commit to send.

    Every add carries the sha256 release.json lists (MeteredAdd): over LFS it is also the pointer's oid, which
    the Hub checks against the bytes it receives, so a large file is not hashed a second time. hf_xet would take
    a preset sha256 without checking it, so over Xet it is left for hf_xet to compute and compared with
    release.json before anything is committed. The card is checked by the Hub's validate-yaml first, as
    create_commit does, before any byte is uploaded."""
    plan, api, dist = ctx.plan, ctx.hub.api, ctx.staged.dist
    files = plan.add + plan.change
    paths = {path for path, _ in files}
    if "README.md" in paths:
        api._validate_yaml((dist / "README.md").read_bytes().decode(), repo_type=constants.REPO_TYPE_MODEL)
    # huggingface_hub looks for a committed .gitignore only in the operations it is given: give it to every chunk
    gitignore = (dist / ".gitignore").read_bytes().decode() if ".gitignore" in paths else None
    adds: list[tuple[str, str, int, str]] = []
    for start in range(0, len(files), PREUPLOAD_CHUNK):
        ops = [_operation(ctx, path, xet) for path, _ in files[start : start + PREUPLOAD_CHUNK]]
        with metered_xet(ctx.meter.xet):  # hf_xet's own report of what it sent (xet_meter.py)
            api.preupload_lfs_files(
                plan.repo_id,
                ops,
                create_pr=ctx.options.create_pr,
                num_threads=LFS_FILES_IN_FLIGHT,
                gitignore_content=gitignore,
            )
        if xet:
            ctx.meter.xet_uploads += any(upload_mode(op) == LFS for op in ops)
            _uploaded_as_built(ops)
        adds += [
            (op.path_in_repo, ctx.wanted[op.path_in_repo].sha256, ctx.wanted[op.path_in_repo].size, upload_mode(op))
            for op in ops
        ]
    refuse_what_the_hub_would_drop(ctx, {path: mode for path, _, _, mode in adds})  # before the commit is sent
    return CommitBody(dist, header, adds, list(plan.delete), ctx.seen, ctx.meter)


def _operation(ctx: PushContext, path: str, xet: bool) -> MeteredAdd:
    expected = ctx.wanted[path].sha256
    op = MeteredAdd(
        path_in_repo=path,
        path_or_fileobj=str(ctx.staged.dist / path),
        meter=ctx.meter,
        expected_sha256=expected,
        expected_stat=ctx.seen.get(path),
    )
    if not xet:
        op.upload_info.sha256 = bytes.fromhex(expected)
    return op


def upload_mode(op: MeteredAdd) -> str:
    """How the Hub's preupload answer says the file travels (huggingface_hub records it on the operation)."""
    if op._should_ignore:
        return IGNORED
    return LFS if op._upload_mode == "lfs" else REGULAR


def _uploaded_as_built(ops: list[MeteredAdd]) -> None:
    """After a Xet preupload: the sha256 hf_xet computed over the bytes it sent is release.json's, or nothing
    is committed."""
    changed = [
        op.path_in_repo for op in ops if op.upload_info.is_hashed and op.upload_info.sha256.hex() != op.expected_sha256
    ]
    if changed:
        raise PublishRefused([Problem(path, CHANGED_SINCE_BUILD) for path in changed])


def commit_header(summary: str, description: str, parent: str | None) -> dict[str, str]:
    header = {"summary": summary, "description": description}
    if parent is not None:
        header["parentCommit"] = parent
    return header


def send_commit(hub: HubClient, repo_id: str, body: CommitBody, *, create_pr: bool) -> tuple[object, str | None]:
    """POST the commit (once: retries are the caller's); (the commit id the Hub answered, its pull request URL)."""
    headers = {
        "Content-Type": "application/x-ndjson",
        **hub.api._build_hf_headers(),
        "Content-Length": str(body.length()),
    }
    url = f"{hub.api.endpoint}/api/models/{repo_id}/commit/{quote(constants.DEFAULT_REVISION, safe='')}"
    for _ in range(MAX_REDIRECTS + 1):
        # A streamed body cannot be replayed by the client, so a 307/308 (the Hub's answer for a renamed repo's old
        # name) is followed here, with the body made again, and only on the same Hub: the token goes nowhere else.
        response = get_session().post(
            url,
            headers=headers,
            content=body.chunks(),
            params={"create_pr": "1"} if create_pr else None,
            follow_redirects=False,
        )
        target = urljoin(url, response.headers.get("location", "")) if response.status_code in (307, 308) else None
        if target is None or urlsplit(target)[:2] != urlsplit(url)[:2]:
            break
        url = target
    hf_raise_for_status(response, endpoint_name="commit")
    answer = response.json()
    return answer.get("commitOid"), answer.get("pullRequestUrl") if create_pr else None
