"""LFS transfers on the local Hub: the batch API, basic and multipart uploads, verification.

Upload hrefs carry no Authorization header (the client sends none): each is a signed ticket naming
one object, its size, its part size and the repo it is uploaded to, so a href authorizes exactly one
upload and nothing else. Objects are kept per repo (storage.py): the batch answers for the repo asked.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from release.localhub.errors import HubError
from release.localhub.fs import ObjectWriter
from release.localhub.records import SHA256_RE, RepoId
from release.localhub.storage import Storage
from release.localhub.wire import MAX_BATCH_OBJECTS, MAX_LFS_SIZE, GiB, b64, base_url, batch_error, json_body, unb64

TICKET_LIFETIME = 24 * 3600
LFS_JSON = "application/vnd.git-lfs+json"


@dataclass(frozen=True)
class _Ticket:
    """What a signed LFS upload href authorizes: one object of one size, cut in one chunk size, for one repo."""

    oid: str
    size: int
    chunk_size: int
    repo: RepoId

    @property
    def parts(self) -> int:
        return math.ceil(self.size / self.chunk_size)

    def part_size(self, number: int) -> int:
        return min(self.chunk_size, self.size - (number - 1) * self.chunk_size)


class LfsTransfers:
    """The LFS routes; the caller has checked the batch and verify requests' credentials."""

    def __init__(self, storage: Storage, upload_bytes: Counter[str], chunk_size: int) -> None:
        self.storage = storage
        self.upload_bytes = upload_bytes  # LFS oid -> bytes received, all attempts (HubStats)
        self.chunk_size = chunk_size

    async def batch(self, request: Request, repo: RepoId) -> Response:
        """The batch API's upload answer: signed hrefs for what is missing, nothing for what is stored."""
        body = await json_body(request)
        if body.get("operation") != "upload":
            raise HubError(422, "Only the upload operation is supported")
        objects = body.get("objects")
        if not isinstance(objects, list) or len(objects) > MAX_BATCH_OBJECTS:
            raise HubError(422, f"objects must be a list of at most {MAX_BATCH_OBJECTS}")
        base = base_url(request)
        verify_href = f"{base}/{repo.url_prefix}{repo.id}.git/info/lfs/objects/verify"
        answers = [self._batch_answer(obj, base, verify_href, repo) for obj in objects]
        multipart = any("header" in answer.get("actions", {}).get("upload", {}) for answer in answers)
        data = {"transfer": "multipart" if multipart else "basic", "objects": answers, "hash_algo": "sha256"}
        return JSONResponse(data, media_type=LFS_JSON)

    def _batch_answer(self, obj: object, base: str, verify_href: str, repo: RepoId) -> dict[str, Any]:
        oid, size = (obj.get("oid"), obj.get("size")) if isinstance(obj, dict) else (None, None)
        if not isinstance(oid, str) or not SHA256_RE.fullmatch(oid) or type(size) is not int or size < 0:
            return batch_error(oid, size, "oid must be a sha256 hex digest and size a non-negative integer")
        if size > MAX_LFS_SIZE:
            # Checked before any part URL is made: their number grows with the size a client claims.
            return batch_error(oid, size, f"object is larger than the {MAX_LFS_SIZE // GiB} GiB per-file limit")
        stored = self.storage.held_size(repo, oid)  # this repo's objects only: no oracle for the others'
        if stored == size:
            return {"oid": oid, "size": size}  # no actions: already stored, the client skips it
        if stored is not None:
            return batch_error(oid, size, f"object {oid} is stored with size {stored}")
        ticket = _Ticket(oid, size, self.chunk_size, repo)
        href = f"{base}/_lfs/{self._sign(ticket)}"
        upload: dict[str, Any] = {"href": href}
        if size > self.chunk_size:
            # Multipart: numbered part URLs in the header; the href itself takes the completion POST.
            parts = {str(n): f"{href}/{n}" for n in range(1, ticket.parts + 1)}
            upload["header"] = {"chunk_size": str(self.chunk_size), **parts}
        return {"oid": oid, "size": size, "actions": {"upload": upload, "verify": {"href": verify_href}}}

    async def verify(self, request: Request, repo: RepoId) -> Response:
        body = await json_body(request)
        oid, size = body.get("oid"), body.get("size")
        if not isinstance(oid, str) or not SHA256_RE.fullmatch(oid) or self.storage.held_size(repo, oid) != size:
            raise HubError(404, f"Object {oid} of size {size} is not stored")
        return JSONResponse({"oid": oid, "size": size}, media_type=LFS_JSON)

    def _sign(self, ticket: _Ticket) -> str:
        payload = {
            "o": ticket.oid,
            "s": ticket.size,
            "c": ticket.chunk_size,
            "x": int(time.time()) + TICKET_LIFETIME,
            "r": [ticket.repo.type, ticket.repo.namespace, ticket.repo.name],
        }
        raw = b64(json.dumps(payload, separators=(",", ":")))
        return f"{raw}.{self._mac(raw)}"

    def _mac(self, raw: str) -> str:
        return hmac.new(self.storage.secret, raw.encode(), hashlib.sha256).hexdigest()[:32]

    def _ticket(self, signed: str) -> _Ticket:
        """Upload hrefs carry no Authorization header: the signed ticket in the URL is the authority."""
        raw, _, mac = signed.partition(".")
        if not hmac.compare_digest(mac, self._mac(raw)):
            raise HubError(403, "Invalid upload URL")
        payload = json.loads(unb64(raw))
        if payload["x"] < time.time() or "r" not in payload:  # no repo: signed before objects were kept per repo
            raise HubError(403, "Expired upload URL: ask the LFS batch endpoint for a new one")
        return _Ticket(payload["o"], payload["s"], payload["c"], RepoId(*payload["r"]))

    async def _receive(self, request: Request, oid: str, expected_size: int) -> ObjectWriter:
        """Stream a request body into a temp file, hashing as it goes; refuse more bytes than announced."""
        writer = self.storage.fs.new_writer()
        try:
            async for chunk in request.stream():
                writer.write(chunk)
                self.upload_bytes[oid] += len(chunk)
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
        await run_in_threadpool(self.storage.fs.keep, writer, self.storage.lfs_path(t.oid))
        await run_in_threadpool(self.storage.hold, t.repo, t.oid)
        return JSONResponse({})

    async def upload_part(self, request: Request, ticket: str, part: str) -> Response:
        t = self._ticket(ticket)
        if not part.isdigit() or not 1 <= int(part) <= t.parts:
            raise HubError(400, f"Part number must be between 1 and {t.parts}")
        number = int(part)
        writer = await self._receive(request, t.oid, t.part_size(number))
        etag = writer.hexdigest()
        dest = self.storage.part_path(t.repo, t.oid, t.size, t.chunk_size, number)
        await run_in_threadpool(partial(self.storage.fs.keep, writer, dest, overwrite=True))
        return JSONResponse({}, headers={"ETag": f'"{etag}"'})

    async def complete(self, request: Request, ticket: str) -> Response:
        t = self._ticket(ticket)
        body = await json_body(request)
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
        await run_in_threadpool(self.storage.assemble_parts, t.repo, t.oid, t.size, t.chunk_size, etags)
        return JSONResponse({})
