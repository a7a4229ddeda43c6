"""Fault injection for the local Hub: make chosen requests fail so clients' retry paths get exercised.

A `FaultPlan` is a list of rules. Each rule names an HTTP method (or `*`), a regular expression searched
in the decoded request path, what to do, and how many times to do it before it stops firing.

Kinds:
- `429`: answer 429 with `Retry-After: 1`.
- `500`, `502`, `503`: answer that status.
- `moved`: answer 307 with `Location` the request's own path and query, as the Hub redirects the old name
  of a renamed repo; the client sends the request again (body included) and the Hub serves it.
- `drop`: read the first chunk of the request body (if any), then close the connection without a
  complete response, so the client sees a transport error.
- `delay=SECONDS`: wait, then serve the request normally.
- `endless`: answer 200 with a JSON content type and a body that never ends (until the client hangs up).
- `drip=SECONDS`: answer 200 with a body of one byte every SECONDS (until the client hangs up).
- `shape=SHAPE`: serve the request, then answer 200 with its JSON in the wrong shape: `list` (`[]`),
  `empty` (`{}`), `html` (an HTML page), `strings` (the real answer with every top-level value a string).
- `corrupt`: serve the request with one bit of its body flipped (the middle byte of the first part of the body),
  status and length unchanged: a store that rots on one download path, e.g. `GET:corrupt:9:^/_xet/fetch/` (the
  xorb ranges hf_xet reconstructs from) or `GET:corrupt:9:^/_xet/bridge/` (a Xet file's plain bytes).

As a string (for the CLI), rules are separated by `;` and each is `METHOD:KIND:COUNT:REGEX`, e.g.
`PUT:drop:1:^/_lfs/;POST:503:2:/commit/;*:delay=0.5:1:/preupload/`. The regex comes last so it may
contain `:`; it may not contain `;`.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_STATUS_KINDS = {"429": 429, "500": 500, "502": 502, "503": 503}
_SHAPES = ("list", "empty", "html", "strings")


@dataclass(frozen=True)
class FaultRule:
    method: str
    path: str
    kind: str
    count: int = 1

    def __post_init__(self) -> None:
        if (
            self.kind not in (*_STATUS_KINDS, "drop", "endless", "moved", "corrupt")
            and self.delay is None
            and self.drip is None
            and self.shape is None
        ):
            raise ValueError(f"unknown fault kind {self.kind!r}")
        if self.count < 1:
            raise ValueError("a fault rule must fire at least once")
        try:
            re.compile(self.path)
        except re.error as exc:
            raise ValueError(f"bad path regex {self.path!r}: {exc}") from exc

    @property
    def delay(self) -> float | None:
        if self.kind.startswith("delay="):
            return float(self.kind.removeprefix("delay="))
        return None

    @property
    def drip(self) -> float | None:
        return float(self.kind.removeprefix("drip=")) if self.kind.startswith("drip=") else None

    @property
    def shape(self) -> str | None:
        shape = self.kind.removeprefix("shape=")
        if shape == self.kind:
            return None
        if shape not in _SHAPES:
            raise ValueError(f"unknown shape {shape!r} (one of {', '.join(_SHAPES)})")
        return shape

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and re.search(self.path, path) is not None

    def __str__(self) -> str:
        return f"{self.method}:{self.kind}:{self.count}:{self.path}"


@dataclass(frozen=True)
class FaultPlan:
    rules: tuple[FaultRule, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> FaultPlan:
        rules = []
        for part in filter(None, (p.strip() for p in spec.split(";"))):
            try:
                method, kind, count, path = part.split(":", 3)
                rules.append(FaultRule(method.upper(), path, kind, int(count)))
            except ValueError as exc:
                raise ValueError(f"bad fault rule {part!r} (want METHOD:KIND:COUNT:REGEX): {exc}") from exc
        return cls(tuple(rules))

    def __str__(self) -> str:
        return ";".join(str(rule) for rule in self.rules)


@dataclass
class FaultState:
    """How many times each rule of a plan may still fire, and how many faults fired per kind."""

    plan: FaultPlan
    fired: Counter[str] = field(default_factory=Counter)
    _left: list[int] = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self._left = [rule.count for rule in self.plan.rules]

    def take(self, method: str, path: str) -> FaultRule | None:
        with self._lock:
            for i, rule in enumerate(self.plan.rules):
                if self._left[i] > 0 and rule.matches(method, path):
                    self._left[i] -= 1
                    self.fired[rule.kind] += 1
                    return rule
        return None


class FaultMiddleware:
    """Pure ASGI middleware, outermost, so a fault fires before auth and routing."""

    def __init__(self, app: ASGIApp, state: FaultState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rule = self.state.take(scope["method"], scope["path"])
        if rule is None:
            await self.app(scope, receive, send)
        elif rule.delay is not None:
            await asyncio.sleep(rule.delay)
            await self.app(scope, receive, send)
        elif rule.kind == "drop":
            await _drop(receive, send)
        elif rule.kind == "endless" or rule.drip is not None:
            await _stream_forever(receive, send, rule.drip)
        elif rule.shape is not None:
            await _misshaped(self.app, scope, receive, send, rule.shape)
        elif rule.kind == "moved":
            await _moved(scope, send)
        elif rule.kind == "corrupt":
            await _corrupted(self.app, scope, receive, send)
        else:
            await _error(send, _STATUS_KINDS[rule.kind])


async def _error(send: Send, status: int) -> None:
    body = json.dumps({"error": f"Injected fault: HTTP {status}"}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 429:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _moved(scope: Scope, send: Send) -> None:
    query = scope.get("query_string", b"")
    location = scope.get("raw_path") or scope["path"].encode()
    headers = [(b"location", location + (b"?" + query if query else b"")), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 307, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _drop(receive: Receive, send: Send) -> None:
    # Uvicorn answers 500 when an app fails before starting a response, so to drop the connection we
    # start one that promises a body and return without sending it: the server then closes the socket.
    await receive()  # take (part of) the body first, like a server dying mid-upload
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", b"1024")],
        }
    )


async def _stream_forever(receive: Receive, send: Send, every: float | None) -> None:
    """A 200 whose body never ends: 64 KiB at a time as fast as the client reads, or one byte `every` seconds."""
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.create_task(watch())
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    chunk = b"[" if every is not None else b"[" * 65536
    try:
        while not gone.is_set():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await asyncio.sleep(every or 0)
    finally:
        watcher.cancel()


async def _misshaped(app: ASGIApp, scope: Scope, receive: Receive, send: Send, shape: str) -> None:
    """The request served (its effects happen), its answer replaced by a 200 of the wrong shape."""
    status, chunks = 500, []

    async def keep(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, keep)
    content_type = b"application/json"
    if shape == "html":
        body, content_type = b"<!DOCTYPE html><html><body><h1>Hugging Face</h1></body></html>", b"text/html"
    elif shape == "strings":
        try:
            real = json.loads(b"".join(chunks))
        except ValueError:
            real = {}
        body = json.dumps({k: "x" for k in real} if isinstance(real, dict) else ["x" for _ in real]).encode()
    else:
        body = b"[]" if shape == "list" else b"{}"
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        (b"x-fault-served-status", str(status).encode()),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _corrupted(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """The request served, one bit of its body flipped on the way out (same status, headers and length)."""
    flipped = False

    async def flip(message: Message) -> None:
        nonlocal flipped
        body = message.get("body", b"") if message["type"] == "http.response.body" else b""
        if body and not flipped:
            damaged = bytearray(body)
            damaged[len(damaged) // 2] ^= 0x01
            message, flipped = {**message, "body": bytes(damaged)}, True
        await send(message)

    await app(scope, receive, flip)
