"""The local Hub's Xet side driven by the real hf_xet client (uploads, downloads by reconstruction), and its CAS
routes driven by hand where the client would never send the wrong thing (bad hashes, foreign xorbs, other
accounts). The rest of the suite runs with Xet switched off (tests/conftest.py); these tests switch it on."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import HfApi, constants, hf_hub_download

from release.localhub import LocalHub
from release.localhub.xet import hashes
from release.localhub.xet.shard import BOOKEND, FLAG_METADATA_EXT, FLAG_VERIFICATION, HEADER_TAG
from tests.helpers import READ_TOKEN, TOKEN
from tests.localhub.helpers import ALICE_TOKEN, BOB_TOKEN, sha256


@pytest.fixture
def xet_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """huggingface_hub uploads and downloads through hf_xet (is_xet_available reads this on every call)."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    yield


def _cas(hub: LocalHub, repo_id: str, token: str, kind: str = "write") -> tuple[str, dict[str, str]]:
    answer = httpx2.get(
        f"{hub.url}/api/models/{repo_id}/xet-{kind}-token/main", headers={"authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["casUrl"], {"authorization": f"Bearer {answer.json()['accessToken']}"}


def _xorb(*chunks: bytes) -> tuple[str, bytes]:
    """A xorb of uncompressed chunks and its hash."""
    body = b"".join(
        bytes([0]) + len(c).to_bytes(3, "little") + bytes([0]) + len(c).to_bytes(3, "little") + c for c in chunks
    )
    return hashes.to_hex(hashes.xorb_hash((hashes.chunk_hash(c), len(c)) for c in chunks)), body


def _shard(xorb: str, chunks: list[bytes], *, sha: bytes | None = None, check: bytes | None = None) -> bytes:
    """An upload shard naming one file made of all of one xorb's chunks."""
    pairs = [(hashes.chunk_hash(c), len(c)) for c in chunks]
    data = b"".join(chunks)
    out = HEADER_TAG + struct.pack("<QQ", 2, 0)
    out += hashes.file_hash(pairs) + struct.pack("<II", FLAG_VERIFICATION | FLAG_METADATA_EXT, 1) + bytes(8)
    out += hashes.from_hex(xorb) + struct.pack("<IIII", 0, len(data), 0, len(chunks))
    out += (check or hashes.verification_hash(h for h, _ in pairs)) + bytes(16)
    out += (sha or hashes.from_hex(sha256(data))) + bytes(16)
    return out + BOOKEND + BOOKEND


def test_stock_upload_and_download_go_through_xet(
    hub: LocalHub, api: HfApi, repo_id: str, tmp_path: Path, xet_on: None
) -> None:
    data = os.urandom(3 * 1024 * 1024) + bytes(1024 * 1024)
    (tmp_path / "model.safetensors").write_bytes(data)
    api.upload_file(path_or_fileobj=tmp_path / "model.safetensors", path_in_repo="model.safetensors", repo_id=repo_id)
    stats = hub.app.state.stats
    assert stats.requests["POST xet_xorb"] >= 1 and stats.requests["POST xet_shard"] == 1
    assert not stats.requests["POST lfs_batch"] and not stats.requests["PUT lfs_object"]
    assert stats.xet_bytes["xorb_new"] < len(data)  # the zeros compress
    entry = api.get_paths_info(repo_id, ["model.safetensors"])[0]
    assert entry.lfs.sha256 == sha256(data) and entry.xet_hash
    assert [e.xet_hash for e in api.list_repo_tree(repo_id) if e.path == "model.safetensors"] == [entry.xet_hash]
    got = hf_hub_download(repo_id, "model.safetensors", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "c")
    assert Path(got).read_bytes() == data
    assert stats.requests["GET xet_reconstruction"] == 1 and stats.requests["GET xet_fetch"] >= 1
    assert not stats.requests["GET xet_bridge"]


def test_resolve_answers_as_the_hub_and_the_bridge_serves_plain_clients(
    hub: LocalHub, api: HfApi, repo_id: str, tmp_path: Path, xet_on: None
) -> None:
    data = os.urandom(200_000)
    api.upload_file(path_or_fileobj=data, path_in_repo="w.bin", repo_id=repo_id)
    auth = {"authorization": f"Bearer {TOKEN}"}
    head = httpx2.head(f"{hub.url}/{repo_id}/resolve/main/w.bin", headers=auth)
    commit = api.repo_info(repo_id).sha
    assert head.status_code == 302 and head.headers["X-Xet-Hash"] == api.get_paths_info(repo_id, ["w.bin"])[0].xet_hash
    assert head.headers["X-Linked-Size"] == str(len(data)) and head.headers["X-Linked-Etag"] == f'"{sha256(data)}"'
    assert head.headers["X-Repo-Commit"] == commit
    assert f'/api/models/{repo_id}/xet-read-token/{commit}>; rel="xet-auth"' in head.headers["Link"]
    assert httpx2.get(head.headers["Location"]).content == data  # presigned: no credentials needed
    assert httpx2.get(head.headers["Location"], headers={"range": "bytes=10-19"}).content == data[10:20]
    constants.HF_HUB_DISABLE_XET = True  # a client without hf_xet follows the 302
    got = hf_hub_download(repo_id, "w.bin", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "c")
    assert Path(got).read_bytes() == data and hub.app.state.stats.requests["GET xet_bridge"] >= 1


def test_token_routes_answer_as_the_hub(hub: LocalHub, repo_id: str) -> None:
    url = f"{hub.url}/api/models/{repo_id}/xet-write-token/main"
    answer = httpx2.get(url, headers={"authorization": f"Bearer {TOKEN}"})
    body = answer.json()
    assert body["casUrl"] == f"{hub.url}/_xet/cas" and answer.headers["X-Xet-Cas-Url"] == body["casUrl"]
    assert (
        answer.headers["X-Xet-Access-Token"] == body["accessToken"]
        and int(answer.headers["X-Xet-Token-Expiration"]) == body["exp"]
    )
    assert httpx2.get(url).status_code == 401
    assert httpx2.get(url, headers={"authorization": "Bearer nope"}).status_code == 401
    assert httpx2.get(url, headers={"authorization": f"Bearer {READ_TOKEN}"}).status_code == 403
    read = httpx2.get(url.replace("write", "read"), headers={"authorization": f"Bearer {READ_TOKEN}"})
    assert read.status_code == 200
    assert (
        httpx2.get(url.replace(repo_id, "acme/nothing"), headers={"authorization": f"Bearer {TOKEN}"}).status_code
        == 404
    )
    missing = httpx2.get(url.replace("/main", "/nobranch"), headers={"authorization": f"Bearer {TOKEN}"})
    assert missing.status_code == 404 and missing.headers["X-Error-Code"] == "RevisionNotFound"


def test_cas_recomputes_xorb_and_file_hashes(hub: LocalHub, repo_id: str) -> None:
    cas, auth = _cas(hub, repo_id, TOKEN)
    chunks = [os.urandom(20_000), os.urandom(30_000), os.urandom(9_000)]
    xorb, body = _xorb(*chunks)
    other, _ = _xorb(os.urandom(10))
    assert httpx2.post(f"{cas}/v1/xorbs/default/{other}", content=body, headers=auth).status_code == 400
    damaged = body[:-1] + bytes([body[-1] ^ 1])
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=damaged, headers=auth).status_code == 400
    _, read_auth = _cas(hub, repo_id, TOKEN, "read")
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=body, headers=read_auth).status_code == 403
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=body).status_code == 401
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=body, headers=auth).json() == {"was_inserted": True}
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=body, headers=auth).json() == {"was_inserted": False}
    wrong_sha = _shard(xorb, chunks, sha=hashes.from_hex(sha256(b"other bytes")))
    assert "rebuilds to sha256" in httpx2.post(f"{cas}/v1/shards", content=wrong_sha, headers=auth).text
    wrong_check = _shard(xorb, chunks, check=bytes(32))
    assert "verification hash" in httpx2.post(f"{cas}/v1/shards", content=wrong_check, headers=auth).text
    assert httpx2.post(f"{cas}/v1/shards", content=b"garbage" * 10, headers=auth).status_code == 400
    assert httpx2.post(f"{cas}/v1/shards", content=_shard(xorb, chunks), headers=auth).status_code == 200
    file = hashes.to_hex(hashes.file_hash((hashes.chunk_hash(c), len(c)) for c in chunks))
    plan = httpx2.get(f"{cas}/v1/reconstructions/{file}", headers={**read_auth, "range": "bytes=25000-54999"}).json()
    assert plan["offset_into_first_range"] == 5000 and [t["range"] for t in plan["terms"]] == [{"start": 1, "end": 3}]
    (fetch,) = plan["fetch_info"][xorb]
    first, last = fetch["url_range"]["start"], fetch["url_range"]["end"]
    got = httpx2.get(fetch["url"], headers={"range": f"bytes={first}-{last}"})
    assert got.status_code == 206 and got.content == body[first : last + 1]
    assert httpx2.get(fetch["url"], headers={"range": f"bytes=0-{last}"}).status_code == 403  # outside the signed range
    assert (
        httpx2.get(f"{cas}/v1/reconstructions/{file}", headers={**read_auth, "range": "bytes=59000-"}).status_code
        == 416
    )
    assert httpx2.get(f"{cas}/v2/reconstructions/{file}", headers=read_auth).status_code == 404  # hf_xet falls back


def test_no_reads_across_accounts(shared_hub: LocalHub, alice: HfApi, bob: HfApi, tmp_path: Path, xet_on: None) -> None:
    """bob cannot cite, find through dedup or reconstruct what alice uploaded to her private repo."""
    private = alice.create_repo("alice/secret-weights-xet", private=True).repo_id
    chunk = os.urandom(10_000)
    xorb, body = _xorb(chunk)
    cas, alice_auth = _cas(shared_hub, private, ALICE_TOKEN)
    assert httpx2.post(f"{cas}/v1/xorbs/default/{xorb}", content=body, headers=alice_auth).status_code == 200
    assert httpx2.post(f"{cas}/v1/shards", content=_shard(xorb, [chunk]), headers=alice_auth).status_code == 200
    chunk_hex = hashes.to_hex(hashes.chunk_hash(chunk))
    assert httpx2.get(f"{cas}/v1/chunks/default/{chunk_hex}", headers=alice_auth).status_code == 200
    mine = bob.create_repo("bob/mine-xet").repo_id
    _, bob_auth = _cas(shared_hub, mine, BOB_TOKEN)
    assert httpx2.get(f"{cas}/v1/chunks/default/{chunk_hex}", headers=bob_auth).status_code == 404
    file = hashes.to_hex(hashes.file_hash([(hashes.chunk_hash(chunk), len(chunk))]))
    assert httpx2.get(f"{cas}/v1/reconstructions/{file}", headers=bob_auth).status_code == 404
    refused = httpx2.post(f"{cas}/v1/shards", content=_shard(xorb, [chunk]), headers=bob_auth)
    assert refused.status_code == 400 and "never uploaded" in refused.text
    bob_read = httpx2.get(
        f"{shared_hub.url}/api/models/{private}/xet-read-token/main", headers={"authorization": f"Bearer {BOB_TOKEN}"}
    )
    assert bob_read.status_code == 404  # a private repo of someone else's does not exist for bob


def test_the_stock_hf_cli_uploads_and_downloads_through_xet(hub: LocalHub, repo_id: str, tmp_path: Path) -> None:
    """`hf upload` and `hf download`, huggingface_hub's own console script, as a user with hf_xet installed runs
    them (nothing set but the endpoint and the token, which goes in the environment, never on the command line)."""
    import subprocess
    import sys

    folder = tmp_path / "model"
    folder.mkdir()
    data = os.urandom(2 * 1024 * 1024)
    (folder / "model.safetensors").write_bytes(data)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_DISABLE_XET", "HF_TOKEN")}
    env.update(HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN, HF_HOME=str(tmp_path / "hf-home"))
    hf = str(Path(sys.executable).parent / "hf")
    upload = subprocess.run([hf, "upload", repo_id, str(folder)], env=env, capture_output=True, text=True, timeout=120)
    assert upload.returncode == 0, upload.stderr
    stats = hub.app.state.stats
    assert stats.requests["POST xet_xorb"] >= 1 and stats.requests["POST xet_shard"] == 1
    assert not stats.requests["POST lfs_batch"] and not stats.requests["PUT lfs_object"]
    down = tmp_path / "down"
    download = subprocess.run(
        [hf, "download", repo_id, "model.safetensors", "--local-dir", str(down)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert download.returncode == 0, download.stderr
    assert (down / "model.safetensors").read_bytes() == data
    assert stats.requests["GET xet_reconstruction"] >= 1 and not stats.requests["GET xet_bridge"]
