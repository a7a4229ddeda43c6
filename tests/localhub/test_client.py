"""The real huggingface_hub client publishing to, listing and downloading from the local Hub."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationDelete,
    HfApi,
    get_session,
    hf_hub_download,
    snapshot_download,
)
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile, RepoFolder

from release.localhub import LocalHub
from release.localhub.records import git_blob_sha1
from tests.helpers import TOKEN, local_hub
from tests.localhub.helpers import CHUNK, sha256

pytestmark = pytest.mark.hub(multipart_chunk_size=CHUNK)  # small multipart parts keep the multipart tests fast

README = b"---\nlicense: apache-2.0\ntags: [release, test]\nlibrary_name: safetensors\n---\n# A model\n"
CONFIG = b'{"hidden_size": 8}\n'


@pytest.fixture(scope="module")
def payload() -> dict[str, bytes]:
    """A release: a README, a config, a few-MB LFS file (basic transfer) and one big enough for multipart."""
    return {
        "README.md": README,
        "config.json": CONFIG,
        "weights/model.safetensors": os.urandom(CHUNK - 1),  # just under the part size: basic transfer
        "big.bin": os.urandom(2 * CHUNK + 12345),  # 3 parts
    }


def commit_files(api: HfApi, repo_id: str, files: dict[str, bytes], message: str = "release") -> str:
    operations = [CommitOperationAdd(path, data) for path, data in files.items()]
    return api.create_commit(repo_id, operations, commit_message=message).oid


def test_create_repo_conflicts_unless_exist_ok(api: HfApi, hub: LocalHub) -> None:
    url = api.create_repo("acme/fresh", private=True)
    assert url == f"{hub.url}/acme/fresh" and url.repo_id == "acme/fresh"
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo("acme/fresh")
    assert err.value.response.status_code == 409
    assert api.create_repo("acme/fresh", exist_ok=True) == url

    refs = api.list_repo_refs("acme/fresh")
    assert [b.name for b in refs.branches] == ["main"] and refs.tags == [] and refs.converts == []
    info = api.model_info("acme/fresh")
    assert info.private is True and info.sha == refs.branches[0].target_commit
    assert [s.rfilename for s in info.siblings] == [".gitattributes"]
    gitattributes = Path(
        hf_hub_download(
            "acme/fresh", ".gitattributes", endpoint=hub.url, token=TOKEN, cache_dir=hub.root.parent / "cache"
        )
    ).read_text()
    assert "*.safetensors filter=lfs" in gitattributes


def test_commit_uploads_regular_and_lfs_files(
    api: HfApi, hub: LocalHub, repo_id: str, payload: dict[str, bytes]
) -> None:
    commit = commit_files(api, repo_id, payload)

    stats = hub.stats
    assert stats.requests["PUT lfs_object"] == 1  # the small LFS file, basic transfer
    assert stats.requests["PUT lfs_part"] == 3 and stats.requests["POST lfs_object"] == 1  # multipart + completion
    assert stats.upload_bytes[sha256(payload["big.bin"])] == len(payload["big.bin"])
    assert stats.commits == 1

    files = {f.path: f for f in api.list_repo_tree(repo_id, recursive=True) if isinstance(f, RepoFile)}
    assert set(files) == {".gitattributes", *payload}
    for path in ("weights/model.safetensors", "big.bin"):
        assert files[path].lfs is not None and files[path].lfs.sha256 == sha256(payload[path])
        assert files[path].size == len(payload[path])
    assert files["config.json"].lfs is None and files["config.json"].blob_id == git_blob_sha1(CONFIG)

    # The LFS sha256 is readable without listing the whole tree; missing paths are skipped.
    infos = api.get_paths_info(repo_id, ["big.bin", "weights", "absent.txt"], revision=commit)
    by_path = {i.path: i for i in infos}
    assert set(by_path) == {"big.bin", "weights"} and isinstance(by_path["weights"], RepoFolder)
    assert by_path["big.bin"].lfs.sha256 == sha256(payload["big.bin"])

    info = api.model_info(repo_id, files_metadata=True)
    siblings = {s.rfilename: s for s in info.siblings}
    assert info.sha == commit
    assert siblings["weights/model.safetensors"].lfs.sha256 == sha256(payload["weights/model.safetensors"])
    assert siblings["README.md"].lfs is None and siblings["README.md"].size == len(README)
    assert {"release", "license:apache-2.0"} <= set(info.tags) and info.card_data.license == "apache-2.0"

    # Publishing the same files again uploads nothing and makes no commit.
    assert commit_files(api, repo_id, payload, "again") == commit
    assert hub.stats.commits == 1 and hub.stats.requests["PUT lfs_object"] == 1


def test_downloads_are_byte_identical(
    api: HfApi, hub: LocalHub, repo_id: str, payload: dict[str, bytes], tmp_path: Path
) -> None:
    commit = commit_files(api, repo_id, payload)
    api.create_tag(repo_id, tag="v1.0", tag_message="first release")
    commit_files(api, repo_id, {"config.json": b'{"hidden_size": 16}\n'}, "after the tag")

    path = hf_hub_download(repo_id, "big.bin", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "c1")
    assert Path(path).read_bytes() == payload["big.bin"]

    folder = Path(snapshot_download(repo_id, revision="v1.0", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "c2"))
    assert folder.name == commit  # the tag, not main, which moved on
    for name, data in payload.items():
        assert (folder / name).read_bytes() == data

    url = f"{hub.url}/{repo_id}/resolve/v1.0/big.bin"
    head = get_session().head(url, headers={"authorization": f"Bearer {TOKEN}"})
    assert head.headers["X-Repo-Commit"] == commit
    assert head.headers["X-Linked-Etag"] == f'"{sha256(payload["big.bin"])}"'
    assert int(head.headers["X-Linked-Size"]) == len(payload["big.bin"]) == int(head.headers["Content-Length"])
    assert not any(h.lower().startswith("x-xet") for h in head.headers) and "xet" not in head.headers.get("Link", "")

    ranged = get_session().get(url, headers={"authorization": f"Bearer {TOKEN}", "Range": "bytes=100-199"})
    assert ranged.status_code == 206
    assert ranged.content == payload["big.bin"][100:200]
    assert ranged.headers["Content-Range"] == f"bytes 100-199/{len(payload['big.bin'])}"
    beyond = get_session().get(url, headers={"authorization": f"Bearer {TOKEN}", "Range": "bytes=99999999-"})
    assert beyond.status_code == 416 and "error" in beyond.json()


def test_stale_parent_commit_is_refused(api: HfApi, repo_id: str) -> None:
    base = api.list_repo_commits(repo_id)[0].commit_id
    first = api.create_commit(repo_id, [CommitOperationAdd("a.txt", b"a")], commit_message="a", parent_commit=base)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(repo_id, [CommitOperationAdd("b.txt", b"b")], commit_message="b", parent_commit=base)
    assert err.value.response.status_code == 412
    assert api.model_info(repo_id).sha == first.oid
    assert "b.txt" not in api.list_repo_files(repo_id)


def test_delete_files_and_folders(api: HfApi, repo_id: str) -> None:
    commit_files(api, repo_id, {"docs/a.md": b"a", "docs/sub/b.md": b"b", "keep.txt": b"k"})
    api.create_commit(
        repo_id,
        [CommitOperationDelete("docs/"), CommitOperationDelete("keep.txt")],
        commit_message="prune",
    )
    assert api.list_repo_files(repo_id) == [".gitattributes"]
    with pytest.raises(EntryNotFoundError):
        api.delete_file("keep.txt", repo_id)
    commits = api.list_repo_commits(repo_id)
    assert [c.title for c in commits] == ["prune", "release", "initial commit"]


def test_tags_branches_and_pull_requests(api: HfApi, hub: LocalHub, repo_id: str, tmp_path: Path) -> None:
    commit = commit_files(api, repo_id, {"a.txt": b"a"})
    api.create_tag(repo_id, tag="v1", tag_message="one")
    with pytest.raises(HfHubHTTPError) as err:
        api.create_tag(repo_id, tag="v1")
    assert err.value.response.status_code == 409
    api.create_tag(repo_id, tag="v1", exist_ok=True)
    assert [(t.name, t.ref, t.target_commit) for t in api.list_repo_refs(repo_id).tags] == [
        ("v1", "refs/tags/v1", commit)
    ]

    # Slashes in branch names and odd characters in paths travel percent-encoded.
    api.create_branch(repo_id, branch="feature/dev")
    dev = api.create_commit(
        repo_id, [CommitOperationAdd("notes/dev ü.txt", b"d")], commit_message="dev", revision="feature/dev"
    )
    assert api.model_info(repo_id, revision="feature/dev").sha == dev.oid and api.model_info(repo_id).sha == commit
    assert [f.path for f in api.list_repo_tree(repo_id, "notes", revision="feature/dev")] == ["notes/dev ü.txt"]
    downloaded = hf_hub_download(
        repo_id, "notes/dev ü.txt", revision="feature/dev", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path
    )
    assert Path(downloaded).read_bytes() == b"d"

    pr = api.create_commit(repo_id, [CommitOperationAdd("pr.txt", b"p")], commit_message="pr", create_pr=True)
    assert pr.pr_revision == "refs/pr/1" and pr.pr_url.endswith("/discussions/1")
    assert api.list_repo_files(repo_id, revision="refs/pr/1") == [".gitattributes", "a.txt", "pr.txt"]
    refs = api.list_repo_refs(repo_id, include_pull_requests=True)
    assert [(p.ref, p.target_commit) for p in refs.pull_requests] == [("refs/pr/1", pr.oid)]

    api.delete_tag(repo_id, tag="v1")
    api.delete_branch(repo_id, branch="feature/dev")
    refs = api.list_repo_refs(repo_id)
    assert refs.tags == [] and [b.name for b in refs.branches] == ["main"]
    with pytest.raises(RevisionNotFoundError):
        api.delete_tag(repo_id, tag="v1")
    assert not api.revision_exists(repo_id, "feature/dev")


def test_listing_pages_through_link_headers(tmp_path: Path) -> None:
    with local_hub(tmp_path / "hub", tree_page_size=2, commits_page_size=2) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        repo_id = api.create_repo("acme/paged").repo_id
        names = [f"dir/f{i}.txt" for i in range(5)]
        for name in names:
            commit_files(api, repo_id, {name: name.encode()}, name)
        assert [f.path for f in api.list_repo_tree(repo_id, "dir")] == names
        assert hub.stats.requests["GET tree"] == 3
        assert len(api.list_repo_commits(repo_id)) == 6


def test_missing_things_raise_the_matching_client_errors(api: HfApi, hub: LocalHub, repo_id: str) -> None:
    assert api.repo_exists(repo_id) and not api.repo_exists("acme/nothing")
    assert not api.revision_exists(repo_id, "no-such-branch")
    assert not api.file_exists(repo_id, "absent.bin")
    with pytest.raises(EntryNotFoundError):
        list(api.list_repo_tree(repo_id, "no/such/dir"))
    with pytest.raises(RevisionNotFoundError):
        api.create_commit(repo_id, [CommitOperationAdd("x", b"x")], commit_message="x", revision="nope")


def test_readme_with_null_metadata_is_rejected(api: HfApi, repo_id: str) -> None:
    with pytest.raises(ValueError, match=r"Invalid metadata in README\.md"):
        commit_files(api, repo_id, {"README.md": b"---\nlicense: null\n---\n# x\n"})
    assert "README.md" not in api.list_repo_files(repo_id)


def test_unsafe_paths_are_refused(api: HfApi, hub: LocalHub, repo_id: str) -> None:
    response = get_session().post(
        f"{hub.url}/api/models/{repo_id}/commit/main",
        headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/x-ndjson"},
        content=b'{"key":"header","value":{"summary":"x"}}\n'
        b'{"key":"file","value":{"path":"../escape","content":"eA==","encoding":"base64"}}\n',
    )
    assert response.status_code == 422 and "Invalid path" in response.json()["error"]
    commit_files(api, repo_id, {"a/b.txt": b"x"})
    with pytest.raises(HfHubHTTPError) as err:
        commit_files(api, repo_id, {"a": b"a file where a folder is"})
    assert err.value.response.status_code == 400


@pytest.mark.hub(xet=False)  # the Hub offers Xet by default (tests/localhub/test_xet.py)
def test_xet_is_not_offered_by_a_hub_built_without_it(hub: LocalHub) -> None:
    repo_id = HfApi(endpoint=hub.url, token=TOKEN).create_repo("acme/model").repo_id
    response = get_session().get(
        f"{hub.url}/api/models/{repo_id}/xet-write-token/main", headers={"authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 501 and "Xet" in response.json()["error"]
    assert response.headers["X-Local-Hub"] == "hf-release; xet=unavailable"


def test_hf_cli_lists_a_tag(api: HfApi, hub: LocalHub, repo_id: str, tmp_path: Path) -> None:
    api.create_tag(repo_id, tag="v2.0")
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "hf-home")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "hf"), "repos", "tag", "list", repo_id, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "v2.0" in result.stdout
    assert TOKEN not in result.stdout + result.stderr


def test_dataset_repos_use_their_own_url_shapes(api: HfApi, hub: LocalHub, tmp_path: Path) -> None:
    url = api.create_repo("acme/data", repo_type="dataset")
    assert url == f"{hub.url}/datasets/acme/data" and url.repo_type == "dataset"
    table = os.urandom(50_000)
    api.upload_file(path_or_fileobj=table, path_in_repo="train.parquet", repo_id="acme/data", repo_type="dataset")
    assert not api.repo_exists("acme/data")  # not a model
    path = hf_hub_download(
        "acme/data", "train.parquet", repo_type="dataset", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path
    )
    assert Path(path).read_bytes() == table
    assert hub.stats.requests["POST lfs_batch"] == 1
