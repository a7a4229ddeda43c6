"""Injected faults: the client's retries must carry an operation through, and failures must leave no trace."""

import os
import pickle
import time
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, HfApi, get_session

from release.localhub import FaultPlan, FaultRule, LocalHub
from tests.helpers import TOKEN, local_hub
from tests.localhub.helpers import CHUNK, sha256, temp_files

pytestmark = pytest.mark.hub(multipart_chunk_size=CHUNK)  # small multipart parts keep the multipart tests fast


def test_fault_plan_round_trips_through_its_cli_form() -> None:
    plan = FaultPlan.parse("PUT:drop:1:^/_lfs/[^/]+$; post:503:2:/commit/ ;*:delay=0.25:1:a:b")
    assert plan.rules == (
        FaultRule("PUT", "^/_lfs/[^/]+$", "drop", 1),
        FaultRule("POST", "/commit/", "503", 2),
        FaultRule("*", "a:b", "delay=0.25", 1),
    )
    assert plan.rules[2].delay == 0.25
    assert FaultPlan.parse(str(plan)) == plan
    assert pickle.loads(pickle.dumps(plan)) == plan
    for bad in ("GET:418:1:/x", "GET:429:0:/x", "GET:429:/x", "GET:500:1:("):
        with pytest.raises(ValueError):
            FaultPlan.parse(bad)


def test_rate_limits_and_unavailability_are_retried_until_the_commit_lands(tmp_path: Path) -> None:
    plan = FaultPlan.parse("POST:429:1:/preupload/;PUT:503:1:^/_lfs/")
    with local_hub(tmp_path / "hub", plan) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        repo_id = api.create_repo("acme/flaky").repo_id
        data = os.urandom(100_000)
        api.upload_file(path_or_fileobj=data, path_in_repo="w.safetensors", repo_id=repo_id)

        assert hub.stats.faults == {"429": 1, "503": 1}
        assert hub.stats.requests["POST preupload"] == 1 and hub.stats.requests["PUT lfs_object"] == 1
        assert [f.lfs.sha256 for f in api.get_paths_info(repo_id, ["w.safetensors"])] == [sha256(data)]


def test_a_429_carries_retry_after(tmp_path: Path) -> None:
    with local_hub(tmp_path / "hub", FaultPlan.parse("GET:429:1:whoami")) as hub:
        response = get_session().get(f"{hub.url}/api/whoami-v2", headers={"authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 429 and response.headers["Retry-After"] == "1"
        assert "error" in response.json()
        assert HfApi(endpoint=hub.url, token=TOKEN).whoami()["name"]  # the rule has fired its one time


def test_a_delay_slows_a_request_that_then_succeeds(tmp_path: Path) -> None:
    with local_hub(tmp_path / "hub", FaultPlan.parse("GET:delay=0.5:1:whoami")) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        started = time.monotonic()
        assert api.whoami()["name"]
        assert time.monotonic() - started >= 0.5
        started = time.monotonic()
        api.whoami()
        assert time.monotonic() - started < 0.5 and hub.stats.faults == {"delay=0.5": 1}


def test_a_dropped_commit_surfaces_and_a_retry_succeeds(tmp_path: Path) -> None:
    with local_hub(tmp_path / "hub", FaultPlan.parse("POST:drop:1:/commit/main$")) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        repo_id = api.create_repo("acme/dropped").repo_id
        before = api.model_info(repo_id).sha
        operations = [CommitOperationAdd("a.txt", b"a")]
        with pytest.raises(httpx2.TransportError):  # create_commit does not retry its POST
            api.create_commit(repo_id, operations, commit_message="first try")
        assert api.model_info(repo_id).sha == before and hub.stats.commits == 0

        retry = api.create_commit(repo_id, [CommitOperationAdd("a.txt", b"a")], commit_message="second try")
        assert api.model_info(repo_id).sha == retry.oid != before
        assert hub.stats.commits == 1 and hub.stats.faults["drop"] == 1


def test_an_upload_dropped_mid_body_is_retried_and_leaves_no_partial_object(tmp_path: Path) -> None:
    data = os.urandom(CHUNK - 1)  # just under the multipart threshold: one basic PUT, dropped once
    with local_hub(tmp_path / "hub", FaultPlan.parse("PUT:drop:1:^/_lfs/[^/]+$"), multipart_chunk_size=CHUNK) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        repo_id = api.create_repo("acme/resumed").repo_id
        api.upload_file(path_or_fileobj=data, path_in_repo="model.bin", repo_id=repo_id)

        assert hub.stats.faults["drop"] == 1 and hub.stats.requests["PUT lfs_object"] == 1
        stored = hub.root / "objects" / "sha256" / sha256(data)[:2] / sha256(data)[2:]
        assert stored.read_bytes() == data
        assert temp_files(hub.root) == []


def test_an_upload_that_does_not_match_its_sha256_is_rejected(hub: LocalHub, repo_id: str) -> None:
    claimed, sent = b"the real weights" * 1000, b"something else!!" * 1000  # same size, other content
    oid = sha256(claimed)
    auth = {"authorization": f"Bearer {TOKEN}"}
    batch = get_session().post(
        f"{hub.url}/{repo_id}.git/info/lfs/objects/batch",
        headers={**auth, "content-type": "application/vnd.git-lfs+json"},
        json={"operation": "upload", "transfers": ["basic"], "objects": [{"oid": oid, "size": len(claimed)}]},
    )
    actions = batch.json()["objects"][0]["actions"]
    href = actions["upload"]["href"]
    assert href.startswith(f"{hub.url}/_lfs/")

    def put(url: str, body: bytes) -> httpx2.Response:
        return get_session().put(url, content=body)  # upload hrefs are authorized by their signature alone

    assert put(href, sent).status_code == 400 and "sha256" in put(href, sent).json()["error"]
    assert put(href, claimed[:-1]).status_code == 400
    assert put(href[:-1] + ("0" if href[-1] != "0" else "1"), claimed).status_code == 403
    verify = get_session().post(actions["verify"]["href"], headers=auth, json={"oid": oid, "size": len(claimed)})
    assert verify.status_code == 404
    commit_body = (
        b'{"key":"header","value":{"summary":"uses a missing object"}}\n'
        + f'{{"key":"lfsFile","value":{{"path":"w.bin","algo":"sha256","oid":"{oid}","size":{len(claimed)}}}}}'.encode()
    )
    commit_url = f"{hub.url}/api/models/{repo_id}/commit/main"
    headers = {**auth, "content-type": "application/x-ndjson"}
    assert get_session().post(commit_url, headers=headers, content=commit_body).status_code == 422
    assert temp_files(hub.root) == []

    assert put(href, claimed).status_code == 200
    assert (
        get_session().post(actions["verify"]["href"], headers=auth, json={"oid": oid, "size": len(claimed)}).is_success
    )
    assert get_session().post(commit_url, headers=headers, content=commit_body).is_success
