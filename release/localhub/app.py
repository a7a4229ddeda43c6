"""A local, Hub-compatible HTTP server that the real `huggingface_hub` client can publish to.

It speaks the subset of the Hub API that `huggingface_hub` uses to create repos, upload (preupload,
LFS batch with basic and multipart transfers, NDJSON commits), tag, list and download, over plain
LFS and over Xet (xet/: the token routes, a CAS on this origin, the resolve of Xet files) unless built
with `xet=False`, which answers the Xet token routes 501 as before.

This module builds the Starlette app and answers every request through one dispatcher: the route
table (routes.py) picks the handler, and errors become the Hub's error answers here.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from release.localhub.auth import Account, Auth, accounts
from release.localhub.errors import HubError
from release.localhub.faults import FaultMiddleware, FaultPlan, FaultState
from release.localhub.lfs import LfsTransfers
from release.localhub.read_api import ReadApi
from release.localhub.routes import Handler, Routes
from release.localhub.stats import HubStats
from release.localhub.storage import Storage
from release.localhub.wire import MiB, error_response
from release.localhub.write_api import WriteApi
from release.localhub.xet.cas import XetApi

# Every response carries this header, so a client (push, demo) can tell it rehearsed against the
# local Hub, and whether that Hub offered Xet (its own CAS: not the real Hub's storage).
LOCAL_HUB_HEADER = "X-Local-Hub"
LOCAL_HUB_VALUE = "hf-release; xet=local"
LOCAL_HUB_VALUE_NO_XET = "hf-release; xet=unavailable"

logger = logging.getLogger(__name__)


def create_app(
    root: Path,
    tokens: Mapping[str, str | Account],
    faults: FaultPlan | None = None,
    *,
    username: str = "local-user",
    multipart_chunk_size: int = 64 * MiB,
    tree_page_size: int = 1000,
    commits_page_size: int = 50,
    xet: bool = True,
) -> Starlette:
    """Build the Hub app over `root`. `tokens` maps each accepted token to its role ("read" or "write",
    acting as `username` in every namespace) or to an `Account`."""
    by_token = accounts(tokens, username)  # refuses a bad role before the root is taken
    stats = HubStats()
    fault_state = FaultState(faults or FaultPlan(), stats.faults)
    storage = Storage(root)  # takes the root's lock: a second server on it stops here
    auth = Auth(storage, by_token)
    lfs = LfsTransfers(storage, stats.upload_bytes, multipart_chunk_size)
    xet_api = XetApi(storage, auth, stats) if xet else None
    if xet_api is not None:
        storage.xet_file_for = xet_api.store.file_for_sha256
    routes = Routes(
        storage,
        ReadApi(storage, auth, tree_page_size, commits_page_size, xet=xet_api),
        WriteApi(storage, auth, lfs, stats),
        lfs,
        xet_api,
    )
    marker = LOCAL_HUB_VALUE if xet else LOCAL_HUB_VALUE_NO_XET
    app = Starlette(
        routes=[
            Route("/{path:path}", _dispatcher(routes, stats, marker), methods=["GET", "HEAD", "POST", "PUT", "DELETE"])
        ],
        middleware=[Middleware(FaultMiddleware, state=fault_state)],
        exception_handlers={Exception: _internal_error},
    )
    app.state.stats = stats
    app.state.storage = storage  # whoever runs the app closes it: that frees the root for the next server
    return app


async def _internal_error(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": "Internal server error"}, status_code=500)


def _dispatcher(routes: Routes, stats: HubStats, marker: str) -> Handler:
    async def dispatch(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.scope["path"].encode()
        segments = [unquote(s) for s in raw.decode("utf-8", "replace").split("/")[1:]]
        if segments and segments[-1] == "":
            segments.pop()
        try:
            name, handlers = routes.find(segments)
            method = "GET" if request.method == "HEAD" else request.method
            if method not in handlers:
                raise HubError(405, f"Method {request.method} not allowed here")
            stats.requests[f"{request.method} {name}"] += 1
            response = await handlers[method](request)
        except HubError as err:
            logger.debug("answered %s %s: %s %s", request.method, request.url.path, err.status, err.message)
            response = error_response(err)
        except (
            ClientDisconnect
        ):  # the client went away mid-upload (a killed push): nothing to answer, nothing wrong here
            logger.info("client disconnected during %s %s", request.method, request.url.path)
            response = Response(status_code=499)
        except Exception:  # noqa: BLE001 - answer 500 and keep the connection orderly
            # Starlette's Exception handler re-raises after answering, and uvicorn then resets the
            # connection, which can reach the client before the 500 does. The state on disk is safe:
            # a failed commit never moved its ref.
            logger.exception("internal error on %s %s", request.method, request.url.path)
            response = JSONResponse({"error": "Internal server error"}, status_code=500)
        # Like the Hub: clients quote it in every error message ("(Request ID: …)").
        response.headers["X-Request-Id"] = f"Root=1-{uuid.uuid4().hex}"
        # Not the Hub's: says a rehearsal ran here, and whether this Hub offered its own Xet CAS.
        response.headers[LOCAL_HUB_HEADER] = marker
        return response

    return dispatch
