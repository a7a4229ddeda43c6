"""What the card states about the evidence, computed once and shared by the renderer and the lint.

Every number the card shows in its serving, benchmark, ledger and files sections, and the served half
of the honest note, is built here as a `Table` or a `Line` from the parsed evidence (bench JSONs,
results.tsv, the launcher, the manifest). The renderer prints them; `lint` parses the card back with
markdown-it-py and compares each cell and line with what these same functions compute from the
staged files, so a hand-edited number is caught and reported with both values.

Which bench file plays which part (current, previous, rechecks) is the spec's call; the card carries
that choice as an `EvidenceMap` in a hidden comment so that `verify`, which sees only the staged
folder, can recompute everything without the spec.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..checks.bench import BenchRun
from ..checks.launcher import Launcher
from ..checks.ledger import Ledger
from ..errors import Problem
from ..manifest import CARD_NAME, DEFAULT_CHART

MAP_MARK = "hf-release:evidence"
MAP_COMMENT = re.compile(r"<!--\s*hf-release:evidence\s+(\{.*?\})\s*-->", re.DOTALL)

# Section headings (H2) every card has; lint requires each to be present and non-empty.
SUMMARY = "Summary"
HONEST_NOTE = "Honest note"
SERVING = "Serving config"
BENCHMARK = "Benchmark"
LEDGER = "Ledger"
FILES = "Files"
USAGE = "How to use this version"
LINEAGE = "Lineage & credit"
LICENSE = "License"
CITATION = "Citation"
REQUIRED_SECTIONS = (SUMMARY, HONEST_NOTE, SERVING, BENCHMARK, LEDGER, FILES, USAGE, LINEAGE, LICENSE, CITATION)

DASH = "—"  # a cell with no value (e.g. a cell the previous version did not measure)

# What `server_spec_accept_length` counts, as the card states it (see formats.md: llm-inference-bench
# divides accepted by drafts, vLLM's own `bench serve` adds 1 for the bonus token).
ACCEPTANCE_CONVENTIONS = {
    "accepted-per-draft": (
        "accepted draft tokens per drafting step (accepted ÷ drafts from vLLM's spec-decode counters, "
        "llm-inference-bench's convention: no +1 for the bonus token; vLLM's `bench serve` would report "
        "1 + this value)"
    ),
    "tokens-per-step": (
        "tokens emitted per drafting step (1 + accepted ÷ drafts, vLLM `bench serve`'s convention: "
        "includes the bonus token; llm-inference-bench would report this value − 1)"
    ),
}
FIELD_NAME = {
    "server_spec_accept_length": "acceptance length",
    "server_spec_accept_rate": "acceptance rate",
    "aggregate_tps": "tok/s",
}
SERVED_NOUN = {
    "server_spec_accept_length": "acceptance",
    "server_spec_accept_rate": "acceptance-rate",
    "aggregate_tps": "throughput",
}


class Md(str):
    """Markdown written by hf-release itself: the template prints it as is (no template-syntax escaping)."""


# --- formatting: the one place a number becomes text ---------------------------------------------

_TEMPLATE_OPEN = re.compile(r"\{(?=[{%#])")


def esc(text: str) -> str:
    """Data → Markdown that cannot be mistaken for template syntax: `{{` prints as `{{`, via `&#123;{`."""
    return _TEMPLATE_OPEN.sub("&#123;", text)


def cell(text: str) -> str:
    """Text from data (a ledger description, a tag) for a table cell or a line: one line, template
    syntax, HTML and pipes escaped, so it shows as written and cannot break the table."""
    flat = " ".join(str(text).split()).replace("<", "&lt;").replace(">", "&gt;")
    return esc(flat).replace("|", "\\|")


def code(text: str) -> str:
    """An inline code span holding `text` exactly (fence longer than any backtick run inside)."""
    text = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_cell(text: str) -> str:
    return code(text).replace("|", "\\|")


def link(label: str, path_in_repo: str) -> str:
    """A relative link to a file of the release."""
    return f"[{cell(label)}]({quote(path_in_repo, safe='/._-~')})"


def number(value: float | int) -> str:
    """A number as stated in the spec or the ledger: shortest round-trip text (0.57, 47.9, 115.0)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def tps(value: float) -> str:
    return f"{value:.1f}"


def seconds(value: float) -> str:
    return f"{value:.2f}"


def millis(value_s: float) -> str:
    return f"{value_s * 1000:.1f}"


def accept_length(value: float) -> str:
    return f"{value:.2f}"


def accept_rate(value: float) -> str:
    """A rate recorded as a fraction (0–1; llm-inference-bench) or as a percentage (> 1) → percent."""
    fraction = value if value <= 1 else value / 100
    return f"{fraction * 100:.1f}%"


def delta_pct(new: float, old: float) -> str:
    if old == 0:
        return DASH
    return f"{(new - old) / old * 100:+.1f}%"


def span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """min–max of values as the card prints it; one value when both ends print the same."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


METRIC_FORMAT: dict[str, Callable[[float], str]] = {
    "aggregate_tps": tps,
    "server_spec_accept_length": accept_length,
    "server_spec_accept_rate": accept_rate,
}


# --- tables and lines ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A Markdown table the card prints and the lint reads back cell by cell."""

    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: frozenset[int] = frozenset()  # right-aligned (numeric) columns
    key_columns: int = 2  # how many leading cells name a row in lint messages

    def markdown(self) -> Md:
        rule = ["---:" if i in self.right else "---" for i in range(len(self.header))]
        lines = [self.header, tuple(rule), *self.rows]
        return Md("\n".join("| " + " | ".join(row) + " |" for row in lines))

    def parsed(self) -> list[list[str]]:
        """The header and rows as markdown-it-py returns a table's cells (escaped pipes unescaped)."""
        return [[c.replace("\\|", "|") for c in row] for row in (self.header, *self.rows)]


@dataclass(frozen=True)
class Line:
    """A computed sentence, printed as a paragraph `**label:** text`."""

    label: str
    text: str

    @property
    def prefix(self) -> str:
        return f"**{self.label}:**"

    def markdown(self) -> Md:
        return Md(f"{self.prefix} {self.text}")


@dataclass
class Expected:
    """What one section must show: these tables in this order, these lines, these phrases."""

    tables: list[Table] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)


# --- the evidence map ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    label: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Served:
    field: str
    files: tuple[str, ...]
    candidate: str
    baseline: str
    rechecks: int  # what the note claims


@dataclass(frozen=True)
class EvidenceMap:
    """Which staged file plays which part in the card (from the spec, resolved to paths)."""

    current: Series | None
    previous: Series | None = None
    rechecks: tuple[str, ...] = ()
    served: Served | None = None
    acceptance_length: str = "accepted-per-draft"
    launcher: str | None = None
    ledger: str | None = None
    chart: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"acceptance_length": self.acceptance_length}
        if self.current:
            out["current"] = {"label": self.current.label, "files": list(self.current.files)}
        if self.previous:
            out["previous"] = {"label": self.previous.label, "files": list(self.previous.files)}
        if self.rechecks:
            out["rechecks"] = list(self.rechecks)
        if self.served:
            s = self.served
            out["served"] = {"field": s.field, "files": list(s.files), "candidate": s.candidate,
                             "baseline": s.baseline, "rechecks": s.rechecks}
        for key in ("launcher", "ledger", "chart"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out

    def comment(self) -> Md:
        body = json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
        return Md(f"<!-- {MAP_MARK} {body.replace('--', '-&#45;')} -->")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvidenceMap:
        def series(key: str) -> Series | None:
            value = data.get(key)
            return Series(str(value["label"]), tuple(map(str, value["files"]))) if value else None

        served = data.get("served")
        return cls(
            current=series("current"),
            previous=series("previous"),
            rechecks=tuple(map(str, data.get("rechecks", ()))),
            served=Served(str(served["field"]), tuple(map(str, served["files"])), str(served["candidate"]),
                          str(served["baseline"]), int(served["rechecks"])) if served else None,
            acceptance_length=str(data.get("acceptance_length", "accepted-per-draft")),
            launcher=data.get("launcher"),
            ledger=data.get("ledger"),
            chart=data.get("chart"),
        )

    @classmethod
    def from_card(cls, text: str) -> EvidenceMap | None:
        match = MAP_COMMENT.search(text)
        if not match:
            return None
        try:
            data = json.loads(match.group(1).replace("-&#45;", "--"))
            if data.get("acceptance_length", "accepted-per-draft") not in ACCEPTANCE_CONVENTIONS:
                return None
            if data.get("served") and data["served"].get("field") not in SERVED_NOUN:
                return None
            return cls.from_dict(data)
        except (ValueError, KeyError, TypeError):
            return None


def match_files(globs: Iterable[str], paths: Iterable[str], where: str) -> tuple[tuple[str, ...], list[Problem]]:
    """The paths the globs name (in path order), and a problem for each glob that names none."""
    paths = sorted(paths)
    found: list[str] = []
    problems = []
    for pattern in globs:
        hits = [p for p in paths if fnmatch.fnmatchcase(p, pattern)]
        if not hits:
            problems.append(Problem(where, f"{pattern!r} matches no bench file of the release ({', '.join(paths) or 'none'})"))
        found += [h for h in hits if h not in found]
    return tuple(sorted(found)), problems


def evidence_map(card: dict[str, Any], spec_name: str, evidence: Evidence) -> tuple[EvidenceMap, list[Problem]]:
    """Resolve the spec's [card] globs against the release's bench files."""
    problems: list[Problem] = []
    bench_paths = list(evidence.bench)
    bench = card["bench"]

    def series(key: str) -> Series | None:
        if key not in bench:
            return None
        files, found = match_files(bench[key]["files"], bench_paths, f"{spec_name} card.bench.{key}.files")
        problems.extend(found)
        return Series(bench[key]["label"], files)

    current, previous = series("current"), series("previous")
    rechecks, found = match_files(bench.get("rechecks", ()), bench_paths, f"{spec_name} card.bench.rechecks")
    problems.extend(found)
    served = None
    spec_served = card["honest_note"].get("served")
    if spec_served:
        files, found = match_files(spec_served["evidence"], bench_paths, f"{spec_name} card.honest_note.served.evidence")
        problems.extend(found)
        served = Served(spec_served["field"], files, spec_served["candidate"], spec_served["baseline"], spec_served["rechecks"])
    launchers, ledgers = sorted(evidence.launchers), sorted(evidence.ledgers)
    return (
        EvidenceMap(
            current=current,
            previous=previous,
            rechecks=rechecks,
            served=served,
            acceptance_length=bench.get("acceptance_length", "accepted-per-draft"),
            launcher=launchers[0] if len(launchers) == 1 else None,
            ledger=ledgers[0] if len(ledgers) == 1 else None,
            chart=bench.get("chart", DEFAULT_CHART),
        ),
        problems,
    )


# --- the evidence ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileRow:
    path_in_repo: str
    size: int
    sha256: str
    role: str
    md5: str | None = None


@dataclass
class Evidence:
    """The parsed artifacts the card is computed from (ctx.evidence in build, re-parsed in verify)."""

    launchers: dict[str, Launcher] = field(default_factory=dict)
    ledgers: dict[str, Ledger] = field(default_factory=dict)
    bench: dict[str, BenchRun] = field(default_factory=dict)
    files: list[FileRow] = field(default_factory=list)  # every release file but the card itself


# --- the facts -------------------------------------------------------------------------------------

Cell = dict[str, Any]
CellKey = tuple[int, int]  # (concurrency, context_tokens)


@dataclass(frozen=True)
class Facts:
    """Everything the card computes; `expected()` is what lint checks each section against."""

    map: EvidenceMap
    flags: Table | None
    spec_config: str | None
    launch_order: Line | None
    settings: Line | None
    sources: Line | None
    bench: Table | None
    bench_delta: Line | None
    rechecks: Table | None
    recheck_line: Line | None
    ledger: Table | None
    ledger_line: Line | None
    files: Table
    served_clause: str | None
    convention: str
    chart_series: dict[str, Any] = field(default_factory=dict)

    def expected(self) -> dict[str, Expected]:
        out = {name: Expected() for name in REQUIRED_SECTIONS}

        def add(section: str, *items: Table | Line | None) -> None:
            for item in items:
                if isinstance(item, Table):
                    out[section].tables.append(item)
                elif isinstance(item, Line):
                    out[section].lines.append(item)

        add(SERVING, self.flags, self.launch_order)
        add(BENCHMARK, self.settings, self.sources, self.bench, self.bench_delta, self.rechecks, self.recheck_line)
        add(LEDGER, self.ledger, self.ledger_line)
        add(FILES, self.files)
        if self.served_clause:
            out[HONEST_NOTE].phrases.append(self.served_clause)
        return out


def derive(emap: EvidenceMap, evidence: Evidence) -> tuple[Facts, list[Problem]]:
    """Compute every table and line of the card from the evidence; problems say what cannot be computed."""
    problems: list[Problem] = []
    flags, spec_config, order = _serving(emap, evidence, problems)
    current = _series_cells(emap.current, evidence, problems) if emap.current else {}
    previous = _series_cells(emap.previous, evidence, problems) if emap.previous else {}
    bench, delta = _bench_table(emap, current, previous)
    rechecks, recheck_line = _recheck_table(emap, evidence, problems)
    ledger, ledger_line = _ledger(emap, evidence, problems)
    facts = Facts(
        map=emap,
        flags=flags,
        spec_config=spec_config,
        launch_order=order,
        settings=_settings(emap, evidence),
        sources=_sources(emap),
        bench=bench,
        bench_delta=delta,
        rechecks=rechecks,
        recheck_line=recheck_line,
        ledger=ledger,
        ledger_line=ledger_line,
        files=_files_table(evidence.files),
        served_clause=_served_clause(emap, evidence, problems),
        convention=ACCEPTANCE_CONVENTIONS.get(emap.acceptance_length, ACCEPTANCE_CONVENTIONS["accepted-per-draft"]),
        chart_series=_chart_series(emap, current, previous),
    )
    return facts, problems


# --- serving ---------------------------------------------------------------------------------------

LOCAL_PATH = re.compile(
    r"(?<![\w.~%-])(?:/(?:home|mnt|root|tmp|Users|media|scratch|data|workspace|nfs|lustre|gpfs|private|var|opt|srv|net)/"
    r"|~/|file://|[A-Za-z]:\\)"
)
LOCAL_PATH_SHOWN = "<local path>"


def public_value(value: str) -> str:
    """A launcher value fit for a public card: a local filesystem path is replaced, never printed."""
    return LOCAL_PATH_SHOWN if LOCAL_PATH.search(value) else value


def _serving(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, str | None, Line | None]:
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
    spec_config = public_value(raw) if isinstance(raw, str) else json.dumps(launcher.spec_config, separators=(",", ":"))
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


def _series_cells(series: Series, evidence: Evidence, problems: list[Problem]) -> dict[CellKey, Measured]:
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


def _bench_table(emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]) -> tuple[Table | None, Line | None]:
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


def _recheck_table(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
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


def _served_clause(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> str | None:
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


def _settings(emap: EvidenceMap, evidence: Evidence) -> Line | None:
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


def _sources(emap: EvidenceMap) -> Line | None:
    parts = []
    for series in (emap.current, emap.previous):
        if series:
            parts.append(f"{cell(series.label)}: " + ", ".join(link(p, p) for p in series.files))
    if emap.rechecks:
        parts.append("rechecks: " + ", ".join(link(p, p) for p in emap.rechecks))
    return Line("Evidence", "; ".join(parts)) if parts else None


def _chart_series(emap: EvidenceMap, current: dict[CellKey, Measured], previous: dict[CellKey, Measured]) -> dict[str, Any]:
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


# --- ledger and files ------------------------------------------------------------------------------


def _ledger(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
    if emap.ledger is None:
        return None, None
    ledger = evidence.ledgers.get(emap.ledger)
    if ledger is None:
        problems.append(Problem(emap.ledger, "the card quotes this ledger but it is not a valid ledger of the release"))
        return None, None
    header = ("Commit", *(cell(c) for c in ledger.metric_columns), "Status", "Description")
    rows = tuple(
        (code_cell(r.commit), *(number(r.metrics[c]) for c in ledger.metric_columns), cell(r.status), cell(r.description))
        for r in ledger.rows
    )
    table = Table("ledger", header, rows, frozenset(range(1, 1 + len(ledger.metric_columns))), key_columns=1)
    base = ledger.baseline
    counts = {s: sum(1 for r in ledger.trials if r.status == s) for s in ("keep", "discard", "crash")}
    metrics = ", ".join(f"{cell(c)} {number(base.metrics[c])}" for c in ledger.metric_columns)
    n = len(ledger.trials)
    trials = "trial" if n == 1 else "trials"
    text = (f"baseline {code(base.commit)} ({metrics}); {n} single-knob {trials}: "
            f"{counts['keep']} keep, {counts['discard']} discard, {counts['crash']} crash")
    return table, Line("Summary", text)


def _files_table(files: Sequence[FileRow]) -> Table:
    rows = []
    with_md5 = any(f.md5 for f in files)
    for f in sorted(files, key=lambda f: f.path_in_repo):
        row = [link(f.path_in_repo, f.path_in_repo), f"{f.size:,} B", code_cell(f.sha256[:12])]
        if with_md5:
            row.append(code_cell(f.md5[:12]) if f.md5 else DASH)
        row.append(cell(f.role))
        rows.append(tuple(row))
    header = ("File", "Size", "sha256", *(("md5",) if with_md5 else ()), "Role")
    return Table("files", header, tuple(rows), frozenset({1}), key_columns=1)
