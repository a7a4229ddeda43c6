"""`hf-release push` exit codes: 3 for remote failures, 4 for refusals (2 for bad input), each with a
message naming what is wrong, in human and JSON output alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.hub import LocalHub
from tests.reliability.helpers import READ_TOKEN, REPO, TOKEN, cli


def push_args(dist: Path, endpoint: str, *extra: str) -> list[str | Path]:
    return ["push", "v5", "--dist", dist.parent, "--endpoint", endpoint, *extra]


def test_remote_failures_exit_3(hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unreachable = cli(capsys, *push_args(dist, "http://127.0.0.1:9", "--token", TOKEN))
    assert unreachable.code == 3 and "cannot reach the Hub" in unreachable.err
    wrong = cli(capsys, *push_args(dist, hub.url, "--token", "hf_not_a_token_of_this_hub_0000"))
    assert wrong.code == 3 and "HTTP 401" in wrong.err
    as_json = cli(capsys, *push_args(dist, "http://127.0.0.1:9", "--token", TOKEN, "--format", "json"))
    document = json.loads(as_json.out)
    assert as_json.code == 3 and document["exit_code"] == 3 and document["error"] == "remote-error"
    assert not HfApi(endpoint=hub.url, token=TOKEN).repo_exists(REPO)


def test_refusals_exit_4(hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]) -> None:
    read_only = cli(capsys, *push_args(dist, hub.url, "--token", READ_TOKEN))
    assert read_only.code == 4 and "read-only" in read_only.err

    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    info = api.create_commit(REPO, [CommitOperationAdd("README.md", b"# Written by hand\n")], commit_message="by hand")
    hand_edited = cli(capsys, *push_args(dist, hub.url, "--token", TOKEN))
    assert hand_edited.code == 4 and "edited by hand" in hand_edited.err and "--overwrite-card" in hand_edited.err

    api.create_tag(REPO, tag="v5", revision=info.oid)  # v5 already published, with other files
    taken = cli(capsys, *push_args(dist, hub.url, "--token", TOKEN, "--overwrite-card", "--format", "json"))
    assert taken.code == 4 and "already published" in taken.err and "--force-tag" in taken.err
    assert json.loads(taken.out)["error"] == "refused"
    assert api.list_repo_refs(REPO).branches[0].target_commit == info.oid  # nothing was written


def test_bad_input_exits_2(hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("release.remote.get_token", lambda: None)  # no login cache either
    no_token = cli(capsys, *push_args(dist, hub.url))
    assert no_token.code == 2 and "no Hugging Face token" in no_token.err
    assert cli(capsys, "push", "v9", "--dist", dist.parent, "--endpoint", hub.url, "--token", TOKEN).code == 2
