"""A speculative-decoding card's rechecks and the served half of its honest note: per variant (the spec's
[card.honest_note.served] candidate and baseline), one llm-inference-bench file per server boot; the
verdict is computed (Welch's t-test and TOST, evidence/stats.py), never asserted — and refused, with a
problem saying why, on values the bench did not record or that are all zero. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from release.card.evidence import Evidence, EvidenceMap, Served
from release.card.speculative.bench import Cell, CellKey
from release.card.speculative.derived import cell_accept_length
from release.card.text import DASH, Claim, Line, Table, accept_length, accept_rate, cell, mean, span, tps
from release.errors import Problem
from release.evidence.bench_metrics import ACCEPT_LENGTH
from release.evidence.stats import WELCH, Comparison, compare, refusal
from release.staged.names import CARD_NAME

# The served metric (`[card.honest_note.served] field`, a bench cell's field): how the card names it, its
# noun in the honest note's clause, and how its values print.
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
# What the honest note's picture shows of the verdict (evidence/stats.py Comparison's fields).
NOTE_CHART_FIGURES = (
    "verdict",
    "mean_candidate",
    "mean_baseline",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "tost_p_value",
    "margin",
    "margin_fraction",
)
METRIC_FORMAT: dict[str, Callable[[float], str]] = {
    "aggregate_tps": tps,
    "server_spec_accept_length": accept_length,
    "server_spec_accept_rate": accept_rate,
}


def _labelled_cells(
    files: Sequence[str], emap: EvidenceMap, evidence: Evidence, problems: list[Problem], what: str
) -> list[tuple[str, Cell]]:
    """Every cell of the files with the variant its file measured, as the spec's served map says; its acceptance
    length as the card reads it (recorded, else derived, else None)."""
    served = emap.served
    out = []
    for path in files:
        run = evidence.bench.get(path)
        if run is None:
            problems.append(Problem(path, f"the card's {what} file is missing or invalid"))
            continue
        label = served.label_of(path) if served else None
        if label is None:
            problems.append(
                Problem(
                    path,
                    f"the card's {what} file is not listed under exactly one of "
                    "[card.honest_note.served] candidate / baseline; say which variant it measured",
                )
            )
            continue
        out += [
            (label, {**c, ACCEPT_LENGTH: cell_accept_length(c, path, emap.derived_length, emap.acceptance_length)})
            for c in run.cells
        ]
    return out


def _labels(served: Served | None, found: Iterable[str]) -> list[str]:
    present = set(found)
    return [t for t in ([served.candidate.label, served.baseline.label] if served else []) if t in present]


def comparison(
    served: Served, cells: Sequence[tuple[str, Cell]], field_name: str, problems: list[Problem]
) -> Comparison | None:
    """Welch's t-test and TOST of the candidate's values against the baseline's (None: under 2 values a side,
    or values that cannot be compared — then a problem says why)."""
    a = [_value(c, field_name) for label, c in cells if label == served.candidate.label]
    b = [_value(c, field_name) for label, c in cells if label == served.baseline.label]
    for side, values in ((served.candidate, a), (served.baseline, b)):
        reason = refusal(values, side.label)
        if reason is not None:
            problem = Problem(f"{CARD_NAME} honest note", f"{FIELD_NAME[field_name]} not compared: {reason}")
            if problem not in problems:
                problems.append(problem)
            return None
    if len(a) < 2 or len(b) < 2:
        return None
    return compare(a, b, margin_fraction=served.margin)


def _value(c: Cell, field_name: str) -> float | None:
    return None if c.get(field_name) is None else float(c[field_name])


def recheck_table(
    emap: EvidenceMap, evidence: Evidence, problems: list[Problem], draft_model: str
) -> tuple[Table | None, Line | None]:
    if not emap.rechecks:
        return None, None
    cells = _labelled_cells(emap.rechecks, emap, evidence, problems, "recheck")
    if not cells or emap.served is None:
        return None, None
    served = emap.served
    field_name = served.field
    groups: dict[CellKey, list[tuple[str, Cell]]] = {}
    for label, c in cells:
        groups.setdefault((int(c["concurrency"]), int(c["context_tokens"])), []).append((label, c))
    verdict_of = {
        "server_spec_accept_length": "acc. len",
        "server_spec_accept_rate": "acc. rate",
        "aggregate_tps": "tok/s",
    }
    header = (
        "Concurrency",
        "Context",
        draft_model,
        "Runs",
        "Accept length min–max",
        "Accept length mean",
        "tok/s min–max",
        "tok/s mean",
        f"Verdict ({verdict_of[field_name]})",
    )
    rows = []
    for key in sorted(groups, key=lambda k: (k[1], k[0])):
        group = groups[key]
        result = comparison(served, group, field_name, problems)
        verdict = result.verdict if result else DASH
        for label in _labels(served, (t for t, _ in group)):
            runs = [c for t, c in group if t == label]
            lengths = [c[ACCEPT_LENGTH] for c in runs]
            rates = [float(c["aggregate_tps"]) for c in runs]
            known = [v for v in lengths if v is not None]
            length_cells = (
                (span(known, accept_length), accept_length(mean(known))) if len(known) == len(lengths) else (DASH, DASH)
            )
            rows.append(
                (
                    str(key[0]),
                    str(key[1]),
                    cell(label),
                    str(len(runs)),
                    *length_cells,
                    span(rates, tps),
                    tps(mean(rates)),
                    verdict,
                )
            )
    table = Table("rechecks", header, tuple(rows), frozenset({0, 1, 3, 4, 5, 6, 7}), key_columns=3)
    fmt = METRIC_FORMAT[field_name]
    parts = []
    for label in _labels(served, (t for t, _ in cells)):
        values = [v for t, c in cells if t == label and (v := _value(c, field_name)) is not None]
        parts.append(
            f"{cell(label)} {span(values, fmt)} (mean {fmt(mean(values))})" if values else f"{cell(label)} not recorded"
        )
    noun = "file" if len(emap.rechecks) == 1 else "files"
    overall = comparison(served, cells, field_name, problems)
    verdict = (
        overall.sentence("", cell(served.candidate.label), cell(served.baseline.label))
        if overall
        else f"not tested: {WELCH} needs at least 2 values per {draft_model.lower()}."
    )
    line = Line(f"Rechecks ({len(emap.rechecks)} {noun}, {FIELD_NAME[field_name]})", f"{' vs '.join(parts)}. {verdict}")
    return table, line


@dataclass(frozen=True)
class ServedFacts:
    """The honest note's served half: the claim, its verdict (None: not tested), and the picture's series."""

    claim: Claim | None = None
    verdict: Comparison | None = None
    series: dict[str, Any] = field(default_factory=dict)  # card/chart.py render "note"; empty: no picture


def served_facts(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> ServedFacts:
    """The honest note's served half with its verdict, e.g. `but did not show a served acceptance gain` with
    `adapter 3.01–3.30 vs stock 3.28; inconclusive: neither a difference (Welch's t-test, p = …) nor …`."""
    served = emap.served
    if served is None:
        return ServedFacts()
    cells = _labelled_cells(served.files, emap, evidence, problems, "served-metric evidence")
    where = CARD_NAME + " honest note"
    for side in (served.candidate, served.baseline):
        if served.rechecks is not None and len(side.files) != served.rechecks:
            problems.append(
                Problem(
                    where,
                    f"claims {served.rechecks} rechecks but the {side.label} evidence has {len(side.files)} file(s): "
                    f"{', '.join(side.files) or 'none'}; one file per server boot",
                )
            )
    a = [_value(c, served.field) for label, c in cells if label == served.candidate.label]
    b = [_value(c, served.field) for label, c in cells if label == served.baseline.label]
    for side, values in ((served.candidate, a), (served.baseline, b)):
        if not values:
            problems.append(Problem(where, f"no {side.label} cell in {', '.join(side.files) or 'the evidence'}"))
    if not a or not b:
        return ServedFacts()
    fmt = METRIC_FORMAT[served.field]
    noun = SERVED_NOUN[served.field]
    measure = f"served {FIELD_NAME[served.field]}"
    result = comparison(served, cells, served.field, problems)
    if refusal(a, "") or refusal(b, ""):
        return ServedFacts()  # comparison() said why
    candidate = [v for v in a if v is not None]  # all of them: refusal() found no None
    baseline = [v for v in b if v is not None]
    numbers = (
        f"{cell(served.candidate.label)} {span(candidate, fmt)} vs {cell(served.baseline.label)} {span(baseline, fmt)}"
    )
    derived = emap.derived_length
    if served.field == ACCEPT_LENGTH and derived is not None and set(served.files) & set(derived.files):
        numbers += f", derived as acceptance rate × {derived.num_speculative_tokens}"  # the bench did not record it
    if result is None:
        return ServedFacts(
            Claim(
                measure,
                f"was not tested for served {noun}",
                f"{numbers}; {WELCH} needs at least 2 values per side",
                "but",
            )
        )
    clause = result.clause("", cell(served.candidate.label), cell(served.baseline.label))
    joiner, finding = {
        "tied": ("but", f"produced no served {noun} gain"),
        "inconclusive": ("but", f"did not show a served {noun} gain"),
        "different": ("and", f"raised served {noun}" if result.difference > 0 else f"lowered served {noun}"),
    }[result.verdict]
    series = {
        "name": FIELD_NAME[served.field],
        "sides": [(served.candidate.label, candidate), (served.baseline.label, baseline)],
        "comparison": {k: getattr(result, k) for k in NOTE_CHART_FIGURES},
    }
    return ServedFacts(Claim(measure, finding, f"{numbers}; {clause}", joiner), result, series)
