"""`hf-release status`: each version's spec, staged release and tag on a real local Hub."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.hub.client import connect
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.status import project_status
from tests.helpers import REPO, TOKEN, cli, edit


def test_status_of_published_staged_and_new_versions(
    hub: LocalHub,
    build_example: Callable[..., Path],
    example: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    transport: str,
) -> None:
    dist = build_example()
    assert push(dist, PushOptions(endpoint=hub.url, token=TOKEN)).xet == (transport == "xet")
    v10 = example.parent.with_name("v10")  # sorts after v5, naturally
    shutil.copytree(example.parent, v10)
    edit(v10 / "release.toml", 'version = "v5"', 'version = "v10"')
    (example.parent.with_name("notes")).mkdir()  # not a version: no spec, never listed

    v5, new = project_status(tmp_path, tmp_path / "dist", connect(hub.url, TOKEN))
    assert (v5.version, v5.spec, v5.staged, v5.hub, v5.hub_matches) == ("v5", "ok", "verified", "published", True)
    assert v5.commit == HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO).tags[0].target_commit
    assert v5.spec_changed_since_build is False and not v5.problems
    assert (new.version, new.spec, new.staged, new.hub, new.commit) == ("v10", "ok", "no", "not published", None)

    # the tag is moved to other files by hand, a staged file changes, the spec is edited
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_commit(REPO, [CommitOperationAdd("config.json", b"{}")], commit_message="edit")
    api.delete_tag(REPO, tag="v5")
    api.create_tag(REPO, tag="v5")
    with (dist / "results.tsv").open("a") as f:
        f.write("\n")
    edit(example, 'version = "v5"', 'version = "v5"  # edited')
    (v5, _) = project_status(tmp_path, tmp_path / "dist", connect(hub.url, TOKEN))
    assert v5.staged == "changed" and v5.spec_changed_since_build is True and v5.hub_matches is False
    assert any("config.json" in p and "differs" in p for p in v5.problems), v5.problems
    assert any("results.tsv" in p and "changed since build" in p for p in v5.problems), v5.problems

    # the command: the whole report, then exit 1, so a script sees the drift
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    run = cli(capsys, "status", "--endpoint", hub.url, "--format", "json")
    assert run.code == 1
    document = json.loads(run.out)
    assert document["ok"] is False and [v["version"] for v in document["versions"]] == ["v5", "v10"]


def test_status_json_and_local_only(
    build_example: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    build_example()
    monkeypatch.chdir(tmp_path / "artifacts")  # the project root is found upward
    run = cli(capsys, "status", "--local", "--format", "json")
    assert run.code == 0
    document = json.loads(run.out)
    assert document["command"] == "status" and Path(document["root"]) == tmp_path.resolve()
    (v5,) = document["versions"]
    assert v5["staged"] == "verified" and v5["hub"] == "not checked"
