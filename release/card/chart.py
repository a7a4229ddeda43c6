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
import os
import struct
import threading
from collections.abc import Callable
from typing import Any

from release.util.forked import Forked, fork_call

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 4.2, 100
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")
NOT_FROM_ZERO = "y axis does not start at 0"


def render(which: str, series: dict[str, Any], title: str) -> bytes:
    """PNG bytes of a card's picture. "bench": the bench chart, `series` the kind's chart_series (cells,
    [(label, tps, accept_length)]). "note": the honest note's evidence, `series` the kind's note_series: `name`
    (the metric), `sides` [(label, values)] (candidate, baseline), and the verdict's `comparison`
    (evidence/stats.py Comparison's means, difference, 95% CI, margin, p values and verdict).

    Rendering is deterministic, so the same data gives the same bytes: renders are memoized (and drawn by the
    Drawer's child when the build started one).
    """
    if which not in DRAW:
        raise ValueError(f"no chart called {which!r}")
    return _rendered(which, series, title)


def _rendered(which: str, series: dict[str, Any], title: str) -> bytes:
    key = (which, json.dumps(series, sort_keys=True, allow_nan=True), title)
    with _drawing:  # a second caller waits for a drawing in progress, then gets it from the memo
        if key not in _drawn:
            _remember(key, _render(*key))
        return _drawn[key]


_drawing = threading.Lock()
_drawn: dict[tuple[str, str, str], bytes] = {}  # rendering is deterministic: (which, series, title) → PNG
MEMO = 8


def _remember(key: tuple[str, str, str], png: bytes) -> None:
    if len(_drawn) >= MEMO:
        _drawn.clear()
    _drawn[key] = png


def _render(which: str, series_json: str, title: str) -> bytes:
    import matplotlib
    from matplotlib import style

    with style.context("default"), matplotlib.rc_context({"svg.hashsalt": "hf-release", "path.simplify": False}):
        fig = figure(which, json.loads(series_json), title)
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()


def charts_possible(card: dict[str, Any]) -> bool:
    """Whether the spec's [card] names a section that can have a picture ([card.bench], the honest note's
    served evidence): what the build knows of its charts before any evidence is read."""
    note = card.get("honest_note")
    return isinstance(card.get("bench"), dict) or (isinstance(note, dict) and isinstance(note.get("served"), dict))


class Drawer:
    """A forked child (release/util/forked.py) that imports matplotlib as soon as the build starts and draws the
    charts it is asked for, with a GIL of its own.

    Drawn by a thread here, the charts (the import of matplotlib and its fonts, ~0.5 s, and the drawing) held
    the GIL the build's checks, card and lint need, and the card waited for them: on 16 cores the charts were
    most of a fresh build's fixed cost (bench/RESULTS.md, issue 41). The child is forked before any thread
    runs (fork_call refuses otherwise: then the charts are drawn here, as before); the PNGs come back through
    its pipe into this module's memo, where `render` finds them. The request goes length-prefixed: a child
    forked later (the hashing's) holds a copy of its pipe's end, so its end is never seen.
    """

    def __init__(self, child: Forked[list[bytes]], sender: int) -> None:
        self._child: Forked[list[bytes]] | None = child
        self._sender: int | None = sender
        self._asked: list[tuple[str, str, str]] = []

    @classmethod
    def start(cls) -> Drawer | None:
        asks, sender = os.pipe()
        child = fork_call(_draw_asked, asks, sender)
        os.close(asks)
        if child is None:
            os.close(sender)
            return None
        return cls(child, sender)

    def ask(self, wanted: list[tuple[str, dict[str, Any], str]]) -> None:
        """Send what to draw: [(which, series, title)]; asked once."""
        self._asked = [(w, json.dumps(s, sort_keys=True, allow_nan=True), t) for w, s, t in wanted]
        payload = json.dumps(self._asked).encode("utf-8")
        data = memoryview(struct.pack("<Q", len(payload)) + payload)
        try:
            while data and self._sender is not None:
                data = data[os.write(self._sender, data) :]
        except OSError:  # the child is gone: remember() finds no result, and the charts are drawn here
            pass
        self._close_sender()

    def remember(self) -> None:
        """Wait for the child's PNGs and put them in the memo (nothing when it failed: drawn here then)."""
        if self._child is None or not self._asked:
            return self.close()
        drawn = self._child.result()
        self._child = None
        if drawn is not None and len(drawn) == len(self._asked):
            with _drawing:
                for key, png in zip(self._asked, drawn, strict=True):
                    _remember(key, png)

    def close(self) -> None:
        """Stop the child if it still runs (a build that ends before its card)."""
        self._close_sender()
        if self._child is not None:
            self._child.close()
            self._child = None

    def _close_sender(self) -> None:
        if self._sender is not None:
            os.close(self._sender)
            self._sender = None


def _draw_asked(asks: int, sender: int) -> list[bytes]:
    os.close(sender)
    import matplotlib.font_manager
    from matplotlib.backends import backend_agg  # noqa: F401 - imported while the parent runs its checks

    matplotlib.font_manager.fontManager.findfont("DejaVu Sans")
    head = _read_exactly(asks, 8)
    asked = json.loads(_read_exactly(asks, struct.unpack("<Q", head)[0]))
    return [_render(which, series_json, title) for which, series_json, title in asked]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the build ended before asking for its charts")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


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
