"""The card's one picture: tok/s and acceptance length per bench cell, current beside previous.

Rendered with matplotlib's Agg canvas (no pyplot, no global state), the default style whatever the
user's matplotlibrc says, a fixed size and dpi, and no metadata that varies (no Software, no date):
two builds of the same evidence write byte-identical PNGs.
"""

from __future__ import annotations

import io
import json
import math
import threading
from functools import lru_cache
from typing import Any

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 4.2, 100
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")


def render_chart(series: dict[str, Any], title: str) -> bytes:
    """PNG bytes of the chart; `series` is Facts.chart_series (cells, [(label, tps, accept_length)]).

    Rendering is deterministic, so the same data gives the same bytes: repeated renders are memoized.
    """
    with _drawing:  # a second caller waits for a drawing in progress, then gets it from the cache
        return _render(json.dumps(series, sort_keys=True, allow_nan=True), title)


_drawing = threading.Lock()


@lru_cache(maxsize=8)
def _render(series_json: str, title: str) -> bytes:
    import matplotlib

    from matplotlib import style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    series = json.loads(series_json)
    cells: list[str] = series["cells"]
    runs: list[tuple[str, list[float], list[float]]] = series["series"]
    with style.context("default"), matplotlib.rc_context({"svg.hashsalt": "hf-release", "path.simplify": False}):
        fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 2)
        width = 0.8 / max(len(runs), 1)
        positions = list(range(len(cells)))
        for panel, (ax, index, ylabel) in enumerate(
            ((axes[0], 1, "aggregate tok/s"), (axes[1], 2, "acceptance length"))
        ):
            for n, run in enumerate(runs):
                offset = (n - (len(runs) - 1) / 2) * width
                values = [0.0 if math.isnan(v) else v for v in run[index]]
                ax.bar([p + offset for p in positions], values, width=width, label=run[0], color=COLORS[n % len(COLORS)])
            ax.set_xticks(positions)
            ax.set_xticklabels(cells, fontsize=7)
            ax.set_ylabel(ylabel)
            ax.set_xlabel("concurrency / context")
            ax.grid(axis="y", alpha=0.3)
            ax.set_axisbelow(True)
            if panel == 1:
                top = max((v for run in runs for v in run[2] if not math.isnan(v)), default=1.0)
                ax.set_ylim(0, top * 1.15)
            ax.legend(fontsize=8, loc="upper right")
        fig.suptitle(title, fontsize=11)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.2, top=0.88, wspace=0.22)
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()

