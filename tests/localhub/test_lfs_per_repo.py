"""Over LFS the local Hub keeps objects per repository, as the Hub does: another repo's objects can neither
be committed, nor probed through the LFS batch, nor downloaded by someone who never had their bytes."""

import json

from huggingface_hub import CommitOperationAdd, HfApi, get_session

from release.localhub import LocalHub
from tests.localhub.helpers import ALICE_TOKEN, BOB_TOKEN, CHUNK, sha256

SECRET = b"\0private weights " * 64  # binary: stored over LFS


def batch(hub: LocalHub, token: str, repo_id: str, oid: str, size: int) -> dict:
    response = get_session().post(
        f"{hub.url}/{repo_id}.git/info/lfs/objects/batch",
        headers={"authorization": f"Bearer {token}", "content-type": "application/vnd.git-lfs+json"},
        json={"operation": "upload", "transfers": ["basic"], "objects": [{"oid": oid, "size": size}]},
    )
    assert response.status_code == 200, response.text
    return response.json()["objects"][0]


def commit_pointer(hub: LocalHub, token: str, repo_id: str, oid: str, size: int) -> int:
    lines = [
        {"key": "header", "value": {"summary": "take it"}},
        {"key": "lfsFile", "value": {"path": "stolen.bin", "algo": "sha256", "oid": oid, "size": size}},
    ]
    response = get_session().post(
        f"{hub.url}/api/models/{repo_id}/commit/main",
        content="\n".join(json.dumps(line) for line in lines),
        headers={"authorization": f"Bearer {token}", "content-type": "application/x-ndjson"},
    )
    return response.status_code


def test_another_accounts_private_object_can_be_neither_committed_nor_probed(
    shared_hub: LocalHub, alice: HfApi, bob: HfApi
) -> None:
    private = alice.create_repo("alice/private-weights", private=True, exist_ok=True).repo_id
    alice.upload_file(path_or_fileobj=SECRET, path_in_repo="weights.bin", repo_id=private)
    oid, size = sha256(SECRET), len(SECRET)
    theft = bob.create_repo("bob/theft", exist_ok=True).repo_id

    # the batch answers for bob's repo only: the same as for an oid that exists nowhere (no existence oracle)
    assert "upload" in batch(shared_hub, BOB_TOKEN, theft, oid, size)["actions"]
    assert "upload" in batch(shared_hub, BOB_TOKEN, theft, oid, size + 1)["actions"]  # nor its size
    assert "upload" in batch(shared_hub, BOB_TOKEN, theft, "0" * 64, size)["actions"]
    # a pointer to bytes bob never uploaded is refused, so they never reach him
    assert commit_pointer(shared_hub, BOB_TOKEN, theft, oid, size) == 422
    assert bob.list_repo_files(theft) == [".gitattributes"]
    # in alice's own repo the object is held: skipped by the batch, and a second pointer to it is fine
    assert "actions" not in batch(shared_hub, ALICE_TOKEN, private, oid, size)
    assert commit_pointer(shared_hub, ALICE_TOKEN, private, oid, size) == 200


def test_an_object_stored_for_another_repo_is_uploaded_again_in_full(shared_hub: LocalHub, alice: HfApi) -> None:
    """Its bytes (multipart here) must come again: the repo holds it once its own upload proved it has them."""
    data = bytes(range(256)) * (CHUNK // 256) + b"tail"  # two parts
    first, second = (alice.create_repo(f"alice/shard-{n}", exist_ok=True).repo_id for n in (1, 2))
    for repo_id in (first, second):
        alice.create_commit(repo_id, [CommitOperationAdd("shard.bin", data)], commit_message="shard")
    assert shared_hub.stats.upload_bytes[sha256(data)] == 2 * len(data)
    assert "actions" not in batch(shared_hub, ALICE_TOKEN, second, sha256(data), len(data))
