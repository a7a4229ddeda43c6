"""Every answer hf-release reads from a Hub is bounded in size and in total time, and its JSON shape is
checked: a Hub that answers an endless body, drips, or answers in the wrong shape is one line, exit 3.

The misbehaving Hubs are the local Hub with `--fault` rules (endless, drip=SECONDS, shape=SHAPE); the client
is the real huggingface_hub one, driven through hf-release's own commands."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.errors import RemoteError
from release.hub import limits, transport
from release.hub.client import connect, remote_errors, remote_files
from release.localhub import LocalHub
from tests.helpers import REPO, TOKEN, Run, cli, local_hub
from tests.reliability.helpers import token_args

MiB = 1024 * 1024


@contextmanager
def memory_limit(extra: int) -> Iterator[None]:
    """This process may map at most `extra` more bytes for the block (a runaway read fails, not the machine)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def push(capsys: pytest.CaptureFixture[str], hub: LocalHub, dist: Path) -> Run:
    return cli(capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))


def one_line_exit_3(run: Run, *words: str) -> None:
    assert run.code == 3, run.err
    assert "Traceback" not in run.err and len(run.err.strip().splitlines()) == 1, run.err
    assert all(word in run.err for word in words), run.err


@pytest.mark.timeout(30)
@pytest.mark.parametrize("route", ["/api/whoami-v2$", "/refs$"])
def test_an_endless_answer_is_cut_at_its_size_bound(
    tmp_path: Path,
    dist: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    route: str,
) -> None:
    with local_hub(tmp_path / "hub", f"GET:endless:1:{route}") as hub:
        HfApi(endpoint=hub.url, token=TOKEN).create_repo(REPO)  # so that push reads the refs
        monkeypatch.setattr(limits, "MAX_HUB_ANSWER_BYTES", 1 * MiB, raising=False)  # the bound, small for speed
        with memory_limit(1024 * MiB):  # before the bound: memory grew at network speed until MemoryError
            run = push(capsys, hub, dist)
        one_line_exit_3(run, "holds more than 1,048,576 bytes")


@pytest.mark.timeout(30)
@pytest.mark.hub("GET:drip=0.05:1:/api/whoami-v2$")  # 20 bytes a second: each read gets a byte, the answer never ends
def test_a_dripping_answer_is_cut_at_its_deadline(
    hub: LocalHub,
    dist: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "HUB_ANSWER_SECONDS", 0.3, raising=False)
    start = time.monotonic()
    run = push(capsys, hub, dist)
    one_line_exit_3(run, "took over", "whoami")
    assert time.monotonic() - start < 5  # not retried: before, push still waited after 75 s


def test_the_deadline_grows_with_the_bytes_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large transfer may take its time (one second per HUB_MIN_BYTES_PER_SECOND); a stalled one may not."""
    monkeypatch.setattr(limits, "HUB_ANSWER_SECONDS", 1.0)
    moving = transport.Exchange(
        "PUT /_lfs/x", 0, start=time.monotonic() - 5, moved=10 * limits.HUB_MIN_BYTES_PER_SECOND
    )
    assert 5 < moving.remaining() <= 6
    stalled = transport.Exchange("PUT /_lfs/x", 0, start=time.monotonic() - 5, moved=limits.HUB_MIN_BYTES_PER_SECOND)
    with pytest.raises(transport.AnswerRefused, match="took over 5 s"):
        stalled.remaining()


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("GET:shape=list:1:/api/whoami-v2$", ["checking the token", "malformed"]),  # a list, not an object
        ("GET:shape=strings:1:/api/whoami-v2$", ["checking the token", "malformed"]),  # `auth` a string
        ("GET:shape=strings:1:/refs$", ["reading refs", "malformed"]),
        ("GET:shape=html:1:/api/whoami-v2$", ["checking the token", "not JSON"]),  # an HTML page
    ],
)
def test_a_malformed_answer_is_one_line_exit_3(
    tmp_path: Path,
    dist: Path,
    capsys: pytest.CaptureFixture[str],
    fault: str,
    words: list[str],
) -> None:
    with local_hub(tmp_path / "hub", fault) as hub:
        HfApi(endpoint=hub.url, token=TOKEN).create_repo(REPO)
        one_line_exit_3(push(capsys, hub, dist), *words)


@pytest.mark.parametrize(
    ("shape", "words"), [("empty", "commitOid"), ("html", "not JSON")]
)  # 200 without commitOid; HTML
def test_a_malformed_commit_answer_is_a_remote_error(tmp_path: Path, shape: str, words: str) -> None:
    with local_hub(tmp_path / "hub", f"POST:shape={shape}:1:/commit/") as hub:
        HfApi(endpoint=hub.url, token=TOKEN).create_repo(REPO)
        api = connect(hub.url, TOKEN).api
        with pytest.raises(RemoteError, match=words) as exc, remote_errors(REPO, "committing the release"):
            api.create_commit(REPO, [CommitOperationAdd("notes.txt", b"notes")], commit_message="x")
        assert exc.value.exit_code == 3


@pytest.mark.parametrize("shape", ["empty", "strings"])
def test_a_listing_of_the_wrong_shape_is_a_remote_error_not_an_empty_listing(tmp_path: Path, shape: str) -> None:
    with local_hub(tmp_path / "hub", f"GET:shape={shape}:1:/tree/") as hub:
        HfApi(endpoint=hub.url, token=TOKEN).create_repo(REPO)
        with pytest.raises(RemoteError, match="malformed") as exc:
            remote_files(connect(hub.url, TOKEN), REPO, "main")
        assert exc.value.exit_code == 3


def test_installing_the_bounded_client_builds_no_client_to_throw_away() -> None:
    """install() sets the factory once; the shared client is built by the first request, and is ours."""
    from huggingface_hub import get_session, set_client_factory
    from huggingface_hub.utils import _http

    built: list[object] = []

    def default() -> object:
        built.append(client := _http.default_client_factory())
        return client

    set_client_factory(default)  # closes the shared client: none is built now
    try:
        transport.install()
        assert built == []  # the default client (its TLS context loads every CA certificate) never built
        client = get_session()
        transport.install()  # again: the client in use is kept
        assert isinstance(client, transport.BoundedClient) and get_session() is client
    finally:
        set_client_factory(transport.bounded_client)
