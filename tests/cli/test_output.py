"""The output formats as hf (huggingface_hub 2.4 cli/_output.py) has them: agent is `key=value` records, one a
line; quiet is one item a line; and choosing `auto` sends no request (hf fetches its agent-harness list)."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import cli


def test_an_agent_line_is_key_value_pairs_that_split_on_spaces() -> None:
    from release.cli.output import key_values

    line = key_values({"version": "v5", "ok": True, "skipped": None, "path": "a b/c.txt", "note": 'say "x=1"', "n": 3})
    assert line == 'version=v5 ok=true path="a b/c.txt" note="say \\"x=1\\"" n=3'
    assert key_values({"empty": ""}) == 'empty=""'


def test_agent_and_quiet_of_hash(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(example.parent / "config.json"), str(example.parent / "LICENSE")]
    code, out, _ = cli(capsys, "hash", *paths, "--format", "agent")
    assert code == 0
    records = [dict(pair.split("=", 1) for pair in line.split(" ")) for line in out.splitlines()]
    assert [r["path"] for r in records] == paths and all(len(r["sha256"]) == 64 for r in records)
    code, quiet, _ = cli(capsys, "hash", *paths, "-q")
    assert code == 0 and len(quiet.splitlines()) == 2  # one item a line


@pytest.fixture
def recording_endpoint() -> Iterator[tuple[str, list[str]]]:
    """An HTTP endpoint on loopback that answers 404 to everything and records each request's path."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(self.path)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_build_at_a_terminal_sends_no_request(
    tmp_path: Path,
    recording_endpoint: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """huggingface_hub's agent detection fetches HF_ENDPOINT/api/agent-harnesses when no fresh copy is cached;
    a build (which uses no network) asked it at a terminal, for `--format auto`."""
    from huggingface_hub import constants
    from huggingface_hub.utils import _detect_agent

    from tests.kinds.helpers import make_release

    spec = make_release(tmp_path / "artifacts" / "v1")

    endpoint, seen = recording_endpoint
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "no-cache" / "harnesses.json"))
    monkeypatch.setattr(_detect_agent, "_registry", None)  # as in a new process
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)  # bars are asked for first, at a terminal
    code, out, err = cli(capsys, "build", "--spec", str(spec), "--dist", str(tmp_path / "dist"))
    assert code == 0, err
    assert seen == [], seen
    assert not (tmp_path / "no-cache").exists()


def test_auto_is_agent_when_the_cached_harness_list_names_the_caller(
    tmp_path: Path, example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import constants
    from huggingface_hub.utils import _detect_agent

    cached = tmp_path / "harnesses.json"
    cached.write_text(json.dumps({"standardEnvVars": ["AI_AGENT"], "harnesses": {"some-agent": {}}}))
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(cached))
    monkeypatch.setattr(_detect_agent, "_registry", None)
    monkeypatch.setenv("AI_AGENT", "some-agent")
    code, out, _ = cli(capsys, "hash", str(example.parent / "config.json"))
    assert code == 0 and out.startswith("sha256="), out
