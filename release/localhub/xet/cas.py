"""The local Hub's Xet routes: the token routes, the CAS (on the Hub's own origin, under `/_xet/cas`), the
presigned xorb range fetches and the plain-bytes bridge.

The CAS answers what hf_xet 1.8.0 asks (`docs/xet/api.md`; `shared/reference/xet.md` for what the spec leaves
out): it first tries `POST /v1/xorb-grants/…`, `POST /v2/shards` and `GET /v2/reconstructions/…` and falls back
to the v1 routes on 404, which is what every route not served here answers.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from release.localhub.auth import Auth
from release.localhub.errors import HubError
from release.localhub.records import Entry, RepoId
from release.localhub.stats import HubStats
from release.localhub.storage import Storage
from release.localhub.wire import base_url, bounded_body
from release.localhub.xet.hashes import HASH_HEX_RE, from_hex, to_hex
from release.localhub.xet.shard import MAX_SHARD_BYTES, ShardError, dedup_answer, parse_upload_shard
from release.localhub.xet.store import XetStore
from release.localhub.xet.tokens import TOKEN_LIFETIME, CasGrant, Signer
from release.localhub.xet.xorb import MAX_XORB_BYTES, MAX_XORB_FOOTER, XorbError

Handler = Callable[[Request], Awaitable[Response]]
CAS_PREFIX = "/_xet/cas"
MAX_DEDUP_XORBS = 16
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


def bridge_base(request: Request) -> str:
    """The bridge's origin: the Hub's, under the other name of loopback. The real Hub's bridge is another host,
    and huggingface_hub reads a Xet file's metadata off the 302 only when it points to another origin."""
    parts = urlsplit(base_url(request))
    host = parts.hostname or ""
    other = {"127.0.0.1": "localhost", "localhost": "127.0.0.1"}.get(host, host)
    netloc = other + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class XetApi:
    def __init__(self, storage: Storage, auth: Auth, stats: HubStats) -> None:
        self.storage = storage
        self.auth = auth
        self.stats = stats
        self.store = XetStore(storage)
        self.signer = Signer(storage.secret)

    # ---- the Hub's side ---------------------------------------------------------------------------

    async def token(self, request: Request, repo: RepoId, revision: str, write: bool) -> Response:
        """`GET …/xet-{read|write}-token/{rev}`: 401 without a known token, 403 for a read token asking to write,
        404 for an unknown repo or revision."""
        if write:
            create_pr = request.query_params.get("create_pr", "").lower() in ("1", "true")
            account = self.auth.writable(request, repo, pull_request=create_pr)
            name = account.name
        else:
            self.auth.downloadable(request, repo)
            reader = self.auth.account(request)
            name = reader.name if reader else ""
        self.storage.resolve(repo, revision)
        expires = int(time.time()) + TOKEN_LIFETIME
        token = self.signer.grant(CasGrant(repo, name, write, expires))
        cas_url = base_url(request) + CAS_PREFIX
        headers = {"X-Xet-Cas-Url": cas_url, "X-Xet-Access-Token": token, "X-Xet-Token-Expiration": str(expires)}
        return JSONResponse({"accessToken": token, "exp": expires, "casUrl": cas_url}, headers=headers)

    def resolve(self, request: Request, repo: RepoId, commit: str, entry: Entry) -> Response:
        """A Xet file's resolve, as the Hub answers it: 302 to the bridge, the Xet hash and the token route."""
        assert entry.lfs is not None and entry.xet_hash is not None
        base = base_url(request)
        auth_link = f"{base}/api/{repo.type}s/{repo.id}/xet-read-token/{commit}"
        info_link = f"{base}{CAS_PREFIX}/v1/reconstructions/{entry.xet_hash}"
        etag = f'"{entry.lfs.oid}"'
        headers = {
            "Location": f"{bridge_base(request)}/_xet/bridge/{self.signer.bridge(entry.lfs.oid, entry.size)}",
            "X-Repo-Commit": commit,
            "X-Xet-Hash": entry.xet_hash,
            "Link": f'<{auth_link}>; rel="xet-auth", <{info_link}>; rel="xet-reconstruction-info"',
            "X-Linked-Size": str(entry.size),
            "X-Linked-Etag": etag,
            "ETag": etag,
        }
        return Response(status_code=302, headers=headers)

    async def bridge(self, request: Request, signed: str) -> Response:
        """The plain bytes of a Xet file, for clients without hf_xet (the URL is the authority)."""
        sha256, size = self.signer.open_bridge(signed)
        path = self.storage.lfs_path(sha256)
        if not path.exists():
            raise HubError(404, "Not found")
        requested = _RANGE.fullmatch(request.headers.get("range", ""))
        if requested and int(requested.group(1)) >= size:
            raise HubError(416, "Requested range not satisfiable", headers={"Content-Range": f"bytes */{size}"})
        self.stats.xet_bytes["bridge_files"] += 1
        return FileResponse(path, headers={"ETag": f'"{sha256}"'}, media_type="application/octet-stream")

    # ---- the CAS ----------------------------------------------------------------------------------

    def _grant(self, request: Request, *, write: bool) -> CasGrant:
        grant = self.signer.open_grant(request.headers.get("authorization"))
        if write and not grant.write:
            raise HubError(403, "This CAS token may only read")
        return grant

    async def upload_xorb(self, request: Request, xorb: str) -> Response:
        grant = self._grant(request, write=True)
        if not HASH_HEX_RE.fullmatch(xorb):
            raise HubError(400, "Malformed xorb hash")
        body = await bounded_body(request, MAX_XORB_BYTES + MAX_XORB_FOOTER)
        self.stats.xet_bytes["xorb_received"] += len(body)
        try:
            inserted = await run_in_threadpool(self.store.store_xorb, grant.repo, grant.account, xorb, body)
        except XorbError as exc:
            raise HubError(400, f"Xorb {xorb} refused: {exc}") from exc
        self.stats.xet_bytes["xorb_new" if inserted else "xorb_known"] += len(body)
        return JSONResponse({"was_inserted": inserted})

    async def upload_shard(self, request: Request) -> Response:
        grant = self._grant(request, write=True)
        body = await bounded_body(request, MAX_SHARD_BYTES)
        self.stats.xet_bytes["shard_received"] += len(body)
        try:
            shard = parse_upload_shard(body)
        except ShardError as exc:
            raise HubError(400, f"Shard refused: {exc}") from exc
        for listed in shard.xorbs:  # the new xorbs it lists must have been uploaded to this repo or by this account
            name = to_hex(listed.hash)
            if not self.store.holds_xorb(grant.repo, grant.account, name):
                raise HubError(400, f"Shard refused: it lists xorb {name}, never uploaded to {grant.repo.id}")
        for info in shard.files:
            await run_in_threadpool(self.store.register_file, grant.repo, grant.account, info)
        self.stats.xet_bytes["shard_files"] += len(shard.files)
        return JSONResponse({"result": 1})

    async def dedup(self, request: Request, chunk: str) -> Response:
        grant = self._grant(request, write=False)
        try:
            raw = from_hex(chunk)
        except ValueError as exc:
            raise HubError(400, "Malformed chunk hash") from exc
        xorbs = await run_in_threadpool(self.store.xorbs_with_chunk, grant.repo, grant.account, raw, MAX_DEDUP_XORBS)
        if not xorbs:
            raise HubError(404, "Chunk not tracked")
        listing = [
            (from_hex(x), [(c.hash, c.size) for c in self.store.chunks(x)], self.store.xorb_path(x).stat().st_size)
            for x in xorbs
        ]
        return Response(dedup_answer(listing), media_type="application/octet-stream")

    async def reconstruction(self, request: Request, file: str) -> Response:
        grant = self._grant(request, write=False)
        if not HASH_HEX_RE.fullmatch(file):
            raise HubError(400, "Malformed file hash")
        record = self.store.file_record(grant.repo, file)
        if record is None:
            raise HubError(404, f"File {file} not found")
        size = record["size"]
        first, last = 0, size - 1
        if requested := _RANGE.fullmatch(request.headers.get("range", "")):
            first = int(requested.group(1))
            last = min(int(requested.group(2)) if requested.group(2) else last, last)
            if first >= size:
                raise HubError(416, "Requested range not satisfiable")
        return JSONResponse(self._plan(request, record["terms"], first, last))

    def _plan(self, request: Request, terms: list[list[object]], first: int, last: int) -> dict[str, object]:
        """The v1 reconstruction of bytes [first, last]: terms cut to whole chunks, and per xorb one fetch per
        disjoint chunk range (hf_xet mishandles repeated ranges)."""
        out_terms: list[dict[str, object]] = []
        wanted: dict[str, list[tuple[int, int]]] = {}
        offset_into_first = 0
        pos = 0
        for xorb, start, end, _ in terms:
            assert isinstance(xorb, str) and isinstance(start, int) and isinstance(end, int)
            chunks = self.store.chunks(xorb)
            lo = hi = None
            for index in range(start, end):
                size = chunks[index].size
                if pos + size > first and pos <= last:
                    if lo is None:
                        lo = index
                        if not out_terms:
                            offset_into_first = first - pos
                    hi = index + 1
                pos += size
            if lo is not None and hi is not None:
                length = sum(c.size for c in chunks[lo:hi])
                out_terms.append({"hash": xorb, "unpacked_length": length, "range": {"start": lo, "end": hi}})
                wanted.setdefault(xorb, []).append((lo, hi))
        fetch_info: dict[str, list[dict[str, object]]] = {}
        base = base_url(request)
        for xorb, ranges in wanted.items():
            chunks = self.store.chunks(xorb)
            for lo, hi in _merged(ranges):
                byte_first, byte_last = chunks[lo].start, chunks[hi - 1].end - 1
                url = f"{base}/_xet/fetch/{self.signer.xorb_range(xorb, byte_first, byte_last)}"
                entry: dict[str, object] = {
                    "range": {"start": lo, "end": hi},
                    "url": url,
                    "url_range": {"start": byte_first, "end": byte_last},
                }
                fetch_info.setdefault(xorb, []).append(entry)
        return {"offset_into_first_range": offset_into_first, "terms": out_terms, "fetch_info": fetch_info}

    async def fetch(self, request: Request, signed: str) -> Response:
        """A presigned byte range of a xorb (the URL is the authority; the Range asked must lie within it)."""
        xorb, first, last = self.signer.open_xorb_range(signed)
        requested = _RANGE.fullmatch(request.headers.get("range", ""))
        if requested:
            asked_first = int(requested.group(1))
            asked_last = int(requested.group(2)) if requested.group(2) else last
            if asked_first < first or asked_last > last or asked_first > asked_last:
                raise HubError(403, "The Range asked is not the one this URL was signed for")
            first, last = asked_first, asked_last
        with self.store.xorb_path(xorb).open("rb") as f:
            f.seek(first)
            data = f.read(last - first + 1)
        self.stats.xet_bytes["fetch_sent"] += len(data)
        total = self.store.xorb_path(xorb).stat().st_size
        headers = {"Content-Range": f"bytes {first}-{first + len(data) - 1}/{total}"}
        return Response(data, status_code=206, headers=headers, media_type="application/octet-stream")

    async def not_served(self, request: Request) -> Response:
        """v2, xorb-grants, telemetry and any other route: 404, on which hf_xet falls back to v1."""
        raise HubError(404, "Not found")

    def route(self, rest: list[str]) -> tuple[str, dict[str, Handler]]:
        """The handler of a path under `/_xet/`."""
        match rest:
            case ["cas", "v1", "xorbs", "default", xorb]:
                return "xet_xorb", {"POST": partial(self.upload_xorb, xorb=xorb)}
            case ["cas", "v1", "shards"]:
                return "xet_shard", {"POST": self.upload_shard}
            case ["cas", "v1", "reconstructions", file]:
                return "xet_reconstruction", {"GET": partial(self.reconstruction, file=file)}
            case ["cas", "v1", "chunks", "default" | "default-merkledb", chunk]:
                return "xet_dedup", {"GET": partial(self.dedup, chunk=chunk)}
            case ["fetch", signed]:
                return "xet_fetch", {"GET": partial(self.fetch, signed=signed)}
            case ["bridge", signed]:
                return "xet_bridge", {"GET": partial(self.bridge, signed=signed)}
        return "xet_not_served", {m: self.not_served for m in ("GET", "POST", "PUT", "DELETE")}


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out
