"""`hf-release hub serve`: the output options every command takes, and, on an install without the [hub]
extra, a way to add it that works for that install."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import TOKEN, cli


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "Local Hub serving {root} at {url}"),
        (["-q"], "{url}"),
        (["--format", "agent"], "url={url} root={root}"),
        (["--json"], None),
    ],
)
def test_serve_prints_its_url_in_the_chosen_format(
    args: list[str],
    expected: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The server itself is replaced by one that announces its URL and stops (the real one serves until
    interrupted; tests/reliability/test_kill.py runs it as a process)."""
    import release.localhub

    url = "http://127.0.0.1:12345"
    monkeypatch.setattr(release.localhub, "serve", lambda *a, announce, **kw: announce(url))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    root = tmp_path / "hub"
    code, out, _ = cli(capsys, "hub", "serve", "--root", str(root), *args)
    assert code == 0
    if expected is None:
        assert json.loads(out) == {"command": "hub serve", "ok": True, "root": str(root), "url": url}
    else:
        assert out == expected.format(root=root, url=url) + "\n"


def test_a_plain_install_is_told_how_to_add_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from release.cli import hub

    monkeypatch.setitem(sys.modules, "release.localhub", None)  # as without starlette and uvicorn
    code, _, err = cli(capsys, "hub", "serve", "--root", str(tmp_path))
    assert code == 2 and "add it to this install: " in err and "pip install 'hf-release[hub]'" not in err
    monkeypatch.setattr(sys, "prefix", "/home/u/.local/pipx/venvs/hf-release")
    assert hub.add_hub_extra().startswith(
        "pipx inject hf-release blake3 lz4 pathspec starlette uvicorn (or: pipx install --force "
    )
    monkeypatch.setattr(sys, "prefix", "/home/u/.local/share/uv/tools/hf-release")
    assert hub.add_hub_extra().startswith("uv tool install --force ")
    monkeypatch.setattr(sys, "prefix", "/srv/venv")
    assert hub.add_hub_extra().startswith(f"{sys.executable} -m pip install ")
