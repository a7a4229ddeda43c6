"""Tampering, through the CLI: a byte changed in any staged file after build (verify exits 1 and push
exits 4, both naming the file, and nothing is sent), and files replaced on the Hub after a push
(verify --remote exits 1 naming each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

from release.localhub import LocalHub
from tests.helpers import REPO, TOKEN, cli, writes
from tests.reliability.helpers import TALLY, flip_byte, token_args


def test_a_byte_changed_in_any_staged_file_fails_verify_and_push(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    staged = sorted(p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file())
    assert {"model.safetensors", "README.md", "release.json", "SHA256SUMS", "assets/bench.png"} <= set(staged)
    for name in staged:
        path = dist / name
        original = path.read_bytes()
        flip_byte(path)
        verify = cli(capsys, "verify", "v5", "--dist", dist.parent)
        pushed = cli(capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
        assert verify.code == 1 and name in verify.err, (name, verify)
        assert pushed.code == 4 and name in pushed.err, (name, pushed)
        path.unlink()
        path.write_bytes(original)
        TALLY["staged files tampered (caught by verify and push)"] += 1
    assert writes(hub) == 0 and not HfApi(endpoint=hub.url, token=TOKEN).repo_exists(REPO)
    assert cli(capsys, "verify", "v5", "--dist", dist.parent).code == 0  # restored: the checks were the byte


@pytest.mark.parametrize("name", ["release.json", "SHA256SUMS"])
def test_a_valid_edit_of_the_bookkeeping_files_is_refused(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """An edit that keeps release.json valid and its release digest intact (the digest covers the files,
    not the tool version) or a rewritten SHA256SUMS: push refuses instead of publishing the edited file."""
    path = dist / name
    if name == "release.json":
        data = json.loads(path.read_text())
        data["tool"]["version"] += "-edited"
        text = json.dumps(data, indent=2)
    else:
        text = path.read_text().replace("  LICENSE", "  LICENSE.txt")
    path.unlink()
    path.write_text(text)
    assert cli(capsys, "verify", "v5", "--dist", dist.parent).code == 1
    pushed = cli(capsys, "push", "v5", "--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert pushed.code == 4 and f"{name}: changed since build" in pushed.err, pushed
    assert writes(hub) == 0


def test_files_replaced_on_the_hub_after_push_fail_verify_remote(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert cli(capsys, "push", "v5", *args).code == 0
    assert cli(capsys, "verify", "v5", "--remote", *args).code == 0
    api = HfApi(endpoint=hub.url, token=TOKEN)
    weights = bytearray((dist / "model.safetensors").read_bytes())
    weights[-1] ^= 1  # same size, one byte off: an LFS file
    info = api.create_commit(
        REPO,
        [
            CommitOperationAdd("model.safetensors", bytes(weights)),
            CommitOperationAdd("results.tsv", (dist / "results.tsv").read_bytes().replace(b"\t", b" ", 1)),  # regular
            CommitOperationDelete("config.json"),
            CommitOperationAdd("extra.txt", b"not part of the release\n"),
        ],
        commit_message="replaced on the Hub",
    )
    api.delete_tag(REPO, tag="v5")
    api.create_tag(REPO, tag="v5", revision=info.oid)
    verify = cli(capsys, "verify", "v5", "--remote", *args)
    assert verify.code == 1, verify
    lines = verify.err.splitlines()
    for name, says in [
        ("model.safetensors", "differs"),
        ("results.tsv", "differs"),
        ("config.json", "missing on the Hub"),
        ("extra.txt", "extra file"),
    ]:
        assert any(f"{REPO}@v5:{name}:" in line and says in line for line in lines), (name, verify.err)
    assert len(lines) == 4
    TALLY["files replaced on the Hub (caught by verify --remote)"] += 4


def test_a_hub_serving_corrupted_bytes_passes_remote_but_fails_download(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Hub's store rots under an intact index: the listing still names the right LFS sha256 and blob id,
    the bytes served are not. `--remote` proves the listing only (and says so); `--remote --download`
    streams every file and names each whose bytes differ, exit 1."""
    args = ("--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert cli(capsys, "push", "v5", *args).code == 0
    api = HfApi(endpoint=hub.url, token=TOKEN)
    listing = {e.path: e for e in api.list_repo_tree(REPO, revision="v5", recursive=True)}
    rotten = {
        "model.safetensors": hub.root
        / "objects"
        / "sha256"
        / listing["model.safetensors"].lfs.sha256[:2]
        / listing["model.safetensors"].lfs.sha256[2:],
        "results.tsv": hub.root
        / "objects"
        / "blob"
        / listing["results.tsv"].blob_id[:2]
        / listing["results.tsv"].blob_id[2:],
    }
    for stored in rotten.values():
        flip_byte(stored)

    listed = cli(capsys, "verify", "v5", "--remote", *args)
    assert listed.code == 0, listed
    assert "the Hub's listing matches every file" in listed.out and "bytes not read: add --download" in listed.out
    downloaded = cli(capsys, "verify", "v5", "--remote", "--download", *args, "--format", "json")
    assert downloaded.code == 1, downloaded
    problems = json.loads(downloaded.out)["problems"]
    assert [p["file"] for p in problems] == [f"{REPO}@v5:{name}" for name in sorted(rotten)]
    assert all(p["message"].startswith("bytes differ: the Hub serves sha256 ") for p in problems)
    for stored in rotten.values():
        flip_byte(stored)  # repaired: now every byte matches
    intact = cli(capsys, "verify", "v5", "--remote", "--download", *args, "--format", "json")
    assert intact.code == 0, intact
    remote = json.loads(intact.out)["remote"]
    assert remote["checked"] == "bytes" and remote["bytes_downloaded"] == sum(
        f.stat().st_size for f in dist.rglob("*") if f.is_file()
    )
    assert cli(capsys, "verify", "v5", "--download", *args).code == 2  # --download needs --remote
    TALLY["files rotten on the Hub (caught by verify --remote --download only)"] += len(rotten)
