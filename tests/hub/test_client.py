"""Endpoints and ports are validated before anything is sent: one line, exit 2 (not a ValueError or
OverflowError traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import release
from release.hub.client import HubClient, ManifestTooLarge
from release.hub.limits import MAX_MANIFEST_BYTES
from tests.helpers import REPO, TOKEN, cli
from tests.reliability.helpers import token_args


@pytest.mark.parametrize(
    ("endpoint", "why"),
    [
        ("http://[::1", "Invalid IPv6 URL"),  # an IPv6 address never closed
        ("http://127.0.0.1:99999", "Port out of range"),
        ("http://127.0.0.1:port", "Port could not be cast"),
    ],
)
def test_a_malformed_endpoint_is_one_line_exit_2(
    built: Path, capsys: pytest.CaptureFixture[str], endpoint: str, why: str
) -> None:
    run = cli(capsys, "push", "v5", "--dry-run", "--dist", built.parent, "--endpoint", endpoint, *token_args(TOKEN))
    assert run.code == 2, run.err
    (line,) = run.err.strip().splitlines()
    assert line.startswith(f"--endpoint: {endpoint} is not a valid URL") and why in line


@pytest.mark.parametrize(
    ("endpoint", "why"),
    [("http://[::1", "Invalid IPv6 URL"), ("http://127.0.0.1:99999", "Port out of range")],
)
def test_a_malformed_hf_endpoint_is_one_line_exit_2_even_where_the_format_is_detected(
    built: Path, endpoint: str, why: str
) -> None:
    """huggingface_hub's import reads HF_ENDPOINT and raises on one it cannot parse; `--format auto` (the default)
    imports it to detect an agent, so the variable is checked before: one line, exit 2 (issue 38, minor)."""
    env = {**os.environ, "HF_ENDPOINT": endpoint, "PYTHONPATH": str(Path(release.__file__).parents[1])}
    for extra in ([], ["--json"], ["--endpoint", "http://127.0.0.1:9"]):
        done = subprocess.run(
            [sys.executable, "-m", "release", "status", "--dist", str(built.parent), *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr, (extra, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"HF_ENDPOINT: {endpoint} is not a valid URL") and why in line, line


def test_hub_serve_refuses_a_port_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = cli(capsys, "hub", "serve", "--root", tmp_path / "hub", "--port", "99999")
    assert run.code == 2 and "Traceback" not in run.err and "99999" in run.err, run.err
    assert not (tmp_path / "hub").exists()


def test_the_hubs_release_json_is_bounded_before_it_is_downloaded(tmp_path: Path) -> None:
    """Build's `--since hub:` and push's main-not-newer share this one download: a release.json larger than any
    hf-release writes is refused from the Hub's listing, and never fetched."""

    class Api:
        def get_paths_info(self, repo_id: str, paths: list[str], revision: str) -> list[object]:
            return [SimpleNamespace(path="release.json", size=MAX_MANIFEST_BYTES + 1)]

        def hf_hub_download(self, *args: object, **kwargs: object) -> str:
            raise AssertionError("an oversized release.json was downloaded")

    hub = HubClient(Api(), "http://127.0.0.1:9")  # type: ignore[arg-type]
    with pytest.raises(ManifestTooLarge) as exc:
        hub.download_manifest(REPO, "v1", tmp_path, "reading release.json at v1")
    assert exc.value.size == MAX_MANIFEST_BYTES + 1
    with pytest.raises(ManifestTooLarge):  # the caller's own listing, asked first, bounds it the same way
        hub.download_manifest(REPO, "v1", tmp_path, "reading the Hub's release.json", size=MAX_MANIFEST_BYTES + 1)
