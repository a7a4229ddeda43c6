"""The speculative-decoding part of a card: what a model served with vLLM speculative decoding shows
beyond the generic card, from the same evidence — the launcher's --speculative-config, the
llm-inference-bench benchmark (speculative_bench.py), the rechecks and the served half of the honest
note (speculative_rechecks.py), what the acceptance length counts, the bench cells in the model-index,
and the lineage labels its kind gives.

A kind shows it through `speculative_part(words)`, naming its draft model and lineage in its own words: a draft model's
card always, a transformers model's when its spec gives a bench or a served A/B, or its launcher a --speculative-config
(which the default template leaves out). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from release.card.evidence import Evidence, EvidenceMap
from release.card.headings import BENCHMARK, HONEST_NOTE
from release.card.results import evidence_url
from release.card.speculative.bench import (
    Measured,
    bench_table,
    chart_series,
    series_cells,
    settings_line,
    sources_line,
)
from release.card.speculative.derived import K_FROM_LAUNCHER, K_FROM_SPEC, DerivedLength, cell_accept_length
from release.card.speculative.rechecks import SERVED_NOUN, recheck_table, served_facts
from release.card.text import Claim, Expected, Line, Md, Table, code, esc, public_value
from release.errors import Problem
from release.evidence.bench_metrics import ACCEPT_LENGTH, MODEL_INDEX_METRICS
from release.evidence.stats import Comparison
from release.kinds.kind import CardPart

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
DEFAULT_CONVENTION = "accepted-per-draft"
K_NAMES = {
    K_FROM_LAUNCHER: "num_speculative_tokens, from the launcher's `--speculative-config`",
    K_FROM_SPEC: "num_speculative_tokens, from the spec's [card.bench]",
}
TOKENS_PER_STEP_METRIC = "Acceptance length (1 + accepted ÷ drafts)"  # the model-index name under that convention


@dataclass(frozen=True)
class Words:
    """What a kind calls the model that drafts (the rechecks' column) and its [card.lineage] roles' labels."""

    draft_model: str
    lineage_labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SpeculativeFacts:
    """Every table and line of the part, computed once with the card's generic facts."""

    spec_config: str | None
    settings: Line | None
    sources: Line | None
    bench: Table | None
    bench_delta: Line | None
    rechecks: Table | None
    recheck_line: Line | None
    served_claim: Claim | None
    convention: str
    served_verdict: Comparison | None = None
    chart_series: dict[str, Any] = field(default_factory=dict)
    note_series: dict[str, Any] = field(default_factory=dict)  # the honest note's picture (card/chart.py)

    @property
    def served_clause(self) -> str | None:
        """The served claim as one clause: `but did not show a served acceptance gain (adapter 3.01–3.30 vs …)`."""
        return self.served_claim.clause if self.served_claim else None

    def expected(self) -> dict[str, Expected]:
        tables = [t for t in (self.bench, self.rechecks) if t is not None]
        lines = [
            line for line in (self.settings, self.sources, self.bench_delta, self.recheck_line) if line is not None
        ]
        out = {BENCHMARK: Expected(tables, lines)} if tables or lines else {}
        if self.served_claim:
            out[HONEST_NOTE] = Expected(phrases=self.served_claim.phrases)
        return out

    def variables(self, card: dict[str, Any], emap: EvidenceMap) -> dict[str, Any]:
        """`serving.spec_config`, `note.served` and the `bench` namespace (documented in templates/modelcard.md.j2)."""
        series = esc(emap.current.label if emap.current else "") + (
            f" vs {esc(emap.previous.label)}" if emap.previous else ""
        )
        chart = Md(f"![{series}: tok/s and acceptance length per cell]({emap.chart})") if emap.chart else None
        note_chart = None
        if emap.note_chart and self.note_series and emap.served:
            sides = f"{esc(emap.served.candidate.label)} vs {esc(emap.served.baseline.label)}"
            note_chart = Md(
                f"![{sides}: each run's {self.note_series['name']}, the means, and the difference's 95% CI "
                f"against the tie margin]({emap.note_chart})"
            )
        return {
            "serving": {
                "spec_config": Md(f"```text\n--speculative-config '{self.spec_config}'\n```")
                if self.spec_config
                else None
            },
            "note": {
                "served": Md(self.served_claim.clause) if self.served_claim else None,
                "served_claim": self.served_claim,
                "chart": note_chart,
            },
            "bench": {
                "text": card["bench"]["text"],
                "settings": self.settings.markdown() if self.settings else None,
                "sources": self.sources.markdown() if self.sources else None,
                "table": self.bench.markdown() if self.bench else None,
                "delta": self.bench_delta.markdown() if self.bench_delta else None,
                "convention": Md(
                    f"**Acceptance length** = {self.convention}. **Acceptance rate** = accepted ÷ drafted tokens."
                ),
                "rechecks": self.rechecks.markdown() if self.rechecks else None,
                "recheck_line": self.recheck_line.markdown() if self.recheck_line else None,
                "chart": chart,
            }
            if "bench" in card
            else None,
        }


def derive(emap: EvidenceMap, evidence: Evidence, problems: list[Problem], words: Words) -> SpeculativeFacts:
    current = series_cells(emap.current, emap, evidence, problems) if emap.current else {}
    previous = series_cells(emap.previous, emap, evidence, problems) if emap.previous else {}
    bench, delta = bench_table(emap, current, previous)
    rechecks, recheck_line = recheck_table(emap, evidence, problems, words.draft_model)
    served = served_facts(emap, evidence, problems)
    return SpeculativeFacts(
        spec_config=_spec_config(emap, evidence),
        settings=settings_line(emap, evidence),
        sources=sources_line(emap),
        bench=bench,
        bench_delta=delta,
        rechecks=rechecks,
        recheck_line=recheck_line,
        served_claim=served.claim,
        convention=ACCEPTANCE_CONVENTIONS.get(emap.acceptance_length, ACCEPTANCE_CONVENTIONS[DEFAULT_CONVENTION])
        + derived_sentence(emap),
        served_verdict=served.verdict,
        chart_series=chart_series(emap, current, previous),
        note_series=served.series,
    )


def derived_sentence(emap: EvidenceMap) -> str:
    """How the card's acceptance length was derived where the bench did not record it ("" where it did)."""
    derived = emap.derived_length
    if derived is None:
        return ""
    files = ", ".join(code(p) for p in derived.files)
    plus = ", + 1 for the bonus token" if emap.acceptance_length == "tokens-per-step" else ""
    return (
        f". Not recorded in {files} (llm-inference-bench's duration mode writes 0.0 there and measures only the "
        f"acceptance rate): there it is derived, acceptance rate × {derived.num_speculative_tokens} "
        f"({K_NAMES.get(derived.k_from) or esc(derived.k_from)}){plus}"
    )  # a source this version does not name: as recorded


def _spec_config(emap: EvidenceMap, evidence: Evidence) -> str | None:
    """The launcher's --speculative-config as the card quotes it (the serving facts report an invalid launcher)."""
    launcher = evidence.launchers.get(emap.launcher) if emap.launcher else None
    raw = launcher.flags.get("--speculative-config") if launcher else None
    return public_value(raw) if isinstance(raw, str) else None


def bench_model_index(emap: EvidenceMap, evidence: Evidence, repo_id: str, version: str) -> list[Any]:
    """The current series' bench cells as model-index results (huggingface_hub EvalResult), each metric named
    by the acceptance-length convention the spec declares."""
    from release.evidence.model_index import bench_results  # imports huggingface_hub: lazily

    results: list[Any] = []
    for path in emap.current.files if emap.current else ():
        run = evidence.bench.get(path)
        if run is None:
            continue  # derive() reports a missing bench file
        derived = emap.derived_length if emap.derived_length and path in emap.derived_length.files else None
        metrics = tuple(
            (field, metric, _metric_name(field, pretty, emap, derived)) for field, metric, pretty in MODEL_INDEX_METRICS
        )
        cells = []
        for c in run.cells:  # TTFT in seconds and the acceptance length as the table shows them
            measured = Measured.of(run, c, cell_accept_length(c, path, emap.derived_length, emap.acceptance_length))
            cells.append({**c, "ttft_avg": measured.ttft_s, ACCEPT_LENGTH: measured.accept_length})
        tool = " ".join(filter(None, ("llm-inference-bench", str(run.metadata.get("version") or ""))))
        results += bench_results(
            cells, source_url=evidence_url(repo_id, version, path), source_name=tool, metrics=metrics
        )
    return results


def _metric_name(field: str, pretty: str, emap: EvidenceMap, derived: DerivedLength | None) -> str:
    if field != ACCEPT_LENGTH:
        return pretty
    name = TOKENS_PER_STEP_METRIC if emap.acceptance_length == "tokens-per-step" else pretty
    return name if derived is None else f"{name[:-1]}; derived: {derived.formula(emap.acceptance_length)})"


def readable(record: dict[str, Any]) -> bool:
    """Whether a release.json `card` record words what this part knows: its acceptance convention, served metric and
    margin."""
    if record.get("acceptance_length", DEFAULT_CONVENTION) not in ACCEPTANCE_CONVENTIONS:
        return False
    served = record.get("served")
    # (a NaN margin fails the comparison too)
    return not served or (served.get("field") in SERVED_NOUN and 0 < float(served.get("margin", 0)) <= 1)


def speculative_part(words: Words) -> CardPart:
    """The part, worded as the kind words it."""

    def derive_worded(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> SpeculativeFacts:
        return derive(emap, evidence, problems, words)

    return CardPart(
        derive=derive_worded, model_index=bench_model_index, readable=readable, lineage_labels=words.lineage_labels
    )
