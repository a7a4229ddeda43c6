"""The speculative-decoding parts of a card, from the evidence: the serving flags and launch order
read from the launcher, the benchmark table (current beside previous), the rechecks and their
verdict, the served half of the honest note, and the chart's series. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..checks.bench import BenchRun
from ..checks.launcher import Launcher
from ..errors import Problem
from ..evidence.stats import WELCH, Comparison, compare
from ..names import CARD_NAME
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


def _labelled_cells(files: Sequence[str], served: Served | None, evidence: Evidence, problems: list[Problem], what: str) -> list[tuple[str, Cell]]:
    """Every cell of the files with the variant its file measured, as the spec's served map says."""
    out = []
    for path in files:
        run = evidence.bench.get(path)
        if run is None:
            problems.append(Problem(path, f"the card's {what} file is missing or invalid"))
            continue
        label = served.label_of(path) if served else None
        if label is None:
            problems.append(Problem(path, f"the card's {what} file is not listed under exactly one of "
                                          "[card.honest_note.served] candidate / baseline; say which variant it measured"))
            continue
        out += [(label, c) for c in run.cells]
    return out


def _labels(served: Served | None, found: Iterable[str]) -> list[str]:
    present = set(found)
    return [t for t in ([served.candidate.label, served.baseline.label] if served else []) if t in present]


def comparison(served: Served, cells: Sequence[tuple[str, Cell]], field_name: str) -> Comparison | None:
    """Welch's t-test and TOST of the candidate's values against the baseline's (None: under 2 values a side)."""
    a = [float(c[field_name]) for label, c in cells if label == served.candidate.label]
    b = [float(c[field_name]) for label, c in cells if label == served.baseline.label]
    if len(a) < 2 or len(b) < 2:
        return None
    return compare(a, b, margin_fraction=served.margin)


def recheck_table(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
    if not emap.rechecks:
        return None, None
    cells = _labelled_cells(emap.rechecks, emap.served, evidence, problems, "recheck")
    if not cells or emap.served is None:
        return None, None
    served = emap.served
    field_name = served.field
    groups: dict[CellKey, list[tuple[str, Cell]]] = {}
    for label, c in cells:
        groups.setdefault((int(c["concurrency"]), int(c["context_tokens"])), []).append((label, c))
    verdict_of = {"server_spec_accept_length": "acc. len", "server_spec_accept_rate": "acc. rate", "aggregate_tps": "tok/s"}
    header = ("Concurrency", "Context", "Drafter", "Runs", "Accept length min–max", "Accept length mean",
              "tok/s min–max", "tok/s mean", f"Verdict ({verdict_of[field_name]})")
    rows = []
    for key in sorted(groups, key=lambda k: (k[1], k[0])):
        group = groups[key]
        result = comparison(served, group, field_name)
        verdict = result.verdict if result else DASH
        for label in _labels(served, (t for t, _ in group)):
            runs = [c for t, c in group if t == label]
            lengths = [float(c["server_spec_accept_length"]) for c in runs]
            rates = [float(c["aggregate_tps"]) for c in runs]
            rows.append((str(key[0]), str(key[1]), cell(label), str(len(runs)), span(lengths, accept_length),
                         accept_length(mean(lengths)), span(rates, tps), tps(mean(rates)), verdict))
    table = Table("rechecks", header, tuple(rows), frozenset({0, 1, 3, 4, 5, 6, 7}), key_columns=3)
    fmt = METRIC_FORMAT[field_name]
    parts = []
    for label in _labels(served, (t for t, _ in cells)):
        values = [float(c[field_name]) for t, c in cells if t == label]
        parts.append(f"{cell(label)} {span(values, fmt)} (mean {fmt(mean(values))})")
    noun = "file" if len(emap.rechecks) == 1 else "files"
    overall = comparison(served, cells, field_name)
    verdict = (overall.sentence("", cell(served.candidate.label), cell(served.baseline.label)) if overall
               else f"not tested: {WELCH} needs at least 2 values per drafter.")
    line = Line(f"Rechecks ({len(emap.rechecks)} {noun}, {FIELD_NAME[field_name]})", f"{' vs '.join(parts)}. {verdict}")
    return table, line


def served_clause(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[str | None, Comparison | None]:
    """The honest note's served half with its verdict, e.g. `but did not show a served acceptance gain
    (3.01–3.30 vs stock 3.28; inconclusive: neither a difference (Welch's t-test, p = …) nor …)`."""
    served = emap.served
    if served is None:
        return None, None
    cells = _labelled_cells(served.files, served, evidence, problems, "served-metric evidence")
    where = CARD_NAME + " honest note"
    for side in (served.candidate, served.baseline):
        if served.rechecks is not None and len(side.files) != served.rechecks:
            problems.append(
                Problem(where, f"claims {served.rechecks} rechecks but the {side.label} evidence has {len(side.files)} file(s): "
                               f"{', '.join(side.files) or 'none'}; one file per server boot")
            )
    a = [float(c[served.field]) for label, c in cells if label == served.candidate.label]
    b = [float(c[served.field]) for label, c in cells if label == served.baseline.label]
    for side, values in ((served.candidate, a), (served.baseline, b)):
        if not values:
            problems.append(Problem(where, f"no {side.label} cell in {', '.join(side.files) or 'the evidence'}"))
    if not a or not b:
        return None, None
    fmt = METRIC_FORMAT[served.field]
    noun = SERVED_NOUN[served.field]
    numbers = f"{span(a, fmt)} vs {cell(served.baseline.label)} {span(b, fmt)}"
    result = comparison(served, cells, served.field)
    if result is None:
        return f"and its served {noun} is not tested ({numbers}; {WELCH} needs at least 2 values per side)", None
    clause = result.clause("", cell(served.candidate.label), cell(served.baseline.label))
    opening = {
        "tied": f"but produced no served {noun} gain",
        "inconclusive": f"but did not show a served {noun} gain",
        "different": f"and raised served {noun}" if result.difference > 0 else f"and lowered served {noun}",
    }[result.verdict]
    return f"{opening} ({numbers}; {clause})", result


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
