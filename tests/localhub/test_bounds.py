"""Every input the local Hub takes is bounded, and it never destroys files it did not make.

The bounds are checked against a server in a subprocess under a memory limit: before the bounds, one
LFS batch request claiming 10**23 bytes made the server build a part-URL list until the machine ran
out of memory.
"""

import json
import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import close_session, get_session

from release.localhub import LocalHub, runner
from release.localhub.fs import WORK_MARK, RootInUse
from release.localhub.metadata import MAX_DEPTH, MAX_NODES, validate_card
from release.localhub.wire import MAX_COMMIT_OPERATIONS
from tests.helpers import TOKEN, local_hub
from tests.localhub.helpers import CHUNK

pytestmark = pytest.mark.hub(multipart_chunk_size=CHUNK)  # small multipart parts keep the multipart tests fast

MEMORY_LIMIT = 2 * 1024**3  # address space: far above what the server needs, far below a runaway allocation
FILES_LIMIT = 64  # open files: slowloris needs only a few hundred connections to exhaust them
REPO = "local-user/bounded"
AUTH = {"authorization": f"Bearer {TOKEN}"}


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_LIMIT, FILES_LIMIT))


@pytest.fixture(scope="module")
def limited_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`hf-release hub serve` in a subprocess whose address space is capped; yields its URL."""
    root = tmp_path_factory.mktemp("limited-hub")
    server = subprocess.Popen(
        [sys.executable, "-m", "release", "hub", "serve", "--root", str(root)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_TOKEN": TOKEN},  # a token on a command line shows in `ps`
        cwd=Path(__file__).resolve().parents[2],
        stderr=subprocess.PIPE,
        preexec_fn=_limit_resources,
    )
    try:
        url = server.stdout.readline().split()[-1]
        create = get_session().post(f"{url}/api/repos/create", headers=AUTH, json={"name": "bounded"})
        assert create.status_code == 200, create.text
        yield url
        assert server.poll() is None  # it survived everything thrown at it
    finally:
        server.terminate()
        _, log = server.communicate(timeout=10)
    assert "Traceback" not in log and "Too many open files" not in log, log[-2000:]


def batch_answer(url: str, objects: object) -> dict:
    response = get_session().post(
        f"{url}/{REPO}.git/info/lfs/objects/batch",
        headers={**AUTH, "content-type": "application/vnd.git-lfs+json"},
        json={"operation": "upload", "transfers": ["basic", "multipart"], "objects": objects},
    )
    return {"status": response.status_code, **response.json()}


@pytest.mark.parametrize("size", [10**23, True, -1, "12"], ids=["huge", "true", "negative", "string"])
def test_an_lfs_batch_with_an_impossible_size_is_refused_per_object(limited_hub: str, size: object) -> None:
    answer = batch_answer(limited_hub, [{"oid": "a" * 64, "size": size}])
    assert answer["status"] == 200
    [obj] = answer["objects"]
    assert obj["error"]["code"] == 422 and "actions" not in obj


def test_too_many_objects_in_one_batch_are_refused(limited_hub: str) -> None:
    answer = batch_answer(limited_hub, [{"oid": f"{n:064x}", "size": 1} for n in range(1001)])
    assert answer["status"] == 422 and "at most 1000" in answer["error"]


def test_paths_info_and_json_bodies_are_bounded(limited_hub: str) -> None:
    url = f"{limited_hub}/api/models/{REPO}/paths-info/main"
    too_many = get_session().post(url, headers=AUTH, data={"paths": [f"f{n}" for n in range(10_001)]})
    assert too_many.status_code == 400 and "at most 10000 paths" in too_many.json()["error"]
    too_big = get_session().post(url, headers=AUTH, content=b"paths=" + b"a" * (17 * 1024 * 1024))
    assert too_big.status_code == 413
    nested = get_session().post(f"{limited_hub}/api/repos/create", headers=AUTH, content=b"[" * 200_000)
    assert nested.status_code == 400 and "nested too deeply" in nested.json()["error"]
    # deeper than jsonio's bound, shallow enough for Python's parser: refused before it recurses, as every reader does
    shallow = b'{"a":' * 600 + b"1" + b"}" * 600
    deep = get_session().post(f"{limited_hub}/api/repos/create", headers=AUTH, content=shallow)
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["error"]


def test_preupload_and_commit_entries_are_bounded(limited_hub: str) -> None:
    preupload = get_session().post(
        f"{limited_hub}/api/models/{REPO}/preupload/main",
        headers=AUTH,
        json={"files": [{"path": "a.bin", "sample": "", "size": True}]},
    )
    assert preupload.status_code == 400 and "Invalid sample or size for a.bin" in preupload.json()["error"]
    lines = [json.dumps({"key": "header", "value": {"summary": "many"}})]
    lines += [json.dumps({"key": "deletedFile", "value": {"path": f"f{n}"}}) for n in range(MAX_COMMIT_OPERATIONS)]
    commit = get_session().post(
        f"{limited_hub}/api/models/{REPO}/commit/main",
        headers={**AUTH, "content-type": "application/x-ndjson"},
        content="\n".join(lines).encode(),
    )
    assert commit.status_code == 413 and f"at most {MAX_COMMIT_OPERATIONS} operations" in commit.json()["error"]


def test_the_hub_keeps_what_it_did_not_make_in_its_root(tmp_path: Path) -> None:
    root = tmp_path / "hub"
    mine = {root / "tmp" / "thesis.txt": "a user's file", root / ".work-notes" / "draft.txt": "not marked as ours"}
    for path, text in mine.items():
        path.parent.mkdir(parents=True)
        path.write_text(text)
    stale = root / ".work-killed"  # what a killed server leaves: marked, so the next server removes it
    stale.mkdir()
    (stale / WORK_MARK).touch()
    (stale / "upload-123").write_bytes(b"half an upload")
    with local_hub(root) as hub:
        work = hub.app.state.storage.fs.work
        assert work.parent == root and (work / WORK_MARK).is_file() and not stale.exists()
    assert not work.exists()  # its own work folder goes with the server
    assert {path: path.read_text() for path in mine} == mine


def test_a_second_server_on_the_same_root_refuses_to_start(tmp_path: Path) -> None:
    root = tmp_path / "hub"
    with local_hub(root) as hub:
        with pytest.raises(RootInUse, match="already served by another local Hub"):
            with local_hub(root):
                pass
        cli = subprocess.run(
            [sys.executable, "-m", "release", "hub", "serve", "--root", str(root)],
            capture_output=True,
            text=True,
            env={**os.environ, "HF_TOKEN": "t-write-token"},
            cwd=Path(__file__).resolve().parents[2],
            timeout=60,
        )
        assert cli.returncode == 2 and cli.stdout == ""
        assert len(cli.stderr.strip().splitlines()) == 1 and "already served by another local Hub" in cli.stderr
        assert get_session().get(f"{hub.url}/api/models/local-user/x").status_code == 404  # the first one still serves
    with local_hub(root):  # released when the first one stopped
        pass


def test_card_metadata_is_bounded_through_aliases_and_nesting() -> None:
    # Ten levels of ten aliases each: 10**10 values once expanded, a few hundred bytes written.
    levels = "".join(f"l{i + 1}: &l{i + 1} [{', '.join([f'*l{i}'] * 10)}]\n" for i in range(10))
    bomb = f"---\nl0: &l0 [x]\n{levels}model-index: [*l10]\n---\n"
    assert validate_card(bomb)[0] == [
        f"README.md metadata holds more than {MAX_NODES} values (YAML aliases count each time they are used)"
    ]
    deep = validate_card("---\n" + "[" * 5000 + "]" * 5000 + "\n---\n")[0]
    assert deep == [f"Invalid YAML in README.md: nested deeper than {MAX_DEPTH} levels"]


@pytest.mark.parametrize("page", [str(10**20), "-1", "x"])
def test_a_commits_page_out_of_range_is_a_400(limited_hub: str, page: str) -> None:
    response = get_session().get(f"{limited_hub}/api/models/{REPO}/commits/main", headers=AUTH, params={"p": page})
    assert response.status_code == 400 and "p must be a page number" in response.json()["error"]


def test_slowloris_neither_exhausts_the_server_nor_keeps_others_out(limited_hub: str) -> None:
    """Connections that never finish a request's head: before, past the open-file limit the server stopped
    accepting anyone and filled its log with EMFILE tracebacks (the fixture checks the log)."""
    host, port = limited_hub.removeprefix("http://").rsplit(":", 1)
    held = []
    try:
        for _ in range(FILES_LIMIT + 30):
            conn = socket.create_connection((host, int(port)), timeout=5)
            conn.sendall(b"GET /api/whoami-v2 HTTP/1.1\r\nHost: slow\r\n")  # and never the blank line
            held.append(conn)
        # a new connection: the server may close its idle keep-alive ones to stay under its file limit, and a
        # request sent on one the pool still holds from the fixture meets a closed socket (clients retry that)
        close_session()
        response = get_session().get(f"{limited_hub}/api/whoami-v2", headers=AUTH, timeout=5)
        assert response.status_code == 200
    finally:
        for conn in held:
            conn.close()


def test_a_request_head_must_arrive_in_time(hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "REQUEST_HEAD_SECONDS", 0.2)
    host, port = hub.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(b"GET /api/whoami-v2 HTTP/1.1\r\n")
        assert conn.recv(1) == b""  # closed by the server (before: open for as long as the client liked)
