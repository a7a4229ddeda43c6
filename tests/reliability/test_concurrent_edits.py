"""Bytes published are the bytes hashed: a staged file edited in place while build or push runs.

The edits are real writes to the files on disk, timed deterministically: during a push by holding one of
its requests at the local Hub (a `delay` fault rule) and editing while it is held; during a build by
editing between two of its steps.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub import HfApi, hf_hub_download

import release.builder.hashing
from release.builder import build
from release.errors import CheckFailed, PublishRefused, ReleaseError
from release.localhub import LocalHub
from release.publish import commit_stream
from release.publish.push import PushOptions, push
from release.spec import load_spec
from release.staged.manifest import Manifest
from release.staged.names import MANIFEST_NAME
from tests.helpers import REPO, TOKEN
from tests.reliability.helpers import cli, main_and_tags, token_args

HELD = 3.0  # seconds the local Hub holds the chosen request; the edit happens inside that window


def same_size_edit(path: Path) -> None:
    """Change bytes in place (the inode, and every hard link to it, sees the change), keeping the size."""
    data = bytearray(path.read_bytes())
    data[data.index(b'"')] = ord("'")
    with open(path, "r+b") as f:
        f.write(data)


def push_while(hub: LocalHub, dist: Path, edit: Callable[[], None]) -> ReleaseError | None:
    """Run push in a thread; as soon as the held request reaches the Hub, run `edit`; return push's error."""
    outcome: list[ReleaseError | None] = []

    def run() -> None:
        try:
            push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
            outcome.append(None)
        except ReleaseError as exc:
            outcome.append(exc)

    pusher = threading.Thread(target=run)
    pusher.start()
    deadline = time.monotonic() + 60
    while not any(k.startswith("delay=") for k in hub.stats.faults) and pusher.is_alive():
        assert time.monotonic() < deadline, "the held request never arrived"
        time.sleep(0.01)
    assert pusher.is_alive(), f"push ended before the held request: {outcome}"
    edit()
    pusher.join(timeout=120)
    assert not pusher.is_alive() and outcome
    return outcome[0]


@pytest.mark.hub(f"POST:delay={HELD}:1:/preupload/")
def test_a_small_file_edited_during_the_upload_is_refused_not_published(hub: LocalHub, dist: Path) -> None:
    """config.json is edited while the Hub holds the preupload: push reads it for the commit, finds bytes that
    are not release.json's, and refuses (exit 4) — nothing is committed, no tag."""
    error = push_while(hub, dist, lambda: same_size_edit(dist / "config.json"))
    assert isinstance(error, PublishRefused), error
    assert "config.json: changed since build" in str(error), error
    assert hub.stats.commits == 0 and main_and_tags(HfApi(endpoint=hub.url, token=TOKEN))[1] == {}


def test_a_small_file_edited_while_the_commit_streams_stops_it_and_nothing_is_committed(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit is streamed, each small file read as its line is sent (a write per line here). The last small
    file is edited in place once the lines before it are on their way: the stream stops before its line, the Hub
    has received fewer bytes than the request declared and commits nothing; push exits 4 and no tag is made."""
    monkeypatch.setattr(commit_stream, "FLUSH_BYTES", 1)
    real, read, edited = commit_stream.CommitBody._read, [], []

    def read_then_edit(self: commit_stream.CommitBody, path: str, sha256: str, size: int) -> bytes:
        if not edited:  # the first small file is on its way: edit the last one, not yet read
            edited.append(max(p for p, _, _, mode in self.adds if mode == commit_stream.REGULAR))
            flip_last_byte(dist / edited[0])
        read.append(path)
        return real(self, path, sha256, size)

    monkeypatch.setattr(commit_stream.CommitBody, "_read", read_then_edit)
    failed = cli(capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert failed.code == 4, failed
    assert f"{edited[0]}: changed since build" in failed.err, failed.err
    # the stream itself found it (a dropped connection before that would retry, and the retry's stat check finds it)
    assert read[-1] == edited[0] or hub.stats.requests["POST commit"] > 1, (read, hub.stats.requests)
    api = HfApi(endpoint=hub.url, token=TOKEN)
    assert hub.stats.commits == 0 and main_and_tags(api)[1] == {} and api.list_repo_files(REPO) == [".gitattributes"]


def flip_last_byte(path: Path) -> None:
    with open(path, "r+b") as f:
        f.seek(-1, 2)
        last = f.read(1)[0]
        f.seek(-1, 2)
        f.write(bytes([last ^ 1]))


@pytest.mark.hub(f"POST:delay={HELD}:1:/tag/")
def test_an_edit_after_the_commit_was_sent_leaves_a_right_hub_verified(hub: LocalHub, dist: Path) -> None:
    """The edit lands after the commit carried the built bytes (the tag request is held): the Hub holds exactly
    release.json's files, and the closing check compares the Hub with release.json, not with the disk."""
    built = (dist / "config.json").read_bytes()
    assert push_while(hub, dist, lambda: same_size_edit(dist / "config.json")) is None
    served = Path(hf_hub_download(REPO, "config.json", revision="v5", endpoint=hub.url, token=TOKEN)).read_bytes()
    assert served == built
    listed = {f.path_in_repo: f.sha256 for f in Manifest.load(dist / MANIFEST_NAME).files}
    assert hashlib.sha256(served).hexdigest() == listed["config.json"]


def test_an_edit_behind_the_hashing_fails_the_build(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A same-size edit of config.json's source (hard-linked into the staging) after it was hashed and before
    the build ends: the build fails naming the file, stages nothing and leaves no building folder."""
    real = release.builder.hashing.Digest.run

    def hash_then_edit(self: object, ctx: object) -> object:
        done = real(self, ctx)  # type: ignore[arg-type]
        same_size_edit(example.parent / "config.json")
        return done

    monkeypatch.setattr(release.builder.hashing.Digest, "run", hash_then_edit)
    with pytest.raises(CheckFailed) as failed:
        build(load_spec(example), tmp_path / "dist")
    assert "config.json: changed while build was reading it (mtime, ctime moved" in str(failed.value)
    assert not (tmp_path / "dist" / "v5").exists()
    assert not list((tmp_path / "dist").glob(".v5.*"))


def rewrite_tail(path: Path) -> None:
    """Weights rewritten in place after build hashed them: same size, the last bytes changed."""
    with open(path, "r+b") as f:
        f.seek(-64, 2)
        f.write(bytes(64))


@pytest.mark.hub("POST:delay=0.3:1:/api/repos/create")
def test_weights_rewritten_before_the_upload_send_nothing(hub: LocalHub, dist: Path) -> None:
    """The edit lands between the preflight and the upload (the Hub holds the repo's creation): push re-checks
    every file's stat before it reads a byte for sending and refuses (exit 4); no LFS byte reaches the Hub."""
    error = push_while(hub, dist, lambda: rewrite_tail(dist / "model.safetensors"))
    assert isinstance(error, PublishRefused), error
    assert "model.safetensors: changed since build" in str(error), error
    assert sum(hub.stats.upload_bytes.values()) == 0 and hub.stats.commits == 0


@pytest.mark.hub("PUT:delay=0.3:1:/_lfs/", multipart_chunk_size=16 * 1024)
def test_weights_rewritten_during_the_upload_are_refused_once(hub: LocalHub, dist: Path) -> None:
    """The edit lands while the upload streams the weights (in 16 KiB parts; the Hub holds the first): push
    refuses (exit 4, "changed since build") instead of reporting the Hub's sha256 refusal as a Hub error
    (exit 3), and a re-run is refused before it uploads anything again."""
    error = push_while(hub, dist, lambda: rewrite_tail(dist / "model.safetensors"))
    assert isinstance(error, PublishRefused), error
    assert "model.safetensors: changed since build" in str(error), error
    assert hub.stats.commits == 0 and main_and_tags(HfApi(endpoint=hub.url, token=TOKEN))[1] == {}
    sent = sum(hub.stats.upload_bytes.values())
    with pytest.raises(PublishRefused, match="model.safetensors: changed since build"):
        push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert sum(hub.stats.upload_bytes.values()) == sent  # no second upload


@pytest.mark.hub("POST:delay=0.3:1:^/_xet/cas/v1/xorbs/")
def test_weights_rewritten_while_a_xet_upload_is_held_publish_the_built_bytes(
    hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Over Xet, hf_xet reads a file into chunks and sends them in xorbs (up to 64 MiB each); the example's weights
    fit in one, read before it is sent: an edit that lands while the Hub holds that xorb changes nothing that is
    sent. The Hub serves exactly the bytes build hashed."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    built = Manifest.load(dist / MANIFEST_NAME)
    assert push_while(hub, dist, lambda: rewrite_tail(dist / "model.safetensors")) is None
    assert any(k.startswith("POST xet_xorb") for k in hub.stats.requests), hub.stats.requests
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)  # read back through the plain resolve
    served = hf_hub_download(REPO, "model.safetensors", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "c")
    with open(served, "rb") as f:
        assert hashlib.file_digest(f, "sha256").hexdigest() == built.file("model.safetensors").sha256
