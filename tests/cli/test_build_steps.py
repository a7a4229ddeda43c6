"""What `build` says about its steps (issue 38): the steps that ran are shown even when the build fails or is
interrupted, with the step that stopped it, and the steps that do not apply are one line of names (each with
its reason under -v and in --format json)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from release.builder.steps import BUILD_STEPS
from release.pipeline import Gate
from tests.helpers import bytes_read, cli, default_sigint, edit, problem_lines

STEP_NAMES = [step.name for step in BUILD_STEPS]


def step_names_shown(text: str) -> list[str]:
    """The build steps a human output names at the start of a line, in order."""
    return [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in STEP_NAMES]


def test_a_successful_build_puts_its_skipped_steps_on_one_line(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("build", "v5", "--spec", example, "--format", "human")
    code, out, err = cli(capsys, *args, "--dist", tmp_path / "dist")
    assert code == 0, err
    [skipped] = [line for line in out.splitlines() if line.startswith("skipped ")]
    assert "skipped:" not in out  # no step line of its own for a step that did not apply
    # prove-load does not apply to the example's kind, check-tokenizer finds no tokenizer: both only named
    assert "check-tokenizer" in skipped and "prove-load" in skipped and "-v says why" in skipped
    assert "check-config" in step_names_shown(out) and "check-tokenizer" not in step_names_shown(out)

    code, verbose, _ = cli(capsys, *args, "--dist", tmp_path / "verbose", "-v")
    assert code == 0 and not any(line.startswith("skipped ") for line in verbose.splitlines())
    assert any(
        line.startswith("check-tokenizer") and "skipped: no tokenizer file" in line for line in verbose.splitlines()
    )

    code, out, _ = cli(capsys, *args[:-2], "--dist", tmp_path / "json", "--format", "json")
    steps = json.loads(out)["steps"]
    assert [s["step"] for s in steps] == STEP_NAMES  # every step, in order
    [tokenizer] = [s for s in steps if s["step"] == "check-tokenizer"]
    assert tokenizer["result"] == "skipped" and tokenizer["reason"].startswith("no tokenizer file")


def test_a_failed_build_shows_the_steps_that_ran_and_the_gate_that_stopped_it(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(example.parent / "config.json", '"hidden_size": 4096', '"hidden_size": "4096"')
    args = ("build", "v5", "--spec", example, "--dist", tmp_path / "dist")
    code, out, err = cli(capsys, *args, "--format", "human")
    assert code == 1 and out == ""
    lines = err.splitlines()
    [stop] = [i for i, line in enumerate(lines) if " stopped the build: " in line]
    gates = [step.name for step in BUILD_STEPS if isinstance(step, Gate)]
    assert lines[stop].split()[0] == "checks" and "checks" in gates, err  # the first gate, after the checks
    assert "the steps above found 1 problem (below)" in lines[stop]
    ran = step_names_shown("\n".join(lines[:stop]))
    assert ran == [n for n in STEP_NAMES[: STEP_NAMES.index("checks")] if n in ran]  # in order, before the gate
    assert {"collect", "select-kind", "check-config", "check-weights"} <= set(ran)
    assert any(line.startswith("check-config") and "0/1 config file(s) valid" in line for line in lines[:stop])
    assert problem_lines(err) == ["config.json: hidden_size: '4096' is not of type 'integer'"]

    code, out, _ = cli(capsys, *args, "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["stopped_at"] == "checks" and document["error"] == "check-failed"
    assert [s["step"] for s in document["steps"]] == STEP_NAMES[: STEP_NAMES.index("checks")]


def test_a_build_interrupted_while_hashing_shows_the_steps_that_ran(example: Path, tmp_path: Path) -> None:
    """A real process, sent SIGINT (Ctrl-C) while it hashes a large sparse file: the steps that ran before, the
    step it was interrupted in, then "interrupted" (exit 130)."""
    with open(example.parent / "big.bin", "wb") as f:
        f.truncate(32 << 30)  # sparse: half a minute of hashing on one thread, no disk used
    edit(
        example,
        '[[files]]\nsource = "LICENSE"',
        '[[files]]\nsource = "big.bin"\nrole = "extra"\n\n[[files]]\nsource = "LICENSE"',
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(example), "--dist", str(tmp_path / "dist")]
        + ["--format", "human"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and bytes_read(proc.pid) <= 64 << 20:
        time.sleep(0.05)  # hashing has begun (collect has run)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and out == "", err
    lines = err.splitlines()
    [stop] = [i for i, line in enumerate(lines) if " stopped the build: interrupted" in line]
    assert lines[-1].endswith("interrupted") and stop < len(lines) - 1  # then main's "interrupted" line
    ran = step_names_shown("\n".join(lines[:stop]))
    assert "collect" in ran and "skipped:" not in err, err  # collect ran; skipped ones only named, on one line
    assert len([line for line in lines[:stop] if line.startswith("skipped ")]) <= 1, err
    assert lines[stop].split()[0] in STEP_NAMES and lines[stop].split()[0] not in ran, err
