"""Signed values of the local Hub's Xet side: the CAS access tokens the token routes hand out, and the presigned
URLs of xorb byte ranges and bridge downloads. Each is a JSON payload and an HMAC under the root's secret.

A CAS token names the repo it was issued for, the account that asked and whether it may write: the CAS answers
with that repo's and that account's holdings only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

from release.localhub.errors import HubError
from release.localhub.records import RepoId
from release.localhub.wire import b64, unb64

TOKEN_LIFETIME = 3600  # seconds; huggingface_hub asks again a minute before expiry
URL_LIFETIME = 3600
TOKEN_PREFIX = "xet_local_"


@dataclass(frozen=True)
class CasGrant:
    """What a CAS access token allows: one repo, as one account, reading or also writing, until `expires`."""

    repo: RepoId
    account: str
    write: bool
    expires: int


class Signer:
    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"xet:" + secret).digest()  # not the LFS tickets' key: no token is both

    def _sign(self, payload: dict[str, Any]) -> str:
        raw = b64(json.dumps(payload, separators=(",", ":")))
        return f"{raw}.{self._mac(raw)}"

    def _mac(self, raw: str) -> str:
        return hmac.new(self._key, raw.encode(), hashlib.sha256).hexdigest()[:40]

    def _open(self, signed: str, what: str, status: int) -> dict[str, Any]:
        raw, _, mac = signed.partition(".")
        if not mac or not hmac.compare_digest(mac, self._mac(raw)):
            raise HubError(status, f"Invalid {what}")
        payload: dict[str, Any] = json.loads(unb64(raw))
        if payload.get("x", 0) < time.time():
            raise HubError(status, f"Expired {what}")
        return payload

    def grant(self, grant: CasGrant) -> str:
        r = grant.repo
        payload = {"k": "cas", "r": [r.type, r.namespace, r.name], "a": grant.account, "w": grant.write}
        return TOKEN_PREFIX + self._sign(payload | {"x": grant.expires})

    def open_grant(self, authorization: str | None) -> CasGrant:
        """The grant of a request's `Authorization: Bearer` CAS token; 401 if none, forged or expired."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX):
            raise HubError(401, "A CAS access token is required (Authorization: Bearer)")
        payload = self._open(token.removeprefix(TOKEN_PREFIX).strip(), "CAS access token", 401)
        if payload.get("k") != "cas":
            raise HubError(401, "Invalid CAS access token")
        return CasGrant(RepoId(*payload["r"]), payload["a"], bool(payload["w"]), payload["x"])

    def xorb_range(self, xorb: str, first: int, last: int) -> str:
        """A presigned fetch of bytes [first, last] of one xorb."""
        return self._sign({"k": "range", "h": xorb, "b": [first, last], "x": int(time.time()) + URL_LIFETIME})

    def open_xorb_range(self, signed: str) -> tuple[str, int, int]:
        payload = self._open(signed, "xorb URL", 403)
        if payload.get("k") != "range":
            raise HubError(403, "Invalid xorb URL")
        return payload["h"], payload["b"][0], payload["b"][1]

    def bridge(self, sha256: str, size: int) -> str:
        """A presigned plain download of one stored file, as the Hub's bridge serves clients without hf_xet."""
        return self._sign({"k": "bridge", "o": sha256, "s": size, "x": int(time.time()) + URL_LIFETIME})

    def open_bridge(self, signed: str) -> tuple[str, int]:
        payload = self._open(signed, "download URL", 403)
        if payload.get("k") != "bridge":
            raise HubError(403, "Invalid download URL")
        return payload["o"], payload["s"]
