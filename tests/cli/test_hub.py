"""`hf-release hub serve`: the output options every command takes, and, on an install without the [hub]
extra, a way to add it that works for that install."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import release
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


def test_the_token_file_refuses_malformed_lines_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hf_x:admin` was taken as the write token `hf_x:admin` (issue 38, new user's list): an unknown role, an
    empty token and one with a space are each one line naming FILE:LINE, the token in none; nothing served."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}:write\n\nhf_secretvalue:admin\n:write\nhf_two words:read\n")
    code, out, err = cli(capsys, "hub", "serve", "--root", tmp_path / "hub", "--token-file", tokens)
    assert code == 2 and out == "" and "secretvalue" not in err and TOKEN not in err, err
    assert err.strip().splitlines() == [
        f"{tokens}:3: the role after the last ':' is neither read nor write; write TOKEN, TOKEN:read or TOKEN:write,"
        " one a line",
        f"{tokens}:4: an empty token; write TOKEN, TOKEN:read or TOKEN:write, one a line",
        f"{tokens}:5: a token with a space in it; write TOKEN, TOKEN:read or TOKEN:write, one a line",
    ]
    assert not (tmp_path / "hub").exists()


def test_push_says_when_its_token_file_holds_the_hubs_token_role_form(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """push's --token-file holds a bare token, the local Hub's TOKEN:role: given the latter, push sent it whole
    and got a 401; now one line says which form it is (issue 38, new user's list), the token never printed."""
    token_file = tmp_path / "token"
    token_file.write_text(f"\n{TOKEN}:write\n")
    code, out, err = cli(capsys, "push", "v5", "--dry-run", "--dist", built.parent, "--token-file", token_file)
    assert code == 2 and TOKEN not in out + err, err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"{token_file}:2: holds TOKEN:write, the form of `hf-release hub serve --token-file`")


@pytest.mark.parametrize(("sig", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
def test_serve_stopped_by_a_signal_ends_normally(tmp_path: Path, sig: signal.Signals, name: str) -> None:
    """SIGTERM (a service stopped, `kill`) or Ctrl-C is how a server ends: a stop document and exit 0, not the
    error document and exit 143 of an interrupted command (issue 38, new user's list)."""
    tokens = write_tokens(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(release.__file__).parents[1])}
    args = ["hub", "serve", "--root", str(tmp_path / "hub"), "--port", "0", "--token-file", str(tokens), "--json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        first = "".join(iter(proc.stdout.readline, "}\n")) + "}"  # printed once listening
        url = json.loads(first)["url"]
        proc.send_signal(sig)
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert json.loads(rest) == {
        "command": "hub serve",
        "ok": True,
        "root": str(tmp_path / "hub"),
        "url": url,
        "stopped_by": name,
    }
    assert "Traceback" not in err and "terminated" not in err, err


def write_tokens(folder: Path) -> Path:
    tokens = folder / "tokens"
    tokens.write_text(f"{TOKEN}:write\n")
    return tokens
