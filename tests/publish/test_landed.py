"""Tag only what landed (issue 38): a Hub-side .gitignore or .gitattributes that would change the commit is refused
before the commit, and a commit that landed wrong gets no tag and is repaired by running the push again."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.errors import PublishRefused, VerifyFailed
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from tests.helpers import REPO, TOKEN, push_options


def replacing(hub: LocalHub, **options: object) -> PushOptions:
    """--delete-extra: the hosted .gitignore, a file no release listed, is deleted by the release's commit."""
    return push_options(hub, delete_extra=True, **options)


GITIGNORE = b"# the Hub's own\nconfig.json\n*.safetensors\n"


def hosted(hub: LocalHub, path: str, data: bytes) -> HfApi:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO, exist_ok=True)
    api.create_commit(REPO, [CommitOperationAdd(path, data)], commit_message=f"{path} by hand")
    return api


def test_a_hosted_gitignore_is_refused_before_the_commit(hub: LocalHub, dist: Path) -> None:
    api = hosted(hub, ".gitignore", GITIGNORE)
    commits = hub.stats.commits
    with pytest.raises(PublishRefused) as exc:
        push(dist, replacing(hub))
    refused = {p.file: p.message for p in exc.value.problems}
    assert set(refused) == {"config.json", "model.safetensors"}
    assert all(".gitignore ignores it" in m and "nothing was committed" in m for m in refused.values())
    assert hub.stats.commits == commits and not api.list_repo_refs(REPO).tags
    api.delete_file(".gitignore", REPO)  # the way out the refusal names
    assert push(dist, replacing(hub)).verified


def test_a_hosted_gitattributes_putting_the_card_in_lfs_is_refused(hub: LocalHub, dist: Path) -> None:
    api = hosted(hub, ".gitattributes", b"*.safetensors filter=lfs diff=lfs merge=lfs -text\nREADME.md filter=lfs\n")
    commits = hub.stats.commits
    with pytest.raises(PublishRefused) as exc:
        push(dist, replacing(hub))
    [problem] = exc.value.problems
    assert problem.file == "README.md" and "store the card in LFS" in problem.message
    assert hub.stats.commits == commits and not api.list_repo_refs(REPO).tags


def test_a_commit_that_landed_wrong_is_not_tagged_and_a_rerun_repairs_it(
    hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preupload's answer unread (as if the Hub dropped files some other way): the landed commit's own
    listing still keeps the tag off it, and the re-run commits what is missing, then tags."""
    api = hosted(hub, ".gitignore", GITIGNORE)
    monkeypatch.setattr(
        "release.publish.commit_stream.refuse_what_the_hub_would_drop", lambda ctx, modes: None, raising=False
    )
    with pytest.raises(VerifyFailed) as exc:
        push(dist, replacing(hub))
    files = {p.file for p in exc.value.problems}
    assert any(f.endswith(":config.json") for f in files) and any(f.endswith(":model.safetensors") for f in files)
    assert any("was not created" in p.message and "hf-release push v5" in p.message for p in exc.value.problems)
    assert not api.list_repo_refs(REPO).tags
    assert "config.json" not in api.list_repo_files(REPO)  # it landed wrong; the push deleted the .gitignore
    monkeypatch.undo()
    again = push(dist, replacing(hub))
    assert again.verified and {p for p, _ in again.plan.add} == {"config.json", "model.safetensors"}
    assert api.list_repo_refs(REPO).tags[0].target_commit == again.commit
