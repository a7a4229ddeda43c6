"""The card's pictures: honest axes, the honest note's evidence drawn, and the same bytes for the same data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from release.card.chart import NOT_FROM_ZERO, figure
from tests.helpers import with_extra_files

BENCH = {
    "cells": ["c1\n0", "c2\n0"],
    "series": [("v5", [51.1, 91.1], [3.19, 3.24]), ("v4", [42.0, 76.4], [3.18, float("nan")])],
}


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_acceptance_length_is_drawn_on_an_axis_that_shows_0_02_and_says_it_does_not_start_at_0() -> None:
    tps, length = figure("bench", BENCH, "t").axes
    assert tps.get_ylim()[0] == 0  # bars: from 0
    low, high = length.get_ylim()
    assert 3.0 < low < 3.18 and 3.24 < high < 3.4  # a ±0.02 difference is a visible share of the axis
    assert 0.02 / (high - low) > 0.05
    assert NOT_FROM_ZERO in texts(length)
    assert not length.patches  # points, not bars: a bar's length would read as the value


def test_the_honest_note_picture_is_each_sides_values_with_the_mean_and_the_verdicts_interval(built: Path) -> None:
    card = json.loads((built / "release.json").read_text())
    charts = {f["path_in_repo"] for f in card["files"] if f["role"] == "chart"}
    assert charts == {"assets/bench.png", "assets/honest-note.png"}  # staged and hashed like the bench chart
    assert (
        "](assets/honest-note.png)"
        in (built / "README.md").read_text().split("## Honest note", 1)[1].split("\n## ", 1)[0]
    )
    comparison = {
        "verdict": "inconclusive",
        "mean_candidate": 3.16,
        "mean_baseline": 3.28,
        "difference": -0.12,
        "ci_low": -0.481,
        "ci_high": 0.241,
        "p_value": 0.289,
        "tost_p_value": 0.708,
        "margin": 0.0656,
        "margin_fraction": 0.02,
    }
    series = {
        "name": "acceptance length",
        "sides": [("adapter", [3.01, 3.30, 3.17]), ("stock", [3.28, 3.28, 3.28])],
        "comparison": comparison,
    }
    values, difference = figure("note", series, "t").axes
    points = [tuple(line.get_ydata()) for line in values.lines]
    assert points == [(3.01, 3.30, 3.17), (3.28, 3.28, 3.28)]
    means = [tuple(c.get_segments()[0][:, 1]) for c in values.collections]
    assert means == [(3.16, 3.16), (3.28, 3.28)]
    assert NOT_FROM_ZERO in texts(values)
    (ci,) = [c for c in difference.collections if c.get_segments() and len(c.get_segments()[0]) == 2]
    assert [round(x, 3) for x in ci.get_segments()[0][:, 0]] == [-0.481, 0.241]
    (band,) = difference.patches  # the tie margin TOST tested against
    assert round(band.get_x(), 4) == -0.0656 and round(band.get_x() + band.get_width(), 4) == 0.0656
    assert "verdict: inconclusive" in difference.get_title()
    # same data, same bytes: tests/card/test_card_render.py rebuilds the example and compares both PNGs


def test_the_charts_are_drawn_beside_threads_hashing_only_when_few_files_are_hashed(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside thousands of small files hashed by this process's threads the drawing would stall their hashing
    (both need the GIL): it waits for the digests, and the pictures are the same bytes either way."""
    from release.builder import build
    from release.builder.hashing import MANY_FILES
    from release.pipeline import Done, Skipped
    from release.spec import load_spec

    monkeypatch.setattr("release.builder.hashing.fork_call", lambda *args: None)  # no child: threads hash here
    few = build(load_spec(example), tmp_path / "few")
    with_extra_files(example, MANY_FILES + 1)
    many = build(load_spec(example), tmp_path / "many")
    assert isinstance(dict(few.steps)["draw-chart"], Done)
    assert (
        isinstance(dict(many.steps)["draw-chart"], Skipped)
        and "after the hashing" in dict(many.steps)["draw-chart"].reason
    )
    for chart in ("assets/bench.png", "assets/honest-note.png"):
        assert (few.dist / chart).read_bytes() == (many.dist / chart).read_bytes()


DRAW_STEP = """
import sys
from pathlib import Path
from release.builder import build
from release.spec import load_spec
result = build(load_spec(Path(sys.argv[1])), Path(sys.argv[2]))
print(type(dict(result.steps)["draw-chart"]).__name__)
"""


def test_beside_a_hashing_child_the_charts_are_drawn_at_once(example: Path, tmp_path: Path) -> None:
    """Many files hashed by a forked child (a fresh process: no thread runs when it forks) share no GIL with the
    drawing, which then runs during their hashing."""
    import subprocess
    import sys

    from release.builder.hashing import MANY_FILES

    with_extra_files(example, MANY_FILES + 1)
    done = subprocess.run(
        [sys.executable, "-c", DRAW_STEP, str(example), str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.split()[-1] == "Done", done.stdout


def test_the_bench_chart_labels_its_axes_in_words() -> None:
    """Ticks say "4 requests / 8k context", not "c4 / 8k"; the axes what they measure (issue 40)."""
    from release.card.speculative.bench import cell_words

    assert [cell_words(1, 0), cell_words(4, 8192), cell_words(2, 1000)] == [
        "1 request\n0 context",
        "4 requests\n8k context",
        "2 requests\n1,000 context",
    ]
    tps, length = figure("bench", {**BENCH, "cells": [cell_words(1, 0), cell_words(2, 0)]}, "t").axes
    assert [t.get_text() for t in tps.get_xticklabels()] == ["1 request\n0 context", "2 requests\n0 context"]
    assert tps.get_ylabel() == "tokens per second, all requests" and length.get_ylabel() == "acceptance length"
    assert tps.get_xlabel() == "concurrent requests, context tokens"


def test_a_build_run_as_a_command_draws_its_charts_in_a_child_the_same_bytes(built: Path, spec_copy, tmp_path) -> None:
    """The CLI (one thread at the build's start) forks the Drawer's child; its PNGs are the ones this process
    draws (the session's build, drawn here on a thread: pytest-xdist's workers run threads, so no fork)."""
    dist = tmp_path / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(spec_copy()), "--dist", str(dist)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "start-charts             a child process draws the charts" in proc.stdout
    assert "draw-chart               the child draws the charts" in proc.stdout
    for name in ("assets/bench.png", "assets/honest-note.png", "README.md", "release.json"):
        assert (dist / "v5" / name).read_bytes() == (built / name).read_bytes(), name


DRAWER = """
import json, os, sys
from release.card.chart import Drawer, _drawn, render
bench = json.loads(sys.argv[1])
drawer = Drawer.start()
assert drawer is not None, "one thread: the child is forked"
pid = drawer._child.pid
if sys.argv[2] == "close":  # a build that ends before its card: the child is stopped and reaped
    drawer.close()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        print("gone")
else:
    drawer.ask([("bench", bench, "t")])
    drawer.remember()
    from_child = _drawn.copy()
    _drawn.clear()
    print(json.dumps({"memo": len(from_child), "same": list(from_child.values()) == [render("bench", bench, "t")]}))
"""


@pytest.mark.parametrize("how", ["draw", "close"])
def test_the_drawer_child_draws_what_this_process_draws_and_a_closed_one_is_gone(how: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DRAWER, json.dumps(BENCH), how], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    if how == "close":
        assert proc.stdout.strip() == "gone"
    else:
        assert json.loads(proc.stdout) == {"memo": 1, "same": True}
