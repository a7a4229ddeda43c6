"""Endpoints and ports are validated before anything is sent: one line, exit 2 (not a ValueError or
OverflowError traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import TOKEN
from tests.reliability.helpers import cli, token_args


@pytest.mark.parametrize(("endpoint", "why"), [
    ("http://[::1", "Invalid IPv6 URL"),  # an IPv6 address never closed
    ("http://127.0.0.1:99999", "Port out of range"),
    ("http://127.0.0.1:port", "Port could not be cast"),
])
def test_a_malformed_endpoint_is_one_line_exit_2(built: Path, capsys: pytest.CaptureFixture[str], endpoint: str, why: str) -> None:
    run = cli(capsys, "push", "v5", "--dry-run", "--dist", built.parent, "--endpoint", endpoint, *token_args(TOKEN))
    assert run.code == 2, run.err
    (line,) = run.err.strip().splitlines()
    assert line.startswith(f"--endpoint: {endpoint} is not a valid URL") and why in line


def test_hub_serve_refuses_a_port_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = cli(capsys, "hub", "serve", "--root", tmp_path / "hub", "--port", "99999")
    assert run.code == 2 and "Traceback" not in run.err and "99999" in run.err, run.err
    assert not (tmp_path / "hub").exists()
