"""`build --since hub:V` reads the Hub's release.json within the bound push uses (release/hub/limits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from release.builder.previous import find_previous
from release.errors import InputError
from release.hub import limits
from release.hub.client import connect
from release.localhub import LocalHub
from tests.helpers import REPO, TOKEN


def test_a_hub_release_json_past_the_bound_is_refused_before_it_is_downloaded(
    hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    huge = b'{"files": [' + b'{"path_in_repo": "x"},' * 200 + b"{}]}"  # stands for a 300 MB one: the bound is lowered
    api.create_tag(
        REPO,
        tag="v4",
        revision=api.create_commit(REPO, [CommitOperationAdd("release.json", huge)], commit_message="v4").oid,
    )
    monkeypatch.setattr(limits, "MAX_MANIFEST_BYTES", 1024, raising=False)
    downloads = hub.stats.requests["GET resolve"]
    with pytest.raises(InputError, match=f"is {len(huge):,} bytes, more than the 1,024") as exc:
        find_previous("v5", tmp_path / "dist", "hub:v4", lambda: connect(hub.url, TOKEN), REPO)
    assert exc.value.problems[0].file == "--since hub:v4"
    assert hub.stats.requests["GET resolve"] == downloads  # not downloaded (before: read whole, 3 GB RSS for 300 MB)
