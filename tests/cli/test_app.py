"""release/cli/app.py: each command's module is imported when that command runs, and what the group prints is
what it printed with every command imported up front."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from release.cli.app import COMMANDS, cli

# a fresh process runs `verify`, then `status --local`: what each has loaded when it is done
PROBE = """
import json, sys
from release.cli import main
loaded = {}
for args in (["verify", "v5", "--dist", sys.argv[1]], ["status", "--local", "--dist", sys.argv[1]]):
    try:
        main(args)
    except SystemExit as exc:
        modules = sorted(m for m in sys.modules if m.startswith(tuple(sys.argv[2:])))
        loaded[args[0]] = {"exit": exc.code, "modules": modules}
print(json.dumps(loaded), file=sys.stderr)
"""
WATCHED = ("release.cli.", "release.builder", "release.publish", "huggingface_hub.errors", "tqdm")


def test_a_command_imports_no_other_command_nor_what_it_does_not_use(built: Path) -> None:
    """verify does not load build's pipeline or the other commands; no command loads huggingface_hub's progress
    bars only to switch them off (tqdm imports asyncio); `status --local` loads no Hub client."""
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}  # hf-release switches them off
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(built.parent), *WATCHED],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=built.parent.parent,
        env=env,
    )
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    # calls: every command's typed call (shared with the Python API), importing its core lazily as commands did
    own = ["release.cli.app", "release.cli.calls", "release.cli.options", "release.cli.output", "release.cli.results"]
    assert loaded["verify"] == {"exit": 0, "modules": sorted([*own, "release.cli.verify"])}, done.stderr
    assert loaded["status"] == {"exit": 0, "modules": sorted([*own, "release.cli.status", "release.cli.verify"])}, (
        done.stderr
    )


def test_every_command_is_listed_under_its_own_name() -> None:
    for name in COMMANDS:
        assert cli.commands[name].name == name


def printed(group: click.Group, args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What the group prints for ARGS: its output, or the usage error's message."""
    capsys.readouterr()
    try:
        group.main(args, prog_name="hf-release", standalone_mode=False)
    except click.UsageError as exc:
        return f"error: {exc.format_message()}"
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["verfy"],
        ["hub", "serv"],
        ["hub", "--help"],
        ["hub", "serve", "--help"],
        *[[name, "--help"] for name in COMMANDS],
    ],
    ids=" ".join,
)
def test_the_group_prints_what_it_printed_with_every_command_imported(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    eager = copy.copy(cli)  # the group as it was: every command added to it at import
    eager.commands = {name: cli.commands[name] for name in COMMANDS}
    assert printed(cli, args, capsys) == printed(eager, args, capsys)


# run(), as the console script calls it, with an atexit handler and a thread that is not a daemon still working
EXITING = """
import atexit, sys, threading, time
from release.cli import run
atexit.register(lambda: print("atexit ran", flush=True))
def late():
    time.sleep(0.3)
    print("thread finished", flush=True)
threading.Thread(target=late).start()
sys.argv = ["hf-release", *sys.argv[1:]]
run()
print("not reached")
"""


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["verify", "v9", "--dist", "nowhere"], 2)])
def test_the_console_script_exits_with_its_code_once_threads_and_atexit_handlers_are_done(
    tmp_path: Path, args: list[str], code: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXITING, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == code, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == ["thread finished", "atexit ran"], done.stdout  # in the order a normal exit keeps
    assert "not reached" not in done.stdout and "Traceback" not in done.stderr
