"""The local Hub's wire formats: request bodies read within bounds, commit lines parsed, answers shaped.

Every reader here refuses what is malformed or past its bound with a HubError (a 4xx naming the
limit) before doing the work the input asks for.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from release.localhub.errors import HubError
from release.localhub.records import AddFile, AddLfsFile, Delete, Entry, Operation, RepoId, RepoMeta, validate_path
from release.util.jsonio import parse

MiB = 1024 * 1024
GiB = 1024 * MiB
# Bounds on what a client may ask for: each is far above what huggingface_hub sends, and each is
# checked before the work it would cause (memory, part URLs, disk) is done.
MAX_COMMIT_BODY = 512 * MiB  # regular files travel base64 inside the commit; LFS content never does
MAX_COMMIT_OPERATIONS = 100_000  # lines, header included: a repo of the Hub's recommended < 100k files in one commit
MAX_JSON_BODY = 16 * MiB
MAX_CARD_BODY = 8 * MiB
MAX_LFS_SIZE = 500 * GiB  # the Hub's own per-file limit is lower (50 GB over LFS)
MAX_BATCH_OBJECTS = 1000  # the client sends at most 256 per batch request
MAX_PREUPLOAD_FILES = 1000  # the client sends at most 256 per preupload request
MAX_PATHS_INFO = 10_000
MAX_LISTED = 1000


def error_response(err: HubError) -> Response:
    # Header values must be latin-1 and single-line; messages may quote paths in any script.
    safe = err.message.encode("ascii", "backslashreplace").decode().replace("\r", " ").replace("\n", " ")
    headers = {**err.headers, "X-Error-Message": safe}
    if err.code:
        headers["X-Error-Code"] = err.code
    return JSONResponse({"error": err.message}, status_code=err.status, headers=headers)


def truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true", "yes")


def lfs_patterns(gitattributes: str) -> list[str]:
    return [line.split()[0] for line in gitattributes.splitlines() if "filter=lfs" in line.split()[1:]]


def matches_gitattributes(pattern: str, path: str) -> bool:
    if "/" not in pattern:  # like git: a bare pattern matches the name at any depth
        return fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    pattern = pattern.lstrip("/")
    return fnmatchcase(path, pattern) or fnmatchcase(path, pattern.replace("**/", ""))


def batch_error(oid: object, size: object, message: str) -> dict[str, Any]:
    valid_size = size if type(size) is int else 0
    return {"oid": str(oid)[:64], "size": valid_size, "error": {"code": 422, "message": message}}


def sample_and_size(item: Mapping[str, Any], path: str) -> tuple[bytes, int]:
    """A preupload entry's first bytes and size, both bounded."""
    sample, size = item.get("sample", ""), item.get("size", 0)
    if not isinstance(sample, str) or len(sample) > 1024 or type(size) is not int or not 0 <= size <= MAX_LFS_SIZE:
        raise HubError(400, f"Invalid sample or size for {path}: a base64 sample of at most 512 bytes and a size")
    try:
        return base64.b64decode(sample, validate=True), size
    except binascii.Error as exc:
        raise HubError(400, f"Invalid sample for {path}: not base64") from exc


def html_paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(part)}</p>" for part in text.split("\n\n") if part.strip())


def listed(repo: RepoId, meta: RepoMeta) -> dict[str, Any]:
    """A repo as `/api/models` lists it."""
    item: dict[str, Any] = {
        "_id": hashlib.sha1(f"{repo.type}/{repo.id}".encode(), usedforsecurity=False).hexdigest()[:24],
        "id": repo.id,
        "author": repo.namespace,
        "private": meta.private,
        "gated": meta.gated,
        "createdAt": meta.created_at,
        "downloads": 0,
        "likes": 0,
        "tags": [],
    }
    if repo.type == "model":
        item["modelId"] = repo.id
    return item


def path_info(path: str, entry: Entry | None, dirs: Mapping[str, str]) -> dict[str, Any]:
    if entry is None:
        return {"type": "directory", "oid": dirs[path], "size": 0, "path": path}
    info: dict[str, Any] = {"type": "file", "oid": entry.oid, "size": entry.size, "path": path}
    if entry.lfs:
        info["lfs"] = {"oid": entry.lfs.oid, "size": entry.lfs.size, "pointerSize": entry.lfs.pointer_size}
    if entry.xet_hash:
        info["xetHash"] = entry.xet_hash
    return info


def card_tags(card: Mapping[str, Any] | None) -> list[str]:
    if not card:
        return []
    tags = [t for t in card.get("tags") or [] if isinstance(t, str)] if isinstance(card.get("tags"), list) else []
    if isinstance(card.get("library_name"), str):
        tags.append(card["library_name"])
    if isinstance(card.get("license"), str):
        tags.append(f"license:{card['license']}")
    return tags


def parse_commit(body: bytes) -> tuple[dict[str, Any], list[Operation]]:
    header: dict[str, Any] | None = None
    operations: list[Operation] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        if number > MAX_COMMIT_OPERATIONS:
            raise HubError(413, f"A commit holds at most {MAX_COMMIT_OPERATIONS} operations; split it")
        try:
            item = parse(line, detect_encoding=True)  # nesting bounded before the parser recurses
            key, value = item["key"], item["value"]
        except RecursionError as exc:
            raise HubError(400, f"Line {number} of the commit is nested too deeply") from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise HubError(400, f"Line {number} of the commit is not a {{key, value}} JSON object") from exc
        if not isinstance(value, dict):
            raise HubError(400, f"Line {number} of the commit has no value object")
        if key == "header":
            header = value
        elif key == "file":
            path = validate_path(value.get("path"))
            content = value.get("content", "")
            try:
                if value.get("encoding", "base64") == "base64":
                    data = base64.b64decode(content, validate=True)
                else:
                    data = str(content).encode()
            except (binascii.Error, TypeError, ValueError) as exc:
                raise HubError(400, f"Content of {path} is not valid base64") from exc
            operations.append(AddFile(path, data))
        elif key == "lfsFile":
            path = validate_path(value.get("path"))
            size = value.get("size")
            if value.get("algo", "sha256") != "sha256" or not isinstance(value.get("oid"), str):
                raise HubError(400, f"LFS file {path} needs a sha256 oid")
            if size is not None and type(size) is not int:
                raise HubError(400, f"LFS file {path} has a non-integer size")
            operations.append(AddLfsFile(path, value["oid"], size))
        elif key in ("deletedFile", "deletedFolder"):
            raw = value.get("path")
            path = validate_path(raw.rstrip("/") if isinstance(raw, str) else raw)
            operations.append(Delete(path, folder=key == "deletedFolder"))
        else:
            raise HubError(400, f"Unknown commit operation {key!r} on line {number}")
    if header is None or not isinstance(header.get("summary"), str) or not header["summary"].strip():
        raise HubError(400, "A commit needs a header line with a non-empty summary")
    parent = header.get("parentCommit")
    if parent is not None and not (isinstance(parent, str) and re.fullmatch(r"[0-9a-fA-F]{5,40}", parent)):
        raise HubError(400, "parentCommit must be a commit id")
    return header, operations


async def bounded_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past `limit` bytes before more is buffered."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HubError(413, f"Request body is larger than {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HubError(413, f"Request body is larger than {limit} bytes")
    return bytes(body)


async def json_body(request: Request, limit: int = MAX_JSON_BODY) -> dict[str, Any]:
    try:
        data = parse(await bounded_body(request, limit) or b"{}", detect_encoding=True)
    except RecursionError as exc:
        raise HubError(400, "Request body is nested too deeply") from exc
    except ValueError as exc:
        raise HubError(400, "Request body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise HubError(400, "Request body must be a JSON object")
    return data


def base_url(request: Request) -> str:
    """The URL the client reached us at: hrefs we hand out must be absolute and come back here."""
    return str(request.base_url).rstrip("/")


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def unb64(text: str) -> str:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise HubError(400, "Malformed cursor or upload URL") from exc
