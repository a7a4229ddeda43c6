"""A speculative-decoding card's benchmark, from llm-inference-bench files: the table (current beside previous),
its settings and sources lines, and the chart's series. A value the bench did not record is a dash, never a 0;
an unrecorded acceptance length is derived where the evidence map says how (derived.py DerivedLength).
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from release.card.evidence import Evidence, EvidenceMap, Series
from release.card.speculative.derived import cell_accept_length
from release.card.text import (
    DASH,
    Line,
    Table,
    accept_length,
    accept_rate,
    cell,
    delta_pct,
    link,
    millis,
    number,
    seconds,
    tps,
)
from release.checks.bench import BenchRun
from release.errors import Problem

Cell = dict[str, Any]
CellKey = tuple[int, int]  # (concurrency, context_tokens)


def _unit_scale(run: BenchRun, pattern: str) -> float:
    unit = (run.metadata.get("units") or {}).get(pattern, "s")
    return {"s": 1.0, "ms": 1e-3, "us": 1e-6}.get(unit, 1.0)


@dataclass(frozen=True)
class Measured:
    """One bench cell in the card's units (seconds for latencies); None: the bench did not record it."""

    tps: float
    ttft_s: float | None
    itl_s: float | None
    accept_length: float | None
    accept_rate: float

    @classmethod
    def of(cls, run: BenchRun, c: Cell, accept_length: float | None) -> Measured:
        return cls(
            tps=float(c["aggregate_tps"]),
            ttft_s=_scaled(c["ttft_avg"], run, "ttft_*"),
            itl_s=_scaled(c["inter_token_latency_avg"], run, "inter_token_latency_*"),
            accept_length=accept_length,
            accept_rate=float(c["server_spec_accept_rate"]),
        )


def _scaled(value: float | None, run: BenchRun, pattern: str) -> float | None:
    return None if value is None else float(value) * _unit_scale(run, pattern)


def _shown(format_: Callable[[float], str]) -> Callable[[float | None], str]:
    return lambda value: DASH if value is None else format_(value)


def series_cells(
    series: Series, emap: EvidenceMap, evidence: Evidence, problems: list[Problem]
) -> dict[CellKey, Measured]:
    cells: dict[CellKey, Measured] = {}
    seen: dict[CellKey, str] = {}
    for path in series.files:
        run = evidence.bench.get(path)
        if run is None:
            problems.append(Problem(path, f"the card's {series.label} bench file is missing or invalid"))
            continue
        for c in run.cells:
            key = (int(c["concurrency"]), int(c["context_tokens"]))
            if key in seen:
                problems.append(
                    Problem(
                        path,
                        f"{series.label} has two cells for concurrency {key[0]}, context {key[1]} "
                        f"(also in {seen[key]}); give one per cell",
                    )
                )
                continue
            seen[key] = path
            cells[key] = Measured.of(run, c, cell_accept_length(c, path, emap.derived_length, emap.acceptance_length))
    return cells


def bench_table(
    emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]
) -> tuple[Table | None, Line | None]:
    if emap.current is None or not current:
        return None, None
    cur = emap.current.label
    prev = emap.previous.label if emap.previous else None
    keys = sorted(set(current) | set(previous), key=lambda k: (k[1], k[0]))
    metrics: list[tuple[str, str, Callable[[Measured], str]]] = [
        ("tok/s", "", lambda m: tps(m.tps)),
        ("TTFT", " (s)", lambda m: _shown(seconds)(m.ttft_s)),
        ("ITL", " (ms)", lambda m: _shown(millis)(m.itl_s)),
        ("Accept length", "", lambda m: _shown(accept_length)(m.accept_length)),
        ("Accept rate", "", lambda m: accept_rate(m.accept_rate)),
    ]
    header = ["Concurrency", "Context"]
    for name, unit, _ in metrics:
        header.append(f"{name} {cur}{unit}")
        if prev is not None:
            header.append(f"{name} {prev}{unit}")
            if name == "tok/s":
                header.append("Δ tok/s")
    rows = []
    for key in keys:
        a, b = current.get(key), previous.get(key)
        row = [str(key[0]), str(key[1])]
        for name, _, fmt in metrics:
            row.append(fmt(a) if a else DASH)
            if prev is not None:
                row.append(fmt(b) if b else DASH)
                if name == "tok/s":
                    row.append(delta_pct(a.tps, b.tps) if a and b else DASH)
        rows.append(tuple(row))
    table = Table(f"{cur} vs {prev}" if prev else cur, tuple(header), tuple(rows), frozenset(range(len(header))))
    both = [k for k in keys if k in current and k in previous]
    if prev is None or not both:
        return table, None
    tps_deltas = [(current[k].tps - previous[k].tps) / previous[k].tps * 100 for k in both if previous[k].tps]
    len_deltas = [
        now - before
        for k in both
        if (now := current[k].accept_length) is not None and (before := previous[k].accept_length) is not None
    ]
    parts = []
    if tps_deltas:
        parts.append(f"tok/s {_signed_span(tps_deltas, '{:+.1f}%')}")
    if len_deltas:
        parts.append(f"acceptance length {_signed_span(len_deltas, '{:+.2f}')}")
    if not parts:
        return table, None
    noun = "cell" if len(both) == 1 else "cells"
    line = Line(f"{cur} vs {prev}", f"{'; '.join(parts)} across {len(both)} {noun}")
    return table, line


def _signed_span(values: Sequence[float], pattern: str) -> str:
    lo, hi = pattern.format(min(values)), pattern.format(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def settings_line(emap: EvidenceMap, evidence: Evidence) -> Line | None:
    if emap.current is None or not emap.current.files or emap.current.files[0] not in evidence.bench:
        return None
    meta = evidence.bench[emap.current.files[0]].metadata
    parts = []
    if meta.get("version"):
        parts.append(f"llm-inference-bench {cell(str(meta['version']))}")
    parts.append(f"engine {cell(str(meta['engine']))}")
    if meta.get("duration_per_test"):
        parts.append(f"{number(meta['duration_per_test'])} s cells")
    if meta.get("max_tokens"):
        parts.append(f"max_tokens {number(meta['max_tokens'])}")
    if meta.get("concurrency_levels"):
        parts.append("concurrency " + ", ".join(number(c) for c in meta["concurrency_levels"]))
    if meta.get("context_lengths"):
        parts.append("context " + ", ".join(number(c) for c in meta["context_lengths"]) + " tokens")
    return Line(f"Settings ({emap.current.label}, from the bench file)", "; ".join(parts))


def sources_line(emap: EvidenceMap) -> Line | None:
    parts = []
    for series in (emap.current, emap.previous):
        if series:
            parts.append(f"{cell(series.label)}: " + ", ".join(link(p, p) for p in series.files))
    if emap.rechecks:
        parts.append("rechecks: " + ", ".join(link(p, p) for p in emap.rechecks))
    return Line("Evidence", "; ".join(parts)) if parts else None


def cell_words(concurrency: int, context: int) -> str:
    """A bench cell as the chart's tick says it, in words: "4 requests\n8k context" (not "c4 / 8k")."""
    tokens = f"{context // 1024}k" if context and context % 1024 == 0 else f"{context:,}"
    return f"{concurrency} request{'' if concurrency == 1 else 's'}\n{tokens} context"


def chart_series(
    emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]
) -> dict[str, Any]:
    keys = sorted(current, key=lambda k: (k[1], k[0]))
    if not keys or emap.current is None:
        return {}
    out: dict[str, Any] = {
        "cells": [cell_words(*k) for k in keys],
        "series": [
            (emap.current.label, [current[k].tps for k in keys], [_nan(current[k].accept_length) for k in keys])
        ],
    }
    if emap.previous and previous:
        out["series"].append(
            (
                emap.previous.label,
                [previous[k].tps if k in previous else math.nan for k in keys],
                [_nan(previous[k].accept_length) if k in previous else math.nan for k in keys],
            )
        )
    return out


def _nan(value: float | None) -> float:
    return math.nan if value is None else value
