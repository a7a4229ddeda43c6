"""push and remote verify over both transports against a local Hub that offers Xet: with hf_xet on (the
client's default) the release goes through the Hub's CAS, with HF_HUB_DISABLE_XET=1 over LFS; push reports
the transport it used and whether its bytes were metered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants

from release.localhub import LocalHub
from tests.helpers import REPO, TOKEN, cli
from tests.reliability.helpers import token_args


@pytest.mark.parametrize("transport", ["xet", "lfs"])
def test_push_then_verify_download_over_each_transport(
    hub: LocalHub, dist: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    args = ("--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    pushed = cli(capsys, "push", "v5", *args, "--format", "json")
    assert pushed.code == 0, pushed
    report = json.loads(pushed.out)
    requests = hub.stats.requests
    if transport == "xet":  # measured on the client, from hf_xet's reports: what the CAS received
        assert report["xet"] is True and report["bytes_measured"] is True
        assert requests["POST xet_xorb"] >= 1 and requests["POST xet_shard"] >= 1
        assert not requests["POST lfs_batch"] and not requests["PUT lfs_object"]
        xet_sizes = sum(
            e.size for e in HfApi(endpoint=hub.url).list_repo_tree(REPO, recursive=True) if getattr(e, "xet_hash", None)
        )
        assert report["xet_bytes"] == {"new": xet_sizes, "deduplicated": 0} and report["bytes_skipped"] == 0
        inline = report["plan"]["bytes_to_send"] - xet_sizes  # the small files, inside the commit
        xet = hub.stats.xet_bytes
        assert report["bytes_sent"] == inline + xet["xorb_received"] + xet["shard_received"]
    else:  # offered Xet, switched off by the user: LFS, metered
        assert report["xet"] is False and report["bytes_measured"] is True and report["xet_bytes"] is None
        assert requests["POST lfs_batch"] >= 1 and not requests["POST xet_xorb"]
    verified = cli(capsys, "verify", "v5", "--remote", "--download", *args, "--format", "json")
    assert verified.code == 0, verified
    remote = json.loads(verified.out)["remote"]
    assert remote["checked"] == "bytes" and (remote["bytes_reconstructed"] > 0) == (transport == "xet")
    assert bool(requests["GET xet_bridge"]) == (transport == "xet")  # Xet files resolve to the bridge


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        pytest.param(
            "GET:corrupt:99:^/_xet/fetch/",
            "bytes differ through Xet reconstruction: hf_xet rebuilds",
            id="reconstruction-rotten",
            marks=pytest.mark.hub("GET:corrupt:99:^/_xet/fetch/"),
        ),
        pytest.param(
            "GET:corrupt:99:^/_xet/bridge/",
            "bytes differ: the Hub serves sha256 ",
            id="plain-rotten",
            marks=pytest.mark.hub("GET:corrupt:99:^/_xet/bridge/"),
        ),
    ],
)
def test_verify_download_names_a_file_served_differently_on_either_path(
    hub: LocalHub,
    dist: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    said: str,
) -> None:
    """The store rots on one download path only: the bytes hf_xet rebuilds from xorb ranges, or the plain bytes
    the resolve redirects to. `verify --remote --download` reads both and names each Xet file, exit 1."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    args = ("--dist", dist.parent, "--endpoint", hub.url, *token_args(TOKEN))
    assert cli(capsys, "push", "v5", *args).code == 0
    xet_files = sorted(
        e.path
        for e in HfApi(endpoint=hub.url, token=TOKEN).list_repo_tree(REPO, recursive=True)
        if getattr(e, "xet_hash", None)
    )
    assert "model.safetensors" in xet_files
    verified = cli(capsys, "verify", "v5", "--remote", "--download", *args, "--format", "json")
    assert verified.code == 1, verified
    problems = json.loads(verified.out)["problems"]
    assert [p["file"] for p in problems] == [f"{REPO}@v5:{path}" for path in xet_files]
    assert all(p["message"].startswith(said) for p in problems), problems
    assert hub.stats.faults["corrupt"] >= len(xet_files)
    assert hub.stats.requests["GET xet_reconstruction"] == len(xet_files)  # every Xet file rebuilt by hf_xet
