"""Faults during push, injected by the local Hub: every transient failure is retried and the push lands
exactly once; failures beyond the retries are reported clearly and a re-run completes the release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

import release.publish.apply
from release.errors import RemoteError
from release.hub.client import ATTEMPTS
from release.localhub import LocalHub
from release.publish.files import release_paths
from release.publish.push import PushOptions, push
from release.staged import read_staged
from tests.helpers import REPO, TOKEN, cli, local_hub
from tests.reliability.helpers import TALLY, main_and_tags, seed_previous_release, token_args, tree

KiB = 1024


def faults(*rules: str) -> str:
    return ";".join(rules)


def injected(spec: str) -> int:
    return sum(int(rule.split(":")[2]) for rule in spec.split(";"))


def assert_published_once(hub: LocalHub, dist: Path, commit: str | None, *, commits: int = 2) -> None:
    """main and the tag at the push's commit, holding exactly the release; no duplicate commit."""
    api = HfApi(endpoint=hub.url, token=TOKEN)
    main, tags = main_and_tags(api)
    assert commit is not None and main == commit and tags.get("v5") == commit
    assert len(api.list_repo_commits(REPO)) == commits
    wanted = release_paths(read_staged(dist))
    assert tree(api, "v5").keys() - {".gitattributes"} == wanted.keys()
    assert {p: e[0] for p, e in tree(api, "v5").items() if p in wanted} == {p: e.size for p, e in wanted.items()}


# Every route a first push takes, each failing in every way the Hub fails: rate limited (429 with
# Retry-After), a 5xx, or the connection dropped mid-request. LFS files of 43, 46 and 46 KiB (the honest
# note's picture, the bench chart, the weights) with 45 KiB parts: one basic upload, two multipart uploads
# (two part PUTs and a completion POST each).
FIRST_PUSH_STORM = faults(
    "GET:429:1:/api/whoami-v2",
    "GET:503:1:^/api/models/[^/]+/[^/]+$",  # repo info (does the repo exist?)
    "POST:502:1:^/api/repos/create$",
    "GET:503:1:/refs$",
    "GET:500:1:/xet-write-token/",
    "POST:503:1:/preupload/",
    "POST:429:1:/preupload/",
    "POST:502:1:/info/lfs/objects/batch$",
    "POST:429:1:/info/lfs/objects/batch$",
    "PUT:drop:1:^/_lfs/[^/]+$",  # the basic upload, connection dropped mid-body
    "PUT:503:1:^/_lfs/[^/]+$",
    "PUT:500:1:^/_lfs/[^/]+/1$",  # multipart part 1
    "PUT:drop:1:^/_lfs/[^/]+/2$",  # multipart part 2, connection dropped mid-body
    "POST:503:1:^/_lfs/[^/]+$",  # multipart completion
    "POST:502:1:/info/lfs/objects/verify$",
    "POST:503:1:/commit/",  # huggingface_hub sends the commit once: hf-release retries it
    "POST:drop:1:/commit/",
    "POST:503:1:/tag/",  # likewise the tag
    "POST:drop:1:/tag/",
    "GET:503:1:/tree/",  # remote verify's listing
    "GET:429:1:/tree/",
)


@pytest.mark.hub(FIRST_PUSH_STORM, multipart_chunk_size=45 * KiB)
def test_a_first_push_survives_a_fault_on_every_route(hub: LocalHub, dist: Path, sleeps: list[float]) -> None:
    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert result.verified
    assert sum(hub.stats.faults.values()) == injected(FIRST_PUSH_STORM)  # every fault fired
    assert hub.stats.commits == 1
    assert_published_once(hub, dist, result.commit)
    assert (
        hub.stats.requests["PUT lfs_part"] == 4 and hub.stats.requests["POST lfs_object"] == 2
    )  # multipart (faults not counted)
    # Retry-After honoured: huggingface_hub waits Retry-After + 1 s; hf-release waits Retry-After.
    assert 2.0 in sleeps and all(0 < s <= 8 for s in sleeps)
    TALLY["faults injected and survived"] += sum(hub.stats.faults.values())


@pytest.mark.hub(faults("POST:moved:1:/commit/"))
def test_a_commit_redirected_by_the_hub_is_sent_again_whole(hub: LocalHub, dist: Path) -> None:
    """The Hub answers a renamed repo's old name with a 307: the streamed commit cannot be replayed by the
    client (httpx raised StreamConsumed, a traceback), so push follows it itself, with the body made again."""
    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert result.verified and hub.stats.faults["moved"] == 1 and hub.stats.commits == 1
    assert_published_once(hub, dist, result.commit)
    TALLY["faults injected and survived"] += 1


# A re-publish over a previous release: the Hub's card is read (resolve), a stale file is deleted.
REPUBLISH_STORM = faults(
    "HEAD:503:1:/resolve/",  # the card download: metadata first
    "GET:429:1:/resolve/",
    "GET:502:1:/refs$",
    "GET:500:1:/tree/",
    "POST:500:1:^/api/validate-yaml$",
    "POST:429:1:/commit/",
    "POST:429:1:/tag/",
    "POST:502:1:/tag/",
)


def test_a_republish_survives_faults_and_deletes_stale_files(dist: Path, sleeps: list[float], tmp_path: Path) -> None:
    with local_hub(tmp_path / "hub") as seeding:
        v4 = seed_previous_release(HfApi(endpoint=seeding.url, token=TOKEN), dist)
    with local_hub(tmp_path / "hub", REPUBLISH_STORM) as hub:  # the same repos, now with faults
        api = HfApi(endpoint=hub.url, token=TOKEN)
        result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
        assert result.verified and result.plan.delete == ["old-v4-notes.txt"]
        assert sum(hub.stats.faults.values()) == injected(REPUBLISH_STORM)
        assert_published_once(hub, dist, result.commit, commits=3)
        assert main_and_tags(api)[1]["v4"] == v4
        assert 1.0 in sleeps  # the 429s' Retry-After: 1
        TALLY["faults injected and survived"] += sum(hub.stats.faults.values())


def test_a_commit_whose_answer_is_lost_is_not_committed_twice(
    hub: LocalHub, dist: Path, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hub applies the commit but the answer never arrives (a 502 from a proxy): push re-reads main,
    finds exactly the release there and tags it, instead of committing it a second time."""
    real = release.publish.apply.send_commit
    calls: list[str] = []

    def answer_lost(*args: Any, **kwargs: Any) -> Any:
        oid, pr_url = real(*args, **kwargs)
        calls.append(oid)
        if len(calls) == 1:
            request = httpx2.Request("POST", f"{hub.url}/api/models/{REPO}/commit/main")
            raise HfHubHTTPError("502 Bad Gateway", response=httpx2.Response(502, request=request))
        return oid, pr_url

    monkeypatch.setattr(release.publish.apply, "send_commit", answer_lost)
    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert len(calls) == 1 and result.commit == calls[0]
    assert hub.stats.commits == 1
    assert_published_once(hub, dist, result.commit)
    TALLY["faults injected and survived"] += 1


def test_the_same_release_landing_first_from_a_killed_push_is_taken_as_committed(
    hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A push killed with its commit in flight, re-run at once: the old commit lands after the re-run's
    preflight, so the re-run's commit is refused (412, parent moved). main holds exactly this release:
    the re-run tags it rather than failing."""
    real = release.publish.apply.send_commit

    def killed_push_lands_first(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)  # the earlier push's identical commit
        return real(*args, **kwargs)  # ours, with the same parent: 412

    monkeypatch.setattr(release.publish.apply, "send_commit", killed_push_lands_first)
    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert hub.stats.commits == 1
    assert_published_once(hub, dist, result.commit)


def test_another_commit_landing_during_a_retry_stops_the_push(
    hub: LocalHub, dist: Path, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """parent_commit makes the retry safe: if main moved to something else, push stops and says so."""
    other = HfApi(endpoint=hub.url, token=TOKEN)

    def someone_else_first(_hub: Any, repo_id: str, *args: Any, **kwargs: Any) -> Any:
        other.create_commit(repo_id, [CommitOperationAdd("someone-else.txt", b"x")], commit_message="another push")
        request = httpx2.Request("POST", f"{hub.url}/api/models/{REPO}/commit/main")
        raise HfHubHTTPError("503 Service Unavailable", response=httpx2.Response(503, request=request))

    monkeypatch.setattr(release.publish.apply, "send_commit", someone_else_first)
    with pytest.raises(RemoteError) as exc:
        push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert "does not hold this release" in str(exc.value) and "run the push again" in str(exc.value)
    assert main_and_tags(other)[1] == {}


@pytest.mark.hub(f"POST:503:{ATTEMPTS}:/commit/")
def test_commit_failures_beyond_the_retries_exit_3_and_a_rerun_completes(
    hub: LocalHub, dist: Path, sleeps: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    failed = cli(capsys, *args)
    assert failed.code == 3, failed.err
    assert "committing the release" in failed.err and "HTTP 503" in failed.err
    api = HfApi(endpoint=hub.url, token=TOKEN)
    assert hub.stats.commits == 0 and main_and_tags(api)[1] == {}
    assert tree(api, "main").keys() == {".gitattributes"}  # nothing of the release on main
    assert sleeps[-(ATTEMPTS - 1) :] == [1.0, 2.0, 4.0][: ATTEMPTS - 1]  # bounded exponential backoff
    rerun = cli(capsys, *args)
    assert rerun.code == 0, rerun.err
    assert_published_once(hub, dist, main_and_tags(api)[0])
    TALLY["faults beyond the retries (exit 3, then a re-run completed)"] += ATTEMPTS


@pytest.mark.hub(f"POST:503:{ATTEMPTS}:/tag/")
def test_a_tag_failing_after_the_commit_exits_3_and_a_rerun_tags_it(
    hub: LocalHub, dist: Path, sleeps: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    failed = cli(capsys, *args)
    assert failed.code == 3, failed.err
    api = HfApi(endpoint=hub.url, token=TOKEN)
    main, tags = main_and_tags(api)
    assert tags == {} and hub.stats.commits == 1
    assert f"the commit {main} is on main but the tag v5 is not; run the push again to tag it" in failed.err
    assert "tagging v5" in failed.err
    rerun = cli(capsys, *args)
    assert rerun.code == 0, rerun.err
    assert "create tag v5" in rerun.out and "0 B sent" in rerun.out
    assert hub.stats.commits == 1  # the rerun only tagged
    assert_published_once(hub, dist, main)
    TALLY["faults beyond the retries (exit 3, then a re-run completed)"] += ATTEMPTS


def seeded_v5(root: Path, dist: Path) -> str:
    """A Hub root where v5 is already published, with other files (an earlier release's commit)."""
    with local_hub(root) as seeding:
        api = HfApi(endpoint=seeding.url, token=TOKEN)
        old = seed_previous_release(api, dist)
        api.create_tag(REPO, tag="v5", revision=old)
    return old


@pytest.mark.parametrize("restore_fails", [False, True], ids=["restored", "restore-fails"])
def test_force_tag_puts_the_old_tag_back_when_the_new_one_cannot_be_created(
    dist: Path,
    sleeps: list[float],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    restore_fails: bool,
) -> None:
    """--force-tag deletes v5 before creating it at the new commit. When creating it fails beyond the
    retries, v5 is re-created where it was: a published version never ends up without its tag."""
    old = seeded_v5(tmp_path / "hub", dist)
    failures = ATTEMPTS * (2 if restore_fails else 1)
    with local_hub(tmp_path / "hub", f"POST:503:{failures}:/tag/") as hub:
        failed = cli(
            capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN), "--force-tag"
        )
        assert failed.code == 3, failed
        api = HfApi(endpoint=hub.url, token=TOKEN)
        main, tags = main_and_tags(api)
        assert main != old and hub.stats.commits == 1  # the new commit landed on main
        if restore_fails:
            assert "v5" not in tags
            assert f"tag v5 was deleted to be moved and could NOT be put back at its old commit {old}" in failed.err
            assert f"hf repos tag create {REPO} v5 --revision {old}" in failed.err
        else:
            assert tags["v5"] == old and tags["v4"] == old
            assert f"tag v5 is back at its old commit {old}; this release's commit {main} is on main" in failed.err
            rerun = cli(
                capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN), "--force-tag"
            )
            assert rerun.code == 0, rerun.err
            assert main_and_tags(api) == (main, {"v4": old, "v5": main}) and hub.stats.commits == 1
        TALLY["--force-tag failures with the old tag restored or named"] += 1


def test_losing_the_race_for_the_same_version_is_a_refusal_not_a_retry(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another push publishes v5 (other files) between this push's preflight and its commit: the commit is
    refused (412, main moved). Re-running cannot help (it would exit 4), so this exits 4 and says why."""
    other = HfApi(endpoint=hub.url, token=TOKEN)
    real = release.publish.apply.send_commit

    def published_first(_hub: Any, repo_id: str, *args: Any, **kwargs: Any) -> Any:
        theirs = other.create_commit(repo_id, [CommitOperationAdd("theirs.txt", b"x")], commit_message="another v5")
        other.create_tag(repo_id, tag="v5", revision=theirs.oid)
        monkeypatch.setattr(release.publish.apply, "send_commit", real)
        return real(_hub, repo_id, *args, **kwargs)

    other.create_repo(REPO)
    monkeypatch.setattr(release.publish.apply, "send_commit", published_first)
    args = ("push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    lost = cli(capsys, *args)
    assert lost.code == 4, lost
    assert f"{REPO}@v5: was published by another push during this one" in lost.err and "--force-tag" in lost.err
    assert "run the push again" not in lost.err
    assert cli(capsys, *args).code == 4  # what a re-run would have done


def test_losing_the_race_for_the_tag_is_a_refusal(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone tags v5 elsewhere between this push's commit and its tag (409): exit 4, naming both commits."""
    other = HfApi(endpoint=hub.url, token=TOKEN)
    real = HfApi.create_tag

    def tagged_first(self: HfApi, repo_id: str, *, tag: str, revision: str | None = None, **kwargs: Any) -> Any:
        first = other.list_repo_commits(repo_id)[-1].commit_id  # the repo's initial commit
        real(other, repo_id, tag=tag, revision=first)
        monkeypatch.setattr(HfApi, "create_tag", real)
        return real(self, repo_id, tag=tag, revision=revision, **kwargs)

    monkeypatch.setattr(HfApi, "create_tag", tagged_first)
    lost = cli(capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert lost.code == 4, lost
    main, tags = main_and_tags(other)
    assert (
        f"{REPO}@v5: was tagged by another push during this one (at {tags['v5']}); this push's commit {main}"
        in lost.err
    )
    assert "run the push again" not in lost.err


def test_force_tag_whose_old_tag_cannot_be_deleted_leaves_it_in_place(
    dist: Path, sleeps: list[float], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = seeded_v5(tmp_path / "hub", dist)
    with local_hub(tmp_path / "hub", f"DELETE:503:{ATTEMPTS}:/tag/") as hub:
        failed = cli(
            capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN), "--force-tag"
        )
        assert failed.code == 3, failed
        main, tags = main_and_tags(HfApi(endpoint=hub.url, token=TOKEN))
        assert tags["v5"] == old and f"tag v5 still points at {old}; the commit {main} is on main" in failed.err
