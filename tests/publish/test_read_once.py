"""Each release.json a command touches is opened (and parsed) once by hf-release itself, and each small file's
git blob id is computed at most once per push: counted at open() by an audit hook, and at hashlib.sha1.

Reads for sending are the upload, not a second parse: huggingface_hub's (it hashes and uploads LFS files) and
the streamed commit's (release/publish/commit_stream.py reads each small file, release.json too, as its line is
sent). An open whose nearest caller outside the standard library is one of those is left out.
"""

from __future__ import annotations

import hashlib
import sys
import sysconfig
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import release
from release.localhub import LocalHub
from tests.helpers import TOKEN, cli
from tests.reliability.helpers import token_args

STDLIB = sysconfig.get_paths()["stdlib"]
RELEASE = str(Path(release.__file__).parent)
LOCAL_HUB = str(Path(sys.modules[LocalHub.__module__].__file__).parent)  # the server runs in this process
BOOKKEEPING = ("release.json", "SHA256SUMS", "model.sig")
SENDERS = ("huggingface_hub", str(Path(RELEASE, "publish", "commit_stream.py")))
_counting: list[tuple[Path, Counter[str]]] = []


def _caller(depth: int) -> str:
    """The file of the nearest caller outside the standard library."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(STDLIB):
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else ""


def _on_audit(event: str, args: tuple[object, ...]) -> None:
    if event != "open" or not _counting or not isinstance(args[0], str | Path):
        return
    path, caller = Path(args[0]), _caller(2)
    for root, opened in _counting:
        if path.is_relative_to(root) and not any(sender in caller for sender in SENDERS):
            opened[path.relative_to(root).as_posix()] += 1


sys.addaudithook(_on_audit)  # audit hooks stay for the process: it counts only inside `opens`


@contextmanager
def opens(root: Path) -> Iterator[Counter[str]]:
    """Files under `root` opened by hf-release (path relative to root → times), while the block runs."""
    opened: Counter[str] = Counter()
    _counting.append((root, opened))
    try:
        yield opened
    finally:
        _counting.remove((root, opened))


@contextmanager
def blob_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[bytes]]:
    """Git blob ids hf-release computes (sha1 over `blob <size>\\0` + bytes), by their first bytes."""
    computed: Counter[bytes] = Counter()
    sha1 = hashlib.sha1

    def counted(data: bytes = b"", **kwargs: bool) -> object:
        caller = _caller(2)
        if data.startswith(b"blob ") and caller.startswith(RELEASE) and not caller.startswith(LOCAL_HUB):
            computed[data[:200]] += 1
        return sha1(data, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(hashlib, "sha1", counted)
        yield computed


@pytest.fixture
def project(build_example: Callable[..., Path], tmp_path: Path) -> Path:
    build_example()
    return tmp_path


def hf_release_ok(capsys: pytest.CaptureFixture[str], *args: str | Path) -> None:
    run = cli(capsys, *args)
    assert run.code == 0, run.err


def assert_read_once(opened: Counter[str], *folders: str) -> None:
    for folder in folders:
        assert opened[f"{folder}/release.json"] == 1, opened
        assert all(opened[f"{folder}/{name}"] <= 1 for name in BOOKKEEPING), opened


def test_a_push_and_a_repeat_push_read_release_json_once(
    project: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    push = ("push", "v5", "--root", project, "--endpoint", hub.url, *token_args(TOKEN))
    for attempt in ("first", "repeat"):
        with opens(project / "dist") as opened, blob_ids(monkeypatch) as computed:
            hf_release_ok(capsys, *push)
        assert_read_once(opened, "v5")
        assert computed and max(computed.values()) == 1, (attempt, computed)  # the bookkeeping files' ids, once each


def test_a_dry_run_reads_release_json_once(project: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str]) -> None:
    with opens(project / "dist") as opened:
        hf_release_ok(capsys, "push", "v5", "--dry-run", "--root", project, "--endpoint", hub.url, *token_args(TOKEN))
    assert_read_once(opened, "v5")


def test_status_and_verify_remote_read_release_json_once(
    project: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str]
) -> None:
    hub_options = ("--root", project, "--endpoint", hub.url, *token_args(TOKEN))
    hf_release_ok(capsys, "push", "v5", *hub_options)
    with opens(project / "dist") as opened:
        hf_release_ok(capsys, "status", *hub_options)
    assert_read_once(opened, "v5")
    with opens(project / "dist") as opened:
        hf_release_ok(capsys, "verify", "v5", "--remote", *hub_options)
    assert_read_once(opened, "v5")


def test_the_counters_see_a_second_read(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counting itself: a read by hf-release is counted, and so is a blob id computed twice."""
    from release.staged import read_staged
    from release.staged.manifest import Manifest, git_blob_id

    dist = project / "dist" / "v5"
    with opens(project / "dist") as opened, blob_ids(monkeypatch) as computed:
        Manifest.load(read_staged(dist).dist / "release.json")
        git_blob_id(b"x"), git_blob_id(b"x")
    assert opened["v5/release.json"] == 2 and opened["v5/SHA256SUMS"] == 1
    assert computed[b"blob 1\0x"] == 2


def test_build_and_verify_read_each_release_json_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rebuild reads its own staging's release.json (to know it may replace it) and the previous version's
    (to compare with): each once; verify reads the staged one once."""
    hf_release_ok(capsys, "init", "v6", "--from", "v5", "--root", project)
    for attempt in ("first", "rebuild"):
        with opens(project / "dist") as opened:
            hf_release_ok(capsys, "build", "v6", "--root", project)
        manifests = {path: n for path, n in opened.items() if path.endswith("release.json")}
        assert manifests.get("v5/release.json") == 1 and all(n == 1 for n in manifests.values()), (attempt, opened)
    with opens(project / "dist") as opened:
        hf_release_ok(capsys, "verify", "v6", "--root", project)
    assert_read_once(opened, "v6")
