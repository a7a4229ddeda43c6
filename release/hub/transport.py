"""Every answer hf-release reads from a Hub is bounded in size and in total time, not only per read.

huggingface_hub sends every request through one shared httpx2 client, made by the factory
`set_client_factory` installs (its default has no timeout at all, and reads any body whole). `install()`
puts in a factory whose client is huggingface_hub's own (its request hook, redirects, proxies from the
environment) with a transport that bounds each exchange, one request and its answer:

- time: the exchange must end within HUB_ANSWER_SECONDS plus one second per HUB_MIN_BYTES_PER_SECOND
  bytes moved (sent or received), so a large upload or download may take its time while a Hub that
  drips (one byte every 2 s) or never answers fails after HUB_ANSWER_SECONDS. The deadline caps every
  socket read and write (the connection's network stream, below the HTTP parser), headers included;
- size: an answer may hold at most `answer_limit` bytes: MAX_HUB_ANSWER_BYTES for the API's JSON answers,
  what the caller expects for a file it downloads. Answers are asked uncompressed, so the bytes counted
  are the bytes decoded; an answer compressed anyway is refused;
- shape: a successful answer of a route hf-release reads (SHAPES) must be JSON of that route's shape (an
  object with these keys, or a list) before huggingface_hub parses it: it reads them unchecked, so a list
  where an object belongs was a traceback, and `{}` where a listing belongs an empty listing.

hf_xet's transfers (uploads through Xet on the public Hub) are its own, outside httpx2: not bounded here.

Breaking a bound raises AnswerRefused, a transport error that neither huggingface_hub nor hf-release
retries (the same Hub would answer the same way): one line, exit 3 (release/hub/library_errors.py).
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2
from huggingface_hub import set_client_factory
from huggingface_hub.utils import _http  # the factory in place: the library has no getter for it

from release.hub import limits

_answer_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar("hub_answer_limit", default=None)
_current = threading.local()  # the exchange this thread is reading or writing, if any
_SLACK = 0.05  # a socket timeout this close to the deadline was the deadline's


class AnswerRefused(httpx2.TransportError):
    """The Hub's answer broke a bound (too large, too slow, compressed although not asked to be)."""


@contextmanager
def answer_limit(max_bytes: int) -> Iterator[None]:
    """Answers read inside the block may hold up to `max_bytes` (a download of a file of known size)."""
    token = _answer_limit.set(max_bytes)
    try:
        yield
    finally:
        _answer_limit.reset(token)


@dataclass
class Exchange:
    """One request and its answer: what it may move, and by when."""

    what: str  # "GET /api/whoami-v2", for the message
    max_bytes: int
    start: float = field(default_factory=time.monotonic)
    moved: int = 0  # bytes sent and received
    received: int = 0  # bytes of the answer's body

    def remaining(self, slack: float = 0.0) -> float:
        """Seconds left before the deadline; AnswerRefused once it has passed (or is within `slack`)."""
        allowed = limits.HUB_ANSWER_SECONDS + self.moved / limits.HUB_MIN_BYTES_PER_SECOND
        left = self.start + allowed - time.monotonic()
        if left <= slack:
            raise AnswerRefused(
                f"the Hub's answer to {self.what} took over {time.monotonic() - self.start:.0f} s "
                f"for {self.moved:,} bytes "
                f"(hf-release allows {limits.HUB_ANSWER_SECONDS:g} s plus 1 s per "
                f"{limits.HUB_MIN_BYTES_PER_SECOND // 1024} KiB moved)"
            )
        return left

    def cap(self, timeout: float | None) -> float:
        left = self.remaining()
        return left if timeout is None else min(timeout, left)

    def body(self, size: int) -> None:
        self.received += size
        if self.received > self.max_bytes:
            raise AnswerRefused(
                f"the Hub's answer to {self.what} holds more than {self.max_bytes:,} bytes, "
                "more than hf-release reads for it"
            )


class _BoundedStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the deadline of the exchange using it."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        exchange: Exchange | None = getattr(_current, "exchange", None)
        if exchange is None:  # the pool looking at an idle connection
            return self._inner.read(max_bytes, timeout)
        try:
            data = self._inner.read(max_bytes, exchange.cap(timeout))
        except httpcore2.ReadTimeout:
            exchange.remaining(slack=_SLACK)  # the deadline, not the caller's timeout, cut the read short: say so
            raise
        exchange.moved += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        exchange: Exchange | None = getattr(_current, "exchange", None)
        if exchange is None:
            self._inner.write(buffer, timeout)
            return
        try:
            self._inner.write(buffer, exchange.cap(timeout))
        except httpcore2.WriteTimeout:
            exchange.remaining(slack=_SLACK)
            raise
        exchange.moved += len(buffer)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore2.NetworkStream:
        exchange: Exchange | None = getattr(_current, "exchange", None)
        timeout = exchange.cap(timeout) if exchange is not None else timeout
        return _BoundedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore2.NetworkStream:
        return _BoundedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _BoundedBody(httpx2.SyncByteStream):
    """An answer's body, read within its exchange's bounds (whichever thread reads it)."""

    def __init__(self, inner: httpx2.SyncByteStream, exchange: Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            with _using(self._exchange):
                chunk = next(chunks, None)
            if chunk is None:
                return
            self._exchange.body(len(chunk))
            yield chunk

    def close(self) -> None:
        self._inner.close()


@contextmanager
def _using(exchange: Exchange) -> Iterator[None]:
    previous = getattr(_current, "exchange", None)
    _current.exchange = exchange
    try:
        yield
    finally:
        _current.exchange = previous


# route (searched in the request's path) -> the JSON answer's shape: a list, or an object with these keys as
# these types (hub-protocol: what huggingface_hub 2.4.0 needs back).
Shape = type | dict[str, type]
_ROUTE_SHAPES: tuple[tuple[str, str, Shape], ...] = (
    ("GET", r"^/api/whoami-v2$", {"name": str}),
    ("GET", r"^/api/(models|datasets|spaces)/[^/]+/[^/]+/refs$", {"branches": list, "tags": list}),
    ("GET", r"^/api/(models|datasets|spaces)/[^/]+/[^/]+/tree/", list),
    ("POST", r"^/api/(models|datasets|spaces)/[^/]+/[^/]+/paths-info/", list),
    ("POST", r"^/api/(models|datasets|spaces)/[^/]+/[^/]+/preupload/", {"files": list}),
    ("POST", r"^/api/(models|datasets|spaces)/[^/]+/[^/]+/commit/", {"commitOid": str, "commitUrl": str}),
    ("POST", r"/info/lfs/objects/batch$", {"objects": list}),
)
SHAPES = tuple((method, re.compile(route), shape) for method, route, shape in _ROUTE_SHAPES)


def _shape_problem(data: object, shape: Shape) -> str | None:
    if isinstance(shape, type):
        return None if isinstance(data, shape) else f"not a JSON {shape.__name__}"
    if not isinstance(data, dict):
        return "not a JSON object"
    wrong = [key for key, kind in shape.items() if not isinstance(data.get(key), kind)]
    return f"{', '.join(wrong)} missing or not a {'/'.join(shape[k].__name__ for k in wrong)}" if wrong else None


class BoundedTransport(httpx2.HTTPTransport):
    """httpx2's transport, each exchange bounded (the module's docstring)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # httpcore2's pool takes a network backend (its public parameter); httpx2 builds the pool with the
        # default one, so the bounded one is put in its place.
        pool = self._pool
        pool._network_backend = _BoundedBackend(pool._network_backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        limit = _answer_limit.get()
        exchange = Exchange(
            f"{request.method} {request.url.path}", limits.MAX_HUB_ANSWER_BYTES if limit is None else limit
        )
        with _using(exchange):
            response = super().handle_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            response.close()
            raise AnswerRefused(
                f"the Hub's answer to {exchange.what} is compressed ({encoding}) although hf-release "
                "asked for it uncompressed (its size could not be bounded)"
            )
        declared = response.headers.get("content-length", "")
        if request.method != "HEAD" and declared.isdigit() and int(declared) > exchange.max_bytes:
            response.close()
            exchange.body(int(declared))  # refused before a byte of it is read
        assert isinstance(response.stream, httpx2.SyncByteStream), "HTTPTransport's answers stream synchronously"
        response.stream = _BoundedBody(response.stream, exchange)
        shape = next(
            (shape for method, route, shape in SHAPES if method == request.method and route.search(request.url.path)),
            None,
        )
        if shape is None or not 200 <= response.status_code < 300:
            return response
        body = response.read()  # an API answer: small, and bounded like any other
        try:
            problem = _shape_problem(json.loads(body), shape)
        except (ValueError, RecursionError):
            problem = "not JSON"
        if problem:
            raise AnswerRefused(f"the Hub's answer to {exchange.what} is malformed: {problem}")
        return httpx2.Response(
            response.status_code, headers=response.headers, content=body, extensions=response.extensions
        )


class BoundedClient(httpx2.Client):
    """huggingface_hub's default client (its factory's options), every transport a BoundedTransport, proxies
    from the environment included."""

    # httpx2's private hooks, called with keywords only: their options pass through to BoundedTransport as given
    def _init_transport(self, **options: Any) -> httpx2.BaseTransport:  # type: ignore[override]
        transport = options.pop("transport", None)
        return transport if transport is not None else BoundedTransport(**options)

    def _init_proxy_transport(  # type: ignore[override]
        self, proxy: httpx2.Proxy, **options: Any
    ) -> httpx2.BaseTransport:
        return BoundedTransport(proxy=proxy, **options)


def bounded_client() -> httpx2.Client:
    from huggingface_hub.utils._http import hf_request_event_hook  # what huggingface_hub's own factory hooks in

    return BoundedClient(
        event_hooks={"request": [hf_request_event_hook]},
        follow_redirects=True,
        timeout=None,
        headers={"Accept-Encoding": "identity"},
    )


def install() -> None:
    """From now on every request huggingface_hub sends goes through a bounded client (idempotent)."""
    # The factory in place is read, not get_session(): that would build huggingface_hub's default client
    # only to throw it away (its TLS context loads every CA certificate: ~50 ms a process).
    if _http._GLOBAL_CLIENT_FACTORY is not bounded_client:
        set_client_factory(bounded_client)
