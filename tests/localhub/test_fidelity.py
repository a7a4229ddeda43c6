"""Contract tests: the local Hub gives the real Hub's verdicts where a release depends on them.

Each test pins one answer the Hub gives (read from the Hub's documentation, huggingface_hub's source
and its own test suite, which scripts/hub_conformance.sh runs against this server) through the real
client. They share one server (`shared_hub`) and name their repos after themselves.
"""

import base64
import json
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_session, hf_hub_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from release.localhub import LocalHub
from release.localhub.metadata import EMPTY_METADATA_WARNING, validate_card

VALID_CARD = """---
license: apache-2.0
base_model: acme/base-model
base_model_relation: finetune
tags: [release]
model-index:
- name: acme/model
  results:
  - task: {type: text-generation}
    dataset: {type: gsm8k, name: GSM8K}
    metrics:
    - {type: accuracy, value: 0.5}
---
# A model
"""


def commit_card(api: HfApi, repo_id: str, card: str) -> None:
    api.create_commit(repo_id, [CommitOperationAdd("README.md", card.encode())], commit_message="card")


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ("model-index: foo", '"model-index" must be an array'),
        ("model-index:\n- name: m", '"model-index[0].results" is required'),
        (
            "model-index:\n- name: m\n  results:\n  - task: {type: t}\n    dataset: {type: d}\n    metrics: []",
            '"model-index[0].results[0].dataset.name" is required',
        ),
        ("license: apache", '"license" must be one of [apache-2.0, mit, '),
        ("base_model: not a model id", '"base_model" with value "not a model id" fails to match the required pattern'),
        ("base_model_relation: fork", '"base_model_relation" must be one of [adapter, merge, quantized, finetune]'),
        ("tags: release", '"tags" must be an array'),
        ("tags: [1]", '"tags[0]" must be a string'),
    ],
)
def test_invalid_card_metadata_is_refused_with_the_hubs_message(
    alice: HfApi, alice_repo: str, metadata: str, message: str
) -> None:
    with pytest.raises(ValueError, match=r"Invalid metadata in README\.md") as err:
        commit_card(alice, alice_repo, f"---\n{metadata}\n---\n# A model\n")
    assert f"- {message}" in str(err.value)
    assert alice.list_repo_files(alice_repo) == [".gitattributes"]  # refused before anything was sent


def test_a_commit_that_skipped_validate_yaml_is_still_refused(
    shared_hub: LocalHub, alice: HfApi, alice_repo: str
) -> None:
    card = base64.b64encode(b"---\nmodel-index: foo\n---\n# A model\n").decode()
    response = get_session().post(
        f"{shared_hub.url}/api/models/{alice_repo}/commit/main",
        headers={"authorization": f"Bearer {alice.token}", "content-type": "application/x-ndjson"},
        content=json.dumps({"key": "header", "value": {"summary": "card"}})
        + "\n"
        + json.dumps({"key": "file", "value": {"path": "README.md", "content": card, "encoding": "base64"}}),
    )
    assert response.status_code == 400
    assert response.json()["error"] == 'Invalid metadata in README.md.\n- "model-index" must be an array'
    assert alice.list_repo_files(alice_repo) == [".gitattributes"]


def test_valid_card_passes_and_a_card_without_metadata_gets_the_hubs_warning(alice: HfApi, alice_repo: str) -> None:
    commit_card(alice, alice_repo, VALID_CARD)
    with pytest.warns(UserWarning, match=r"Warnings while validating metadata in README\.md"):
        commit_card(alice, alice_repo, "# A card without metadata\n")
    assert validate_card("# none\n") == ([], [EMPTY_METADATA_WARNING])


def test_the_example_releases_card_passes_the_hubs_validation(built: Path) -> None:
    assert validate_card((built / "README.md").read_text()) == ([], [])


def test_preupload_honours_the_repos_gitignore(alice: HfApi, alice_repo: str, tmp_path: Path) -> None:
    alice.upload_file(path_or_fileobj=b"*.log\nscratch/\n", path_in_repo=".gitignore", repo_id=alice_repo)
    for name in ("model.txt", "train.log", "scratch/notes.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    alice.upload_folder(folder_path=tmp_path, repo_id=alice_repo)
    assert sorted(alice.list_repo_files(alice_repo)) == [".gitattributes", ".gitignore", "model.txt"]


def test_a_gitignore_in_the_same_commit_applies_to_it(alice: HfApi, alice_repo: str, tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "kept.txt").write_text("kept")
    (tmp_path / "dropped.tmp").write_text("dropped")
    alice.upload_folder(folder_path=tmp_path, repo_id=alice_repo)
    assert sorted(alice.list_repo_files(alice_repo)) == [".gitattributes", ".gitignore", "kept.txt"]


@pytest.mark.parametrize("path", ["..\\ddd", ".\\x", "C:\\x.txt", "C:x"])
def test_paths_outside_the_repo_are_a_422(alice: HfApi, alice_repo: str, path: str) -> None:
    with pytest.raises(HfHubHTTPError) as err:
        alice.upload_file(path_or_fileobj=b"x", path_in_repo=path, repo_id=alice_repo)
    assert err.value.response.status_code == 422


def test_a_backslash_inside_the_repo_is_kept_as_the_hub_keeps_it(alice: HfApi, alice_repo: str) -> None:
    alice.upload_file(path_or_fileobj=b"x", path_in_repo="folder/..\\odd", repo_id=alice_repo)
    assert "folder/..\\odd" in alice.list_repo_files(alice_repo)


def test_repos_can_be_deleted_moved_and_reconfigured(alice: HfApi, bob: HfApi, alice_repo: str) -> None:
    alice.update_repo_settings(alice_repo, private=True)
    assert alice.model_info(alice_repo).private and not bob.repo_exists(alice_repo)
    alice.update_repo_settings(alice_repo, visibility="public", gated="manual")
    assert alice.model_info(alice_repo).gated == "manual" and bob.repo_exists(alice_repo)

    moved = alice_repo.replace("alice/", "acme/")  # alice may write in her org
    alice.move_repo(alice_repo, moved)
    assert not alice.repo_exists(alice_repo) and alice.repo_exists(moved)
    with pytest.raises(HfHubHTTPError, match="A model repository called acme/.* already exists"):
        alice.move_repo(alice.create_repo(alice_repo).repo_id, moved)

    with pytest.raises(HfHubHTTPError) as err:
        bob.delete_repo(moved)  # public, but not bob's
    assert err.value.response.status_code == 403
    alice.delete_repo(moved)
    assert not alice.repo_exists(moved)
    with pytest.raises(RepositoryNotFoundError):
        alice.delete_repo(moved)
    alice.delete_repo(moved, missing_ok=True)


def test_auth_check_and_gated_downloads(alice: HfApi, bob: HfApi, shared_hub: LocalHub, alice_repo: str) -> None:
    alice.auth_check(alice_repo)
    with pytest.raises(RepositoryNotFoundError):
        alice.auth_check("alice/no-such-repo")
    alice.update_repo_settings(alice_repo, gated="auto")
    with pytest.raises(GatedRepoError, match="is restricted and you are not in the authorized list"):
        bob.auth_check(alice_repo)
    with pytest.raises(GatedRepoError):
        hf_hub_download(alice_repo, ".gitattributes", endpoint=shared_hub.url, token=bob.token, cache_dir=None)
    alice.auth_check(alice_repo)  # the owner is never gated


def test_listing_models_by_author_shows_private_repos_to_members_only(
    alice: HfApi, bob: HfApi, alice_repo: str
) -> None:
    alice.update_repo_settings(alice_repo, private=True)
    assert alice_repo in [m.id for m in alice.list_models(author="alice")]
    assert alice_repo not in [m.id for m in bob.list_models(author="alice")]


def test_error_codes_let_the_client_answer_existence_questions(alice: HfApi, alice_repo: str) -> None:
    alice.upload_file(path_or_fileobj=b"x", path_in_repo="file.txt", repo_id=alice_repo)
    assert not alice.repo_exists("no-namespace")
    assert not alice.file_exists("no-namespace", "file.txt")
    assert not alice.file_exists(alice_repo, "file.txt", revision="no-such-branch")
    assert not alice.revision_exists(alice_repo, "no-such-branch")
    assert alice.file_exists(alice_repo, "file.txt") and not alice.file_exists(alice_repo, "other.txt")
    with pytest.raises(RepositoryNotFoundError):
        alice.list_repo_commits("no-namespace")
    with pytest.raises(RevisionNotFoundError):
        alice.create_tag(alice_repo, tag="invalid tag", revision="no-such-revision")


def test_hub_messages_for_409_412_and_protected_branches(alice: HfApi, alice_repo: str) -> None:
    head = alice.model_info(alice_repo).sha
    alice.upload_file(path_or_fileobj=b"x", path_in_repo="moved.txt", repo_id=alice_repo)
    with pytest.raises(HfHubHTTPError) as err:
        alice.create_commit(alice_repo, [CommitOperationAdd("a.txt", b"a")], commit_message="stale", parent_commit=head)
    assert err.value.response.status_code == 412
    assert "The branch was updated since you opened this page. Please refresh and try again." in str(err.value)
    assert err.value.response.headers["X-Request-Id"] in str(err.value)
    alice.create_branch(alice_repo, branch="dev")
    with pytest.raises(HfHubHTTPError, match="Reference refs/heads/dev already exists"):
        alice.create_branch(alice_repo, branch="dev")
    with pytest.raises(HfHubHTTPError, match="Cannot delete refs/heads/main"):
        alice.delete_branch(alice_repo, branch="main")
    with pytest.raises(RevisionNotFoundError, match="Invalid rev id"):
        alice.delete_branch(alice_repo, branch="no-such-branch")


def test_what_the_hub_accepts_is_accepted(alice: HfApi, alice_repo: str) -> None:
    first = alice.upload_file(path_or_fileobj=b"1", path_in_repo="dir/a.txt", repo_id=alice_repo).oid
    alice.upload_file(path_or_fileobj=b"2", path_in_repo="dir/b.txt", repo_id=alice_repo)
    alice.create_tag(alice_repo, tag="short", revision=first[:7])  # short commit ids resolve
    assert alice.model_info(alice_repo, revision="short").sha == first
    upper = alice_repo.upper()  # repo ids are case-insensitive
    assert alice.model_info(upper).id == alice_repo
    info = {p.path: p for p in alice.get_paths_info(alice_repo, ["dir/a.txt", "dir"], expand=True)}
    assert info["dir/a.txt"].last_commit.oid == first and info["dir"].last_commit.oid != first
    titles = [c.formatted_title for c in alice.list_repo_commits(alice_repo, formatted=True)]
    assert all(isinstance(t, str) for t in titles)
    # A folder deleted without its trailing slash, as a file deletion (the Hub deletes the folder).
    alice.create_commit(alice_repo, [CommitOperationDelete("dir")], commit_message="drop dir")
    assert alice.list_repo_files(alice_repo) == [".gitattributes"]
    empty = alice.upload_file(path_or_fileobj=b"", path_in_repo="empty.pkl", repo_id=alice_repo)
    assert empty.oid and alice.get_paths_info(alice_repo, ["empty.pkl"])[0].lfs is None  # empty files are never LFS


def test_every_answer_says_it_is_the_local_hub(shared_hub: LocalHub) -> None:
    response = get_session().get(f"{shared_hub.url}/api/models/nobody/nothing")
    assert response.status_code == 404 and response.headers["X-Error-Code"] == "RepoNotFound"
    assert response.headers["X-Local-Hub"] == "hf-release; xet=local" and response.headers["X-Request-Id"]


def test_a_card_the_hub_refuses_is_one_line_naming_the_card_and_nothing_is_committed(
    alice: HfApi, alice_repo: str
) -> None:
    """What push reports when the Hub (here: the local one, with the Hub's rules) refuses the card's metadata."""
    from release.errors import CheckFailed
    from release.hub.client import remote_errors

    before = alice.list_repo_refs(alice_repo).branches
    card = CommitOperationAdd("README.md", b"---\nmodel-index: foo\n---\n# A model\n")
    with pytest.raises(CheckFailed) as caught, remote_errors(alice_repo, "committing"):
        alice.create_commit(alice_repo, operations=[card], commit_message="release")
    [problem] = caught.value.problems
    assert problem.file == "README.md" and caught.value.exit_code == 1
    assert problem.message.startswith(
        'the Hub refuses the card\'s metadata ("model-index" must be an array); fix [card.metadata]'
    )
    assert alice.list_repo_refs(alice_repo).branches == before
