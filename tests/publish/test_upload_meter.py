"""The upload meter says what it measured: a push into a brand-new repo sends every LFS byte, even when
another repo on the Hub holds the same content (over LFS the Hub keeps objects per repository)."""

from __future__ import annotations

import shutil
from pathlib import Path

from huggingface_hub import HfApi

from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.staged.manifest import Manifest
from tests.helpers import TOKEN


def test_a_new_repo_reports_no_bytes_already_on_the_hub(built: Path, tmp_path: Path, hub: LocalHub) -> None:
    dist = tmp_path / "dist" / built.name
    shutil.copytree(built, dist)
    weights = next(f for f in Manifest.load(dist / "release.json").files if f.path_in_repo.endswith(".safetensors"))
    other = HfApi(endpoint=hub.url, token=TOKEN)
    other.create_repo("someone/else")
    other.upload_file(
        path_or_fileobj=dist / weights.path_in_repo, path_in_repo="copy.safetensors", repo_id="someone/else"
    )

    result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    assert result.bytes_skipped == 0  # before: the weights counted as "already on the Hub"
    assert result.bytes_sent >= weights.size and hub.stats.upload_bytes[weights.sha256] == 2 * weights.size
