"""push and remote verify over both transports against a local Hub that offers Xet: with hf_xet on (the
client's default) the release goes through the Hub's CAS, with HF_HUB_DISABLE_XET=1 over LFS; push reports
the transport it used and whether its bytes were metered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import constants

from release.localhub import LocalHub
from tests.helpers import TOKEN, cli
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
    if transport == "xet":
        assert report["xet"] is True and report["bytes_measured"] is False
        assert requests["POST xet_xorb"] >= 1 and requests["POST xet_shard"] >= 1
        assert not requests["POST lfs_batch"] and not requests["PUT lfs_object"]
    else:  # offered Xet, switched off by the user: LFS, metered
        assert report["xet"] is False and report["bytes_measured"] is True
        assert requests["POST lfs_batch"] >= 1 and not requests["POST xet_xorb"]
    verified = cli(capsys, "verify", "v5", "--remote", "--download", *args, "--format", "json")
    assert verified.code == 0, verified
    assert json.loads(verified.out)["remote"]["checked"] == "bytes"
    assert bool(requests["GET xet_bridge"]) == (transport == "xet")  # Xet files resolve to the bridge
