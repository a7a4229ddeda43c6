"""Run the local Hub with uvicorn: blocking (`serve`, for the CLI) or in a background thread (`running_hub`)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import resource
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from release.localhub.app import create_app
from release.localhub.auth import Account
from release.localhub.faults import FaultPlan
from release.localhub.stats import HubStats


@dataclass(frozen=True)
class LocalHub:
    url: str
    root: Path
    app: Starlette

    @property
    def stats(self) -> HubStats:
        return cast(HubStats, self.app.state.stats)


ROLES = ("read", "write")
FORM = "write TOKEN, TOKEN:read or TOKEN:write, one a line"


class BadTokenSpecs(ValueError):
    """Malformed token specs: each (where, what is wrong), never the token."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("\n".join(f"{where}: {message}" for where, message in problems))
        self.problems = problems


def parse_tokens(specs: Iterable[str | tuple[str, str]]) -> dict[str, str]:
    """`TOKEN[:read|write]` strings (the CLI's `--token`, each a line of `--token-file`) to the token -> role map;
    the role defaults to write. A spec may come with where it was read (`FILE:LINE`). A colon names a role, so
    `hf_x:admin` is refused, never taken as the write token `hf_x:admin`; so are an empty token and one with
    a space in it. Every malformed spec is named at once (BadTokenSpecs), never the token."""
    tokens: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for number, item in enumerate(specs, start=1):
        where, spec = item if isinstance(item, tuple) else (f"--token {number}", item)
        token, sep, role = spec.rpartition(":")
        if not sep:
            token, role = spec, "write"
        if role not in ROLES:
            problems.append((where, f"the role after the last ':' is neither read nor write; {FORM}"))
        elif not token or any(c.isspace() for c in token):
            what = "an empty token" if not token else "a token with a space in it"
            problems.append((where, f"{what}; {FORM}"))
        else:
            tokens[token] = role
    if problems:
        raise BadTokenSpecs(problems)
    return tokens


# Slowloris (clients that open connections and never finish a request's head) is bounded twice: a request's
# head must arrive within REQUEST_HEAD_SECONDS of the connection opening (or of the previous answer), and
# past MAX_CONNECTIONS open connections a new one evicts the oldest still waiting for a head, so file
# descriptors never run out (EMFILE) and clients that do send their requests are served. uvicorn bounds a
# head's size (h11, 16 KiB) and idle kept-alive connections, not the time a head takes nor how many wait.
# asyncio accepts up to `backlog` connections at once before any is handed to the protocol: that batch is
# bounded too (a few batches are open before the evicted close), so open descriptors stay well under the
# process's limit.
REQUEST_HEAD_SECONDS = 10.0
MAX_CONNECTIONS = max(16, min(1000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 4))
ACCEPT_BATCH = max(4, MAX_CONNECTIONS // 8)
LISTEN_QUEUE = 1024


class _ListeningSocket(socket.socket):
    """asyncio listens with its accept batch (uvicorn's `backlog`); the kernel's queue of connections not yet
    accepted holds no descriptor of ours, so it stays long: a burst of connections is not dropped (the
    client would wait a second to retry)."""

    def listen(self, backlog: int = LISTEN_QUEUE) -> None:
        super().listen(max(backlog, LISTEN_QUEUE))


def _loopback_socket(host: str, port: int) -> socket.socket:
    # The server holds unauthenticated-read repos and signed upload URLs: it must never face a network.
    address = "127.0.0.1" if host == "localhost" else host
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"the local Hub only binds loopback addresses, not {host!r}")
    sock = _ListeningSocket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # asyncio sets TCP_NODELAY only on sockets it creates; without it every response on a kept-alive
    # connection waits ~40 ms for a delayed ACK. Accepted connections inherit it (Linux).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((address, port))
    sock.listen(LISTEN_QUEUE)  # connections queue from here on, even before uvicorn accepts them
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with the head deadline and the connection cap above."""

    _waiting_since: float | None = None  # when it began waiting for a request's head; None while serving one
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait_for_head()
        open_ = [c for c in self.connections if not c.transport.is_closing()]  # closed ones leave the set later
        if len(open_) > MAX_CONNECTIONS:
            waiting = [c for c in open_ if isinstance(c, _BoundedH11) and c._waiting_since is not None]
            oldest = min(waiting, key=lambda c: c._waiting_since or 0.0)  # self is waiting: never empty
            oldest.transport.close()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a head arrived: its request is being served
            self._serving()

    def on_response_complete(self) -> None:
        done = self.cycle
        super().on_response_complete()  # may start serving a pipelined request at once
        if self.cycle is done and not self.transport.is_closing():
            self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._serving()
        super().connection_lost(exc)

    def _wait_for_head(self) -> None:
        self._serving()
        self._waiting_since = time.monotonic()
        self._head_timer = self.loop.call_later(REQUEST_HEAD_SECONDS, self.transport.close)

    def _serving(self) -> None:
        self._waiting_since = None
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None


class _Server(uvicorn.Server):
    """uvicorn's Server, stopped from another thread within a moment (`stop`): uvicorn's own main loop looks at
    should_exit only every 0.1 s, a tenth of a second for every Hub a test stops (the suite stops hundreds)."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        # uvicorn's main loop (Server.main_loop: on_tick every 0.1 s), its sleep cut short by stop()
        self._wake, self._loop = asyncio.Event(), asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def stop(self) -> None:
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed already
                self._loop.call_soon_threadsafe(self._wake.set)


def _server(app: Starlette) -> _Server:
    # Access logs off: request lines would be noise, and quiet is the default we promise.
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,
        http=_BoundedH11,
        backlog=ACCEPT_BATCH,
    )
    return _Server(config)


def serve(
    root: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    tokens: Mapping[str, str | Account],
    faults: FaultPlan | None = None,
    announce: Callable[[str], None] | None = None,
    **app_options: Any,
) -> None:
    """Serve until interrupted. Gives `announce` the URL once listening (port 0 picks a free port); by default
    prints `Local Hub serving ROOT at URL` (the CLI renders it in the chosen --format)."""
    sock = _loopback_socket(host, port)  # first: refuse a non-loopback host before touching the root
    app = create_app(root, tokens, faults, **app_options)
    if announce is None:
        print(f"Local Hub serving {root} at {_url(sock)}", flush=True)
    else:
        announce(_url(sock))
    try:
        _server(app).run(sockets=[sock])
    finally:
        app.state.storage.close()


@contextlib.contextmanager
def running_hub(
    root: Path, tokens: Mapping[str, str | Account], faults: FaultPlan | None = None, **app_options: Any
) -> Iterator[LocalHub]:
    """Run the Hub on a free loopback port in a background thread for the duration of the block."""
    sock = _loopback_socket("127.0.0.1", 0)
    try:
        app = create_app(root, tokens, faults, **app_options)
    except BaseException:
        sock.close()
        raise
    server = _server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="local-hub", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the local Hub did not start")
            time.sleep(0.01)
        yield LocalHub(_url(sock), Path(root), app)
    finally:
        server.stop()
        thread.join(timeout=10)
        sock.close()
        app.state.storage.close()
