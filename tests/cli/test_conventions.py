"""The `hf` CLI's conventions (huggingface_hub 2.4 cli/): --format auto|human|agent|json|quiet, --json,
-q/--quiet, --private/--no-private, --revision; no progress bars unless a person is at a terminal,
and HF_HUB_DISABLE_PROGRESS_BARS respected."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from release.builder import build
from release.cli import cli as click_group
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.spec import load_spec
from tests.helpers import TOKEN, cli, copy_as_version

HF_RELEASE = str(Path(sys.executable).parent / "hf-release")
BAR = "%|"  # tqdm's bar: "release.json: 100%|██████████| …"


def test_format_json_quiet_and_agent(example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(example.parent / "config.json")
    code, as_format, _ = cli(capsys, "hash", path, "--format", "json")
    assert code == 0
    code, as_flag, _ = cli(capsys, "hash", path, "--json")
    assert code == 0 and json.loads(as_flag) == json.loads(as_format)
    line = json.loads(as_flag)["lines"][0]
    for args in (["-q"], ["--quiet"], ["--format", "quiet"], ["--format", "human"], ["--format", "auto"], []):
        code, out, _ = cli(capsys, "hash", path, *args)
        assert code == 0 and out.splitlines() == [line], args
    code, out, _ = cli(capsys, "hash", path, "--format", "agent")  # hf's agent format: key=value pairs
    digest, _, named = line.partition("  ")
    assert code == 0 and out.splitlines() == [f"sha256={digest} path={named}"]
    code, out, _ = cli(capsys, "build", "--spec", str(example), "--dist", str(tmp_path / "dist"), "-q")
    assert code == 0 and out.splitlines() == [str(tmp_path / "dist" / "v5")]


@pytest.mark.parametrize("args", [["--json", "--format", "human"], ["-q", "--json"], ["--format", "table"]])
def test_conflicting_or_unknown_formats_are_usage_errors(
    args: list[str], example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "hash", str(example), *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_private_options_and_public_alias() -> None:
    push_command = click_group.commands["push"]
    for args, expected in ((["--private"], True), (["--no-private"], False), (["--public"], False), ([], None)):
        assert push_command.make_context("push", list(args)).params["private"] is expected


def test_no_progress_bars_for_machines_unless_the_environment_asks(
    example: Path, tmp_path: Path, hub: LocalHub
) -> None:
    """`build --since hub:v5` downloads through huggingface_hub, whose bars would show on stderr."""
    v5 = build(load_spec(example), tmp_path / "dist")
    push(v5.dist, PushOptions(endpoint=hub.url, token=TOKEN))
    shutil.rmtree(v5.dist)
    copy_as_version(example, "v6")

    def build_v6(fmt: str, bars_env: str | None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
        env.update(
            {"HF_TOKEN": TOKEN, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home"), "TQDM_POSITION": "-1"}
        )  # huggingface_hub's switch that shows its bars even off a terminal
        if bars_env is not None:
            env["HF_HUB_DISABLE_PROGRESS_BARS"] = bars_env
        shutil.rmtree(tmp_path / "hf-home", ignore_errors=True)  # nothing cached: every file is downloaded
        return subprocess.run(
            [HF_RELEASE, "build", "v6", "--since", "hub:v5", "--format", fmt],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    done = build_v6("json", None)
    assert done.returncode == 0, done.stderr
    assert BAR not in done.stderr, done.stderr
    chosen = build_v6("json", "0")  # the user's environment asks for bars: it wins
    assert chosen.returncode == 0 and BAR in chosen.stderr


def test_progress_only_for_a_person_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from release.cli.output import Output

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # leave huggingface_hub's switch alone here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert Output("human").progress and not Output("agent").progress and not Output("json").progress
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    assert not Output("human").progress
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert not Output("human").progress


def test_revision_for_remote_verify(
    example: Path, tmp_path: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    v5 = build(load_spec(example), tmp_path / "dist")
    push(v5.dist, PushOptions(endpoint=hub.url, token=TOKEN))
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(
        capsys, "verify", "v5", "--remote", "--revision", "main", "--endpoint", hub.url, "--token", TOKEN
    )
    assert code == 0, err
    assert "at revision main (commit " in out
    code, _, err = cli(capsys, "verify", "v5", "--revision", "main")
    assert code == 2 and "add --remote" in err
