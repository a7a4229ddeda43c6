"""The card's pictures: the bench chart (tok/s and acceptance length per bench cell, current beside previous)
and the honest note's evidence (each side's served values, their means, and the interval the verdict used).

Rendered with matplotlib's Agg canvas (no pyplot, no global state), the default style whatever the
user's matplotlibrc says, a fixed size and dpi, and no metadata that varies (no Software, no date):
two builds of the same evidence write byte-identical PNGs.

An axis that does not start at 0 says so on the chart, and its values are points, never bars (a bar's
length reads as the value): differences of ±0.02 in acceptance length are invisible on an axis from 0.
"""

from __future__ import annotations

import io
import json
import math
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 4.2, 100
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")
NOT_FROM_ZERO = "y axis does not start at 0"


def render_chart(series: dict[str, Any], title: str) -> bytes:
    """PNG bytes of the bench chart; `series` is the kind's chart_series (cells, [(label, tps, accept_length)]).

    Rendering is deterministic, so the same data gives the same bytes: repeated renders are memoized.
    """
    return _rendered("bench", series, title)


def render_note_chart(series: dict[str, Any], title: str) -> bytes:
    """PNG bytes of the honest note's evidence; `series` is the kind's note_series: `name` (the metric),
    `sides` [(label, values)] (candidate, baseline), and the verdict's `comparison` (evidence/stats.py
    Comparison's means, difference, 95% CI, margin, p values and verdict)."""
    return _rendered("note", series, title)


def _rendered(which: str, series: dict[str, Any], title: str) -> bytes:
    with _drawing:  # a second caller waits for a drawing in progress, then gets it from the cache
        return _render(which, json.dumps(series, sort_keys=True, allow_nan=True), title)


_drawing = threading.Lock()


@lru_cache(maxsize=8)
def _render(which: str, series_json: str, title: str) -> bytes:
    import matplotlib
    from matplotlib import style

    with style.context("default"), matplotlib.rc_context({"svg.hashsalt": "hf-release", "path.simplify": False}):
        fig = figure(which, json.loads(series_json), title)
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def figure(which: str, series: dict[str, Any], title: str) -> Any:
    """The drawn matplotlib Figure ("bench" or "note"), before it becomes PNG bytes (what the tests read back)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(fig)
    DRAW[which](fig, series)
    fig.suptitle(title, fontsize=11)
    return fig


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if not math.isnan(v)]


def _zoomed(ax: Any, values: list[float], pad: float) -> None:
    """Limits around the values (never from 0), and the chart saying so."""
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    span = max(hi - lo, pad)
    ax.set_ylim(lo - span * 0.35, hi + span * 0.35)
    ax.text(0.01, 0.98, NOT_FROM_ZERO, transform=ax.transAxes, fontsize=8, va="top", ha="left", color="#555555")


def _bench(fig: Any, series: dict[str, Any]) -> None:
    cells: list[str] = series["cells"]
    runs: list[tuple[str, list[float], list[float]]] = series["series"]
    axes = fig.subplots(1, 2)
    width = 0.8 / max(len(runs), 1)
    positions = list(range(len(cells)))
    tps_ax, length_ax = axes
    for n, (label, tps, _) in enumerate(runs):  # tok/s: bars on an axis from 0
        offset = (n - (len(runs) - 1) / 2) * width
        tps_ax.bar(
            [p + offset for p in positions],
            [0.0 if math.isnan(v) else v for v in tps],
            width=width,
            label=label,
            color=COLORS[n % len(COLORS)],
        )
    for n, (label, _, lengths) in enumerate(runs):  # acceptance length: points on a zoomed axis
        offset = (n - (len(runs) - 1) / 2) * width
        shown = [(p + offset, v) for p, v in zip(positions, lengths, strict=True) if not math.isnan(v)]
        length_ax.plot(
            [x for x, _ in shown],
            [v for _, v in shown],
            linestyle="none",
            marker="o",
            markersize=6,
            label=label,
            color=COLORS[n % len(COLORS)],
        )
    _zoomed(length_ax, [v for run in runs for v in _finite(run[2])], pad=0.05)
    for ax, ylabel in ((tps_ax, "tokens per second, all requests"), (length_ax, "acceptance length")):
        ax.set_xticks(positions)
        ax.set_xticklabels(cells, fontsize=7)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("concurrent requests, context tokens")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.legend(fontsize=8, loc="upper right")
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.2, top=0.88, wspace=0.22)


def _note(fig: Any, series: dict[str, Any]) -> None:
    name: str = series["name"]
    sides: list[tuple[str, list[float]]] = series["sides"]
    c = series["comparison"]
    values_ax, diff_ax = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.2, 1)})
    means = (c["mean_candidate"], c["mean_baseline"])
    for n, ((label, values), mean) in enumerate(zip(sides, means, strict=True)):
        color = COLORS[n % len(COLORS)]
        spread = [n + (i - (len(values) - 1) / 2) * 0.08 for i in range(len(values))]  # side by side, never random
        values_ax.plot(
            spread,
            values,
            linestyle="none",
            marker="o",
            markersize=7,
            color=color,
            alpha=0.85,
            label=f"{label}: {len(values)} run(s)",
        )
        values_ax.hlines(mean, n - 0.3, n + 0.3, color=color, linewidth=2)
        values_ax.annotate(f"mean {mean:.3g}", (n + 0.32, mean), fontsize=8, va="center", color=color)
    values_ax.set_xticks(range(len(sides)))
    values_ax.set_xticklabels([label for label, _ in sides])
    values_ax.set_xlim(-0.6, len(sides) - 0.1)
    values_ax.set_ylabel(name)
    values_ax.set_title("each run (points) and the mean (line)", fontsize=9)
    _zoomed(values_ax, [v for _, values in sides for v in values], pad=0.05)
    values_ax.grid(axis="y", alpha=0.3)
    values_ax.set_axisbelow(True)

    candidate, baseline = sides[0][0], sides[1][0]
    margin = c["margin"]
    diff_ax.axvspan(
        -margin,
        margin,
        color="#2ca02c",
        alpha=0.18,
        label=f"tie margin ±{c['margin_fraction'] * 100:g}% of the {baseline} mean (TOST)",
    )
    diff_ax.axvline(0, color="#555555", linewidth=1)
    diff_ax.errorbar(
        [c["difference"]],
        [0],
        xerr=[[c["difference"] - c["ci_low"]], [c["ci_high"] - c["difference"]]],
        fmt="o",
        color="black",
        capsize=6,
        label="difference of means, 95% CI (Welch)",
    )
    reach = max(abs(c["ci_low"]), abs(c["ci_high"]), margin) * 1.25 or 1.0
    diff_ax.set_xlim(-reach, reach)
    diff_ax.set_ylim(-1, 1.4)
    diff_ax.set_yticks([])
    diff_ax.set_xlabel(f"{name}: {candidate} − {baseline}")
    diff_ax.set_title(
        f"verdict: {c['verdict']} (Welch p = {c['p_value']:.3f}, TOST p = {c['tost_p_value']:.3f})", fontsize=9
    )
    diff_ax.legend(fontsize=7.5, loc="upper center")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.84, wspace=0.12)


DRAW: dict[str, Callable[[Any, dict[str, Any]], None]] = {"bench": _bench, "note": _note}
