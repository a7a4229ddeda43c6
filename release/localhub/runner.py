"""Run the local Hub with uvicorn: blocking (`serve`, for the CLI) or in a background thread (`running_hub`)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import uvicorn
from starlette.applications import Starlette

from .faults import FaultPlan
from .app import create_app
from .auth import Account
from .stats import HubStats


@dataclass(frozen=True)
class LocalHub:
    url: str
    root: Path
    app: Starlette

    @property
    def stats(self) -> HubStats:
        return cast(HubStats, self.app.state.stats)


def parse_tokens(specs: Iterable[str]) -> dict[str, str]:
    """`TOKEN[:read|write]` strings (the CLI's `--token`) to the token -> role map; the role defaults to write."""
    tokens = {}
    for spec in specs:
        token, sep, role = spec.rpartition(":")
        if not sep or role not in ("read", "write"):
            token, role = spec, "write"
        if not token:
            raise ValueError("empty token")
        tokens[token] = role
    return tokens


def _loopback_socket(host: str, port: int) -> socket.socket:
    # The server holds unauthenticated-read repos and signed upload URLs: it must never face a network.
    address = "127.0.0.1" if host == "localhost" else host
    try:
        loopback = ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"the local Hub only binds loopback addresses, not {host!r}")
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # asyncio sets TCP_NODELAY only on sockets it creates; without it every response on a kept-alive
    # connection waits ~40 ms for a delayed ACK. Accepted connections inherit it (Linux).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((address, port))
    sock.listen(128)  # connections queue from here on, even before uvicorn accepts them
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(app: Starlette) -> uvicorn.Server:
    # Access logs off: request lines would be noise, and quiet is the default we promise.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30)
    return uvicorn.Server(config)


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
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        app.state.storage.close()
