"""Files on main that are not the release's (issue 38, items 6 and 11): push deletes only what an earlier release
listed; a file it never published is refused (exit 4) until --keep-extra keeps it or --delete-extra deletes it;
--keep-extra succeeds, re-runs as a no-op, and verify accepts exactly the release plus the kept files. And (item 7) a
version that is a branch on the Hub is refused before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.errors import PublishRefused, VerifyFailed
from release.hub.client import connect
from release.localhub import LocalHub
from release.publish.files import release_paths
from release.publish.push import push
from release.publish.verify_remote import verify_remote
from release.staged import read_staged
from tests.helpers import REPO, TOKEN, push_options


def by_hand(hub: LocalHub, path: str = "notes.txt", data: bytes = b"my own notes\n") -> HfApi:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO, exist_ok=True)
    api.create_commit(REPO, [CommitOperationAdd(path, data)], commit_message=f"{path} with hf upload")
    return api


def test_push_never_deletes_a_file_no_release_listed_unless_told(hub: LocalHub, dist: Path) -> None:
    api = by_hand(hub)
    commits = hub.stats.commits
    with pytest.raises(PublishRefused) as exc:
        push(dist, push_options(hub))
    [problem] = exc.value.problems
    assert problem.file == f"{REPO}:notes.txt" and "--keep-extra" in problem.message
    assert "--delete-extra" in problem.message and hub.stats.commits == commits
    assert push(dist, push_options(hub, delete_extra=True)).verified
    assert "notes.txt" not in api.list_repo_files(REPO)


def test_keep_extra_succeeds_reruns_as_a_no_op_and_verify_accepts_the_kept_file(hub: LocalHub, dist: Path) -> None:
    api = by_hand(hub)
    first = push(dist, push_options(hub, keep_extra=True))
    assert first.verified and first.tag == "v5"
    on_hub = set(api.list_repo_files(REPO, revision="v5"))
    assert on_hub == set(release_paths(read_staged(dist))) | {"notes.txt", ".gitattributes"}
    commits = hub.stats.commits
    again = push(dist, push_options(hub, keep_extra=True))
    plain = push(dist, push_options(hub))  # the tag holds the release and the kept file: published, nothing to do
    assert again.commit == plain.commit == first.commit and again.plan.tag == plain.plan.tag == "keep"
    assert hub.stats.commits == commits
    assert verify_remote(connect(hub.url, TOKEN), read_staged(dist))["commit"] == first.commit  # as status does


def test_verify_still_names_a_file_the_tagged_commit_itself_added(hub: LocalHub, dist: Path) -> None:
    push(dist, push_options(hub))
    api = HfApi(endpoint=hub.url, token=TOKEN)
    info = api.create_commit(REPO, [CommitOperationAdd("sneaky.txt", b"x")], commit_message="added")
    api.delete_tag(REPO, tag="v5")
    api.create_tag(REPO, tag="v5", revision=info.oid)
    with pytest.raises(VerifyFailed) as exc:
        verify_remote(connect(hub.url, TOKEN), read_staged(dist))
    assert [p.file for p in exc.value.problems] == [f"{REPO}@v5:sneaky.txt"]


def test_a_version_that_is_a_branch_on_the_hub_is_refused_before_anything_is_sent(hub: LocalHub, dist: Path) -> None:
    api = by_hand(hub)
    api.create_branch(REPO, branch="v5")
    commits = hub.stats.commits
    with pytest.raises(PublishRefused) as exc:
        push(dist, push_options(hub, keep_extra=True))
    [problem] = exc.value.problems
    assert problem.file == f"{REPO}@v5" and "is a branch on the Hub" in problem.message
    assert hub.stats.commits == commits and not api.list_repo_refs(REPO).tags
