"""hf_xet's own reports of what it uploaded, kept for push (release/publish/xet_meter.py): new chunk bytes and
deduplicated ones told apart, and the xorb and shard bytes equal to what the local Hub's CAS received."""

from __future__ import annotations

import os
from pathlib import Path

import huggingface_hub.utils._xet as client_xet
import pytest
from huggingface_hub import HfApi, constants

from release.localhub import LocalHub
from release.publish.xet_meter import XetSent, metered_xet
from tests.helpers import TOKEN


def test_new_and_deduplicated_bytes_are_told_apart(
    hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    api, before = HfApi(endpoint=hub.url, token=TOKEN), client_xet.get_xet_session
    repo_id = api.create_repo("acme/dedup").repo_id
    weights = os.urandom(2_000_000)
    moved, edited = XetSent(), XetSent()
    with metered_xet(first := XetSent()):
        api.upload_file(path_or_fileobj=weights, path_in_repo="a/model.safetensors", repo_id=repo_id)
    assert (first.new, first.deduplicated, first.commits) == (len(weights), 0, 1)
    cas = hub.stats.xet_bytes
    assert first.wire == cas["xorb_received"] + cas["shard_received"] and first.xorbs > len(weights)
    with metered_xet(moved):  # the same weights under a new path: no xorb, one small shard
        api.upload_file(path_or_fileobj=weights, path_in_repo="b/model.safetensors", repo_id=repo_id)
    assert (moved.new, moved.deduplicated, moved.xorbs) == (0, len(weights), 0) and 0 < moved.shards < 4096
    changed = weights[:1_000_000] + bytes(64) + weights[1_000_064:]
    with metered_xet(edited):  # 64 bytes changed: one chunk or two sent again
        api.upload_file(path_or_fileobj=changed, path_in_repo="a/model.safetensors", repo_id=repo_id)
    assert edited.new + edited.deduplicated == len(weights) and 0 < edited.new < len(weights) // 10
    assert first.wire + moved.wire + edited.wire == cas["xorb_received"] + cas["shard_received"]
    with metered_xet(by_file := XetSent()):  # each file's own figures, by its local path
        (tmp_path / "w.bin").write_bytes(weights)
        api.upload_file(path_or_fileobj=str(tmp_path / "w.bin"), path_in_repo="c/model.safetensors", repo_id=repo_id)
    assert by_file.files == {str(tmp_path / "w.bin"): (0, len(weights))}
    assert client_xet.get_xet_session is before  # put back once each block ends
