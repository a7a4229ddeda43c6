"""The speculative-decoding parts of a card, from the evidence: the serving flags and launch order
read from the launcher, the benchmark table (current beside previous), the rechecks and their
verdict, the served half of the honest note, and the chart's series. Pure: no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks.bench import BenchRun
from ..checks.launcher import Launcher
from ..errors import Problem
from ..manifest import CARD_NAME
from .evidence import FIELD_NAME, SERVED_NOUN, Evidence, EvidenceMap, Series, Served
from .text import (
    DASH,
    METRIC_FORMAT,
    Line,
    Table,
    accept_length,
    accept_rate,
    cell,
    code_cell,
    delta_pct,
    link,
    mean,
    millis,
    number,
    public_value,
    seconds,
    span,
    tps,
)

Cell = dict[str, Any]
CellKey = tuple[int, int]  # (concurrency, context_tokens)

def serving_table(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, str | None, Line | None]:
    if emap.launcher is None:
        return None, None, None
    launcher = evidence.launchers.get(emap.launcher)
    if launcher is None:
        problems.append(Problem(emap.launcher, "the card quotes this launcher but it is not a valid launcher of the release"))
        return None, None, None
    rows = []
    for flag, value in launcher.flags.items():
        shown = "(set)" if value is True else code_cell(public_value(str(value)))
        rows.append((code_cell(flag), shown))
    table = Table("serving flags", ("Flag", "Value"), tuple(rows), key_columns=1)
    raw = launcher.flags.get("--speculative-config")
    spec_config = public_value(raw) if isinstance(raw, str) else None
    return table, spec_config, Line("Launch order", launch_order(launcher))


def launch_order(launcher: Launcher) -> str:
    """The launcher's start order in words, from `Launcher.launch_order` (e.g. ["worker 1", …, "head 0"])."""
    starts = [tuple(s.split(" ", 1)) if " " in s else (s, "?") for s in launcher.launch_order]
    workers = [rank for role, rank in starts if role == "worker"]
    heads = [rank for role, rank in starts if role == "head"]
    if not starts:
        return "not found in the launcher"
    if len(heads) == 1 and starts[-1][0] == "head" and workers and len(workers) == len(starts) - 1:
        noun = "rank" if len(workers) == 1 else "ranks"
        return f"workers first ({noun} {', '.join(workers)}), head last (rank {heads[0]})"
    if len(starts) == 1:
        return f"a single node ({starts[0][0]}, rank {starts[0][1]})"
    return "as the launcher starts them: " + " → ".join(f"{role} {rank}" for role, rank in starts)


# --- benchmark -------------------------------------------------------------------------------------


def _unit_scale(run: BenchRun, pattern: str) -> float:
    unit = (run.metadata.get("units") or {}).get(pattern, "s")
    return {"s": 1.0, "ms": 1e-3, "us": 1e-6}.get(unit, 1.0)


@dataclass(frozen=True)
class Measured:
    """One bench cell in the card's units (seconds for latencies)."""

    tps: float
    ttft_s: float
    itl_s: float
    accept_length: float
    accept_rate: float

    @classmethod
    def of(cls, run: BenchRun, c: Cell) -> Measured:
        return cls(
            tps=float(c["aggregate_tps"]),
            ttft_s=float(c["ttft_avg"]) * _unit_scale(run, "ttft_*"),
            itl_s=float(c["inter_token_latency_avg"]) * _unit_scale(run, "inter_token_latency_*"),
            accept_length=float(c["server_spec_accept_length"]),
            accept_rate=float(c["server_spec_accept_rate"]),
        )


def series_cells(series: Series, evidence: Evidence, problems: list[Problem]) -> dict[CellKey, Measured]:
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
                    Problem(path, f"{series.label} has two cells for concurrency {key[0]}, context {key[1]} "
                                  f"(also in {seen[key]}); give one per cell")
                )
                continue
            seen[key] = path
            cells[key] = Measured.of(run, c)
    return cells


def bench_table(emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]) -> tuple[Table | None, Line | None]:
    if emap.current is None or not current:
        return None, None
    cur = emap.current.label
    prev = emap.previous.label if emap.previous else None
    keys = sorted(set(current) | set(previous), key=lambda k: (k[1], k[0]))
    metrics: list[tuple[str, str, Callable[[Measured], str]]] = [
        ("tok/s", "", lambda m: tps(m.tps)),
        ("TTFT", " (s)", lambda m: seconds(m.ttft_s)),
        ("ITL", " (ms)", lambda m: millis(m.itl_s)),
        ("Accept length", "", lambda m: accept_length(m.accept_length)),
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
    len_deltas = [current[k].accept_length - previous[k].accept_length for k in both]
    parts = []
    if tps_deltas:
        parts.append(f"tok/s {_signed_span(tps_deltas, '{:+.1f}%')}")
    parts.append(f"acceptance length {_signed_span(len_deltas, '{:+.2f}')}")
    noun = "cell" if len(both) == 1 else "cells"
    line = Line(f"{cur} vs {prev}", f"{'; '.join(parts)} across {len(both)} {noun}")
    return table, line


def _signed_span(values: Sequence[float], pattern: str) -> str:
    lo, hi = pattern.format(min(values)), pattern.format(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def _tagged_cells(files: Sequence[str], evidence: Evidence, problems: list[Problem], what: str) -> list[tuple[str, BenchRun, Cell]]:
    out = []
    for path in files:
        run = evidence.bench.get(path)
        if run is None:
            problems.append(Problem(path, f"the card's {what} file is missing or invalid"))
            continue
        for index, c in enumerate(run.cells):
            tag = c.get("drafter")
            if not isinstance(tag, str) or not tag:
                problems.append(Problem(path, f"results[{index}] has no `drafter` tag; {what} cells must say which drafter ran"))
                continue
            out.append((path, run, c))
    return out


def _drafter_order(tags: Iterable[str], served: Served | None) -> list[str]:
    first = [served.candidate, served.baseline] if served else []
    return [t for t in first if t in set(tags)] + sorted(set(tags) - set(first))


def recheck_table(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
    if not emap.rechecks:
        return None, None
    cells = _tagged_cells(emap.rechecks, evidence, problems, "recheck")
    if not cells:
        return None, None
    field_name = emap.served.field if emap.served else "server_spec_accept_length"
    groups: dict[CellKey, dict[str, list[tuple[str, BenchRun, Cell]]]] = {}
    for path, run, c in cells:
        key = (int(c["concurrency"]), int(c["context_tokens"]))
        groups.setdefault(key, {}).setdefault(c["drafter"], []).append((path, run, c))
    verdict_of = {"server_spec_accept_length": "acc. len", "server_spec_accept_rate": "acc. rate", "aggregate_tps": "tok/s"}
    header = ("Concurrency", "Context", "Drafter", "Runs", "Accept length min–max", "Accept length mean",
              "tok/s min–max", "tok/s mean", f"Verdict ({verdict_of[field_name]})")
    rows = []
    for key in sorted(groups, key=lambda k: (k[1], k[0])):
        by_tag = groups[key]
        verdict = _verdict(by_tag, emap.served, field_name)
        for tag in _drafter_order(by_tag, emap.served):
            runs = by_tag[tag]
            lengths = [float(c["server_spec_accept_length"]) for _, _, c in runs]
            rates = [float(c["aggregate_tps"]) for _, _, c in runs]
            rows.append((str(key[0]), str(key[1]), cell(tag), str(len(runs)), span(lengths, accept_length),
                         accept_length(mean(lengths)), span(rates, tps), tps(mean(rates)), verdict))
    table = Table("rechecks", header, tuple(rows), frozenset({0, 1, 3, 4, 5, 6, 7}), key_columns=3)
    tags = _drafter_order({c["drafter"] for _, _, c in cells}, emap.served)
    fmt = METRIC_FORMAT[field_name]
    parts = []
    for tag in tags:
        values = [float(c[field_name]) for _, _, c in cells if c["drafter"] == tag]
        parts.append(f"{cell(tag)} {span(values, fmt)} (mean {fmt(mean(values))})")
    noun = "file" if len(emap.rechecks) == 1 else "files"
    overall = _verdict({t: [x for x in cells if x[2]["drafter"] == t] for t in tags}, emap.served, field_name)
    line = Line(f"Rechecks ({len(emap.rechecks)} {noun}, {FIELD_NAME[field_name]})", f"{' vs '.join(parts)}: {overall}")
    return table, line


def _verdict(by_tag: dict[str, list[tuple[str, BenchRun, Cell]]], served: Served | None, field_name: str) -> str:
    """`tied` when the candidate's and the baseline's ranges overlap, else which is higher."""
    if served is None or served.candidate not in by_tag or served.baseline not in by_tag:
        return DASH
    a = [float(c[field_name]) for _, _, c in by_tag[served.candidate]]
    b = [float(c[field_name]) for _, _, c in by_tag[served.baseline]]
    if min(a) <= max(b) and min(b) <= max(a):
        return "tied"
    return f"{cell(served.candidate)} higher" if min(a) > max(b) else f"{cell(served.baseline)} higher"


def served_clause(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> str | None:
    """The honest note's served half, e.g. `but produced no served acceptance gain (3.01–3.30 vs stock 3.28; …)`."""
    served = emap.served
    if served is None:
        return None
    cells = _tagged_cells(served.files, evidence, problems, "served-metric evidence")
    where = CARD_NAME + " honest note"
    if len(served.files) != served.rechecks:
        problems.append(
            Problem(where, f"claims {served.rechecks} rechecks but the evidence has {len(served.files)} file(s): "
                           f"{', '.join(served.files) or 'none'}")
        )
    a = [float(c[served.field]) for _, _, c in cells if c["drafter"] == served.candidate]
    b = [float(c[served.field]) for _, _, c in cells if c["drafter"] == served.baseline]
    for tag, values in ((served.candidate, a), (served.baseline, b)):
        if not values:
            problems.append(Problem(where, f"no cell tagged drafter {tag!r} in {', '.join(served.files) or 'the evidence'}"))
    if not a or not b:
        return None
    fmt = METRIC_FORMAT[served.field]
    noun = SERVED_NOUN[served.field]
    numbers = f"{span(a, fmt)} vs {cell(served.baseline)} {span(b, fmt)}"
    n = len(served.files)
    runs = "recheck" if n == 1 else "rechecks"
    if min(a) <= max(b) and min(b) <= max(a):
        return f"but produced no served {noun} gain ({numbers}; statistically tied across {n} {runs})"
    if min(a) > max(b):
        return f"and raised served {noun} ({numbers}; higher in all {n} {runs})"
    return f"and lowered served {noun} ({numbers}; lower in all {n} {runs})"


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


def chart_series(emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]) -> dict[str, Any]:
    keys = sorted(current, key=lambda k: (k[1], k[0]))
    if not keys or emap.current is None:
        return {}
    out: dict[str, Any] = {
        "cells": [f"c{k[0]}\n{k[1] // 1024}k" if k[1] % 1024 == 0 and k[1] else f"c{k[0]}\n{k[1]}" for k in keys],
        "series": [(emap.current.label, [current[k].tps for k in keys], [current[k].accept_length for k in keys])],
    }
    if emap.previous and previous:
        out["series"].append(
            (emap.previous.label,
             [previous[k].tps if k in previous else math.nan for k in keys],
             [previous[k].accept_length if k in previous else math.nan for k in keys])
        )
    return out
