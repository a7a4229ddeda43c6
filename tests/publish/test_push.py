"""push against the local Hub with the real huggingface_hub client: one commit plus an immutable tag."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, snapshot_download

from release.errors import PublishRefused, RemoteError, VerifyFailed
from release.hub.client import connect
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.publish.verify_remote import verify_remote
from release.staged import read_staged
from release.staged.manifest import Manifest
from tests.helpers import READ_TOKEN, REPO, TOKEN, edit, push_options, writes


@pytest.fixture
def dist(build_example: Callable[..., Path]) -> Path:
    return build_example()


def test_push_is_one_commit_plus_tag_and_snapshot_equals_staged(hub: LocalHub, dist: Path, tmp_path: Path) -> None:
    result = push(dist, push_options(hub))
    api = HfApi(endpoint=hub.url, token=TOKEN)
    refs = api.list_repo_refs(REPO)
    assert [t.name for t in refs.tags] == ["v5"] and refs.tags[0].target_commit == result.commit
    assert next(b.target_commit for b in refs.branches if b.name == "main") == result.commit
    commits = api.list_repo_commits(REPO)
    assert len(commits) == 2  # the repo's initial commit and the release
    assert "v5" in commits[0].title and Manifest.load(dist / "release.json").release_digest[:12] in commits[0].title
    assert result.verified

    folder = Path(snapshot_download(REPO, revision="v5", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "cache"))
    downloaded = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    staged = {p.relative_to(dist).as_posix(): p.read_bytes() for p in dist.rglob("*") if p.is_file()}
    downloaded.pop(".gitattributes")
    assert downloaded == staged


def test_second_push_is_a_no_op(hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch, transport: str) -> None:
    first = push(dist, push_options(hub))
    assert first.xet == (transport == "xet")
    commits, before = hub.stats.commits, writes(hub)
    uploads = sum(hub.stats.upload_bytes.values())
    cas = sum(hub.stats.xet_bytes.values())

    def no_hashing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a re-push must not hash staged files")

    monkeypatch.setattr("release.staged.hash_files", no_hashing)
    second = push(dist, push_options(hub))
    assert second.commit == first.commit and second.tag == "v5"
    assert second.bytes_sent == 0 and not second.plan.commit_needed
    assert hub.stats.commits == commits and writes(hub) == before
    assert sum(hub.stats.upload_bytes.values()) == uploads and sum(hub.stats.xet_bytes.values()) == cas


def test_tampered_staged_file_blocks_push_before_anything_is_sent(hub: LocalHub, dist: Path) -> None:
    target = dist / "config.json"
    data = target.read_bytes()
    target.unlink()  # break the hard link: do not touch the example's source
    target.write_bytes(data.replace(b"4096", b"4097", 1))
    with pytest.raises(PublishRefused) as exc:
        push(dist, push_options(hub))
    assert any(p.file == "config.json" and "changed since build" in p.message for p in exc.value.problems)
    assert writes(hub) == 0
    assert not HfApi(endpoint=hub.url, token=TOKEN).repo_exists(REPO)


def test_different_content_as_published_version_is_refused(
    hub: LocalHub, dist: Path, example: Path, build_example: Callable[..., Path]
) -> None:
    push(dist, push_options(hub))
    edit(example.parent / "results.tsv", "max-num-batched-tokens 8192", "max-num-batched-tokens 8192 (rerun)")
    rebuilt = build_example()
    commits = hub.stats.commits
    with pytest.raises(PublishRefused) as exc:
        push(rebuilt, push_options(hub))
    assert any("already published" in p.message and "--force-tag" in p.message for p in exc.value.problems)
    assert hub.stats.commits == commits
    moved = push(rebuilt, push_options(hub, force_tag=True))
    assert {"results.tsv", "README.md", "release.json"} <= {path for path, _ in moved.plan.change}
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO)
    assert refs.tags[0].target_commit == moved.commit


def test_an_older_version_does_not_move_main_back_unless_asked(
    hub: LocalHub, dist: Path, example: Path, build_example: Callable[..., Path]
) -> None:
    from release.init import init_from_previous

    v6 = build_example(init_from_previous(example.parent.parent.parent, "v6", "v5").spec)
    push(v6, push_options(hub))
    main_before = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO).branches[0].target_commit
    with pytest.raises(PublishRefused) as exc:
        push(dist, push_options(hub))  # v5, built before v6
    [problem] = exc.value.problems
    assert (
        problem.file == f"{REPO}@main"
        and "holds v6, newer than v5" in problem.message
        and "--allow-older" in problem.message
    )
    assert HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO).branches[0].target_commit == main_before
    assert push(dist, push_options(hub, allow_older=True)).tag == "v5"


def test_remote_verify_catches_a_file_changed_on_the_server(hub: LocalHub, dist: Path) -> None:
    pushed = push(dist, push_options(hub))
    api = HfApi(endpoint=hub.url, token=TOKEN)
    info = api.create_commit(
        REPO,
        [CommitOperationAdd("results.tsv", b"commit\tx\tstatus\tdescription\n")],
        commit_message="edited on the Hub",
    )
    api.delete_tag(REPO, tag="v5")
    api.create_tag(REPO, tag="v5", revision=info.oid)
    with pytest.raises(VerifyFailed) as exc:
        verify_remote(connect(hub.url, TOKEN), read_staged(dist), commit=pushed.commit)
    files = {p.file for p in exc.value.problems}
    assert f"{REPO}@v5:results.tsv" in files
    assert any(f"points at {info.oid}" in p.message for p in exc.value.problems)


def test_stale_files_are_deleted_in_the_same_commit_unless_kept(hub: LocalHub, dist: Path) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.create_commit(REPO, [CommitOperationAdd("old-v4.bin", b"x" * 10)], commit_message="v4 leftovers")
    plan = push(dist, push_options(hub, dry_run=True, delete_extra=True)).plan  # no release listed it: only when asked
    assert plan.delete == ["old-v4.bin"] and plan.tag == "create"
    assert "old-v4.bin" in api.list_repo_files(REPO)  # a dry run writes nothing
    push(dist, push_options(hub, delete_extra=True))
    assert "old-v4.bin" not in api.list_repo_files(REPO, revision="v5")


def test_hand_edited_card_is_not_overwritten(hub: LocalHub, dist: Path) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.create_commit(REPO, [CommitOperationAdd("README.md", b"# My hand-written card\n")], commit_message="by hand")
    with pytest.raises(PublishRefused) as exc:
        push(dist, push_options(hub))
    assert any("edited by hand" in p.message and "--overwrite-card" in p.message for p in exc.value.problems)
    assert push(dist, push_options(hub, overwrite_card=True)).verified


def test_read_only_token_and_unreachable_hub(hub: LocalHub, dist: Path) -> None:
    with pytest.raises(RemoteError, match="read-only"):  # an authorization failure: exit 3
        push(dist, PushOptions(endpoint=hub.url, token=READ_TOKEN))
    with pytest.raises(RemoteError) as exc:
        push(dist, PushOptions(endpoint="http://127.0.0.1:9", token=TOKEN))
    assert "cannot reach" in str(exc.value) or "HTTP" in str(exc.value)
    assert TOKEN not in str(exc.value)


def test_create_pr_leaves_main_and_tags_alone(hub: LocalHub, dist: Path) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    head = api.list_repo_refs(REPO).branches[0].target_commit
    result = push(dist, push_options(hub, create_pr=True))
    assert result.pr_url and result.pr_url.rstrip("/").split("/")[-2] == "discussions"
    refs = api.list_repo_refs(REPO)
    assert refs.tags == [] and refs.branches[0].target_commit == head


def test_push_reuses_the_manifest_sha256(hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client is handed the manifest's sha256: it never hashes a staged file itself."""
    import huggingface_hub.lfs as lfs

    def no_client_hashing(fileobj: object, *args: object, **kwargs: object) -> bytes:
        raise AssertionError("huggingface_hub hashed a file that the manifest already describes")

    monkeypatch.setattr(lfs, "sha_fileobj", no_client_hashing)
    result = push(dist, push_options(hub))
    stored = HfApi(endpoint=hub.url, token=TOKEN).get_paths_info(REPO, ["model.safetensors"], revision="v5")[0]
    assert stored.lfs is not None
    assert stored.lfs.sha256 == hashlib.sha256((dist / "model.safetensors").read_bytes()).hexdigest()
    assert result.verified


def test_create_pr_never_moves_a_published_tag(
    hub: LocalHub, dist: Path, example: Path, build_example: Callable[..., Path]
) -> None:
    published = push(dist, push_options(hub))
    edit(example.parent / "results.tsv", "max-num-batched-tokens 8192", "max-num-batched-tokens 8192 (rerun)")
    result = push(build_example(), push_options(hub, create_pr=True, force_tag=True))
    assert result.pr_url and result.tag is None
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO)
    assert refs.tags[0].target_commit == published.commit
    assert next(b.target_commit for b in refs.branches if b.name == "main") == published.commit


@pytest.mark.hub(xet=False)  # the local Hub offers Xet unless built without it
def test_xet_is_detected_not_configured(hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Xet enabled in the client (its default with hf_xet installed), a Hub without Xet still gets
    the release: push asks the Hub, finds no Xet, and uploads over plain LFS."""
    from huggingface_hub import constants
    from huggingface_hub.utils._runtime import is_xet_available

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    assert is_xet_available()  # hf_xet is installed: without detection the client would try Xet and fail
    result = push(dist, push_options(hub))
    assert result.verified and result.xet is False and constants.HF_HUB_DISABLE_XET is True
    assert sum(hub.stats.upload_bytes.values()) > 0  # the weights went over LFS


def test_resumed_push_reports_measured_bytes(hub: LocalHub, dist: Path) -> None:
    """A push killed after the weights' upload left their LFS object on the Hub (uncommitted): the rerun
    reports what it actually sent and what the Hub already held, not the plan's size."""
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    weights = dist / "model.safetensors"
    api.preupload_lfs_files(REPO, additions=[CommitOperationAdd("model.safetensors", str(weights))])
    received = sum(hub.stats.upload_bytes.values())
    assert received == weights.stat().st_size  # the killed push's upload

    result = push(dist, push_options(hub))
    assert result.verified and result.bytes_measured
    weights_size = weights.stat().st_size
    others = sum(size for path, size in result.plan.add if path != "model.safetensors")
    assert result.plan.bytes_to_send == weights_size + others  # the plan still lists the weights to add
    assert result.bytes_sent == others  # …but nothing of them was sent again
    assert result.bytes_skipped == weights_size
    oid = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert hub.stats.upload_bytes[oid] == weights_size  # the Hub received no second copy
    lfs_received = sum(hub.stats.upload_bytes.values()) - received
    assert 0 < lfs_received <= result.bytes_sent  # the other LFS files (chart), plus small files inline in the commit


def test_resumed_push_over_xet_sends_no_chunk_twice(hub: LocalHub, dist: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over Xet, a push killed after the weights' upload left their xorbs and shard in the CAS: the rerun's
    hf_xet finds their chunks (the dedup query) and reports them deduplicated, not new; no xorb of them is sent."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    weights = dist / "model.safetensors"
    api.preupload_lfs_files(REPO, additions=[CommitOperationAdd("model.safetensors", str(weights))])
    killed = hub.stats.xet_bytes["xorb_new"]
    assert killed > 0  # the killed push's upload

    result = push(dist, push_options(hub))
    assert result.verified and result.xet and result.bytes_measured
    assert result.xet_deduplicated is not None and result.xet_deduplicated >= weights.stat().st_size
    xet_files = [e for e in api.list_repo_tree(REPO, recursive=True) if getattr(e, "xet_hash", None)]
    assert result.xet_new == sum(e.size for e in xet_files) - result.xet_deduplicated
    assert hub.stats.xet_bytes["xorb_known"] == 0  # no xorb sent twice
    assert result.xet_files is not None and result.xet_files["model.safetensors"] == (0, weights.stat().st_size)


def test_a_rebuild_leaves_nothing_for_push_to_rehash(build_example: Callable[..., Path]) -> None:
    """Rebuilding over an earlier staging unlinks its hard links (changing the shared inodes' ctime): the
    staging record must be taken after that, or the next push reads every file once more to re-hash it."""
    from release.staged import changed_since_build

    build_example()
    dist = build_example()
    problems, rehashed = changed_since_build(read_staged(dist))
    assert problems == [] and rehashed == 0
