"""The streamed commit is huggingface_hub's own commit, byte for byte, with its length known before it is sent;
content is asked and uploaded in chunks. These pin the library internals commit_stream.py relies on: an
upgrade that changes the commit's line format or where an operation's upload mode is kept fails here."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub._commit_api import _prepare_commit_payload

from release.errors import PublishRefused
from release.localhub import LocalHub
from release.publish import commit_stream
from release.publish.commit_stream import IGNORED, LFS, REGULAR, CommitBody, commit_header, upload_mode
from release.publish.push import PushOptions, push
from release.publish.upload_meter import MeteredAdd, UploadMeter
from tests.helpers import REPO, TOKEN

FILES = {
    "config.json": b'{"a": 1}\n',
    "caf\u00e9/\u00fc.txt": b"\xff\x00\x01",
    "empty.txt": b"",
    "three.txt": b"abc",
    "model.safetensors": b"\0" * 7,
    "ignored.log": b"x",
}
MODES = {"model.safetensors": LFS, "ignored.log": IGNORED}


def body_of(folder: Path, header: dict[str, str], meter: UploadMeter | None = None) -> CommitBody:
    for name, data in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    adds = [
        (name, hashlib.sha256(data).hexdigest(), len(data), MODES.get(name, REGULAR)) for name, data in FILES.items()
    ]
    return CommitBody(folder, header, adds, ["old/gone.bin"], {}, meter or UploadMeter())


def test_the_streamed_body_is_huggingface_hubs_commit_payload(tmp_path: Path) -> None:
    header = commit_header("Release v5", "what changed\n\n\u00e9", "a" * 40)
    body = body_of(tmp_path, header)
    ops: list[CommitOperationAdd | CommitOperationDelete] = []
    for name, _, _, mode in body.adds:
        op = CommitOperationAdd(name, str(tmp_path / name))
        op._upload_mode, op._should_ignore = ("lfs" if mode == LFS else "regular"), mode == IGNORED
        op.upload_info.sha256 = hashlib.sha256(FILES[name]).digest()
        ops.append(op)
    ops.append(CommitOperationDelete("old/gone.bin"))
    library = b"".join(
        json.dumps(item).encode() + b"\n"
        for item in _prepare_commit_payload(
            ops, {}, header["summary"], header["description"], parent_commit=header["parentCommit"]
        )
    )
    streamed = b"".join(body.chunks())
    assert streamed == library
    assert body.length() == len(library)
    assert [upload_mode(op) for op in ops[:-1]] == [mode for *_, mode in body.adds]


def test_bytes_that_are_not_the_built_ones_stop_the_stream_before_their_line(tmp_path: Path) -> None:
    meter = UploadMeter()
    body = body_of(tmp_path, commit_header("x", "", None), meter)
    (tmp_path / "three.txt").write_bytes(b"abd")  # same size; no stat recorded, so only the sha256 can tell
    sent: list[bytes] = []
    with pytest.raises(PublishRefused, match="three.txt: changed since build: the bytes read to send it"):
        sent.extend(body.chunks())
    assert sent == [] and "three.txt" not in meter.sent  # nothing of it (nor after it) was handed to the socket


def test_content_is_asked_and_uploaded_in_chunks(
    built: Path, tmp_path: Path, hub: LocalHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "dist" / built.name
    shutil.copytree(built, dist)
    monkeypatch.setattr(commit_stream, "PREUPLOAD_CHUNK", 4)
    session, sent = commit_stream.get_session, []

    def post(url: str, **kwargs: Any) -> Any:
        response = session().post(url, **kwargs)
        sent.append(response.request.headers)
        return response

    monkeypatch.setattr(commit_stream, "get_session", lambda: SimpleNamespace(post=post))
    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    files = len(result.plan.add)
    assert hub.stats.requests["POST preupload"] == -(-files // 4) and files > 8
    assert hub.stats.commits == 1 and result.verified
    (headers,) = sent  # one commit POST: an ordinary request of a declared length, huggingface_hub's headers
    assert int(headers["content-length"]) > 0 and "transfer-encoding" not in headers
    assert headers["authorization"] == f"Bearer {TOKEN}" and "hf_hub/" in headers["user-agent"]
    assert result.bytes_sent == sum(size for _, size in result.plan.add)  # every byte, LFS and inline, counted once
    assert sorted(HfApi(endpoint=hub.url, token=TOKEN).list_repo_files(REPO, revision="v5")) == sorted(
        [".gitattributes", *(path for path, _ in result.plan.add)]
    )


def test_over_xet_a_hash_that_is_not_release_jsons_commits_nothing(tmp_path: Path) -> None:
    """hf_xet computes the sha256 over the bytes it uploads (a preset one it would not check): each chunk's is
    compared with release.json before anything is committed."""
    (tmp_path / "w.bin").write_bytes(b"abc")
    built = MeteredAdd("w.bin", str(tmp_path / "w.bin"), expected_sha256=hashlib.sha256(b"abc").hexdigest())
    moved = MeteredAdd("w.bin", str(tmp_path / "w.bin"), expected_sha256=hashlib.sha256(b"abd").hexdigest())
    for op in (built, moved):
        op.upload_info.sha256 = hashlib.sha256(b"abc").digest()  # what hf_xet hashed while sending
    commit_stream._uploaded_as_built([built])
    with pytest.raises(PublishRefused, match="w.bin: changed since build"):
        commit_stream._uploaded_as_built([built, moved])
