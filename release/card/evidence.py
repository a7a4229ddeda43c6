"""The evidence a card is computed from, and which staged file plays which part in it.

`Evidence` is what the checks parsed (in build) or what is re-parsed from a staged folder (in verify).
`EvidenceMap` is the spec's choice of files (current, previous, rechecks…) resolved to paths, with the
release's kind and the sections its card must have; release.json records it (`card`) so that `verify`
recomputes every number from the staged files and that record, never from the card's own text.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from release.card.headings import ALWAYS
from release.checks.bench import BenchRun
from release.checks.config import ModelConfig
from release.checks.launcher import Launcher
from release.checks.ledger import ColumnType, Ledger
from release.checks.model_files import JsonFile, TokenizerAsset
from release.checks.proxy import ProxyMetric
from release.errors import Problem
from release.evidence.eval_results import Benchmark
from release.evidence.lm_eval import LmEvalRun
from release.formats.safetensors_header import SafetensorsHeader
from release.history.compare import Entry
from release.kinds.kind import Kind, KindFiles
from release.pipeline import Parsed
from release.spec.placeholders import placeholders
from release.staged.names import DEFAULT_CHART, DEFAULT_NOTE_CHART

if TYPE_CHECKING:
    from release.card.speculative.derived import DerivedLength

# --- the evidence map ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    label: str
    files: tuple[str, ...]


DEFAULT_MARGIN = 0.02  # the equivalence margin, a fraction of the baseline mean, unless the spec sets one


@dataclass(frozen=True)
class Served:
    """The served A/B of the honest note: which bench files (one per server boot) measured which variant."""

    field: str
    candidate: Series
    baseline: Series
    rechecks: int | None = None  # how many rechecks per side the note claims (None: no claim)
    margin: float = DEFAULT_MARGIN

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted({*self.candidate.files, *self.baseline.files}))

    def label_of(self, path: str) -> str | None:
        """The variant a file measured: the candidate's or the baseline's label (None: neither or both)."""
        sides = [s.label for s in (self.candidate, self.baseline) if path in s.files]
        return sides[0] if len(sides) == 1 else None


@dataclass(frozen=True)
class LedgerReading:
    """How to read the ledger (the spec's [card.ledger]): its baseline commit and declared column types."""

    baseline: str | None = None
    column_types: tuple[tuple[str, ColumnType], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            **({"baseline": self.baseline} if self.baseline else {}),
            **({"column_types": dict(self.column_types)} if self.column_types else {}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> LedgerReading:
        data = data or {}
        return cls(data.get("baseline"), tuple(sorted(dict(data.get("column_types", {})).items())))


@dataclass(frozen=True)
class Proxy:
    """The honest note's proxy metric: numbers typed in the spec (shown as reported by the authors), or
    key paths into `evidence`, a file of the release that the card then quotes."""

    metric: str
    before: float | tuple[str, ...]
    after: float | tuple[str, ...]
    evidence: str | None = None

    def as_dict(self) -> dict[str, Any]:
        def value(v: float | tuple[str, ...]) -> Any:
            return list(v) if isinstance(v, tuple) else v

        return {
            "metric": self.metric,
            "before": value(self.before),
            "after": value(self.after),
            **({"evidence": self.evidence} if self.evidence else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proxy:
        def value(v: Any) -> float | tuple[str, ...]:
            return tuple(map(str, v)) if isinstance(v, list) else float(v)

        evidence = data.get("evidence")
        return cls(
            str(data["metric"]), value(data["before"]), value(data["after"]), str(evidence) if evidence else None
        )


@dataclass(frozen=True)
class EvidenceMap:
    """Which staged file plays which part in the card (from the spec, resolved to paths)."""

    current: Series | None
    previous: Series | None = None
    rechecks: tuple[str, ...] = ()
    served: Served | None = None
    proxy: Proxy | None = None
    acceptance_length: str = "accepted-per-draft"
    launcher: str | None = None
    ledger: str | None = None
    ledger_reading: LedgerReading = LedgerReading()
    chart: str | None = None
    note_chart: str | None = None  # the honest note's picture of its served evidence
    kind: Kind = field(kw_only=True)  # the release's kind (release/kinds/): the record holds its name
    sections: tuple[str, ...] = ALWAYS  # the H2 headings the card must have
    signature: str | None = None  # [card.signature] method: the card prints a model_signing command for it
    placeholders: tuple[str, ...] = ()  # [card] keys still holding init's placeholder (release/spec/placeholders.py)
    derived_length: DerivedLength | None = None  # acceptance length derived where the bench did not record it
    eval_results: tuple[Benchmark, ...] = ()  # [[card.eval_results]]: lm-eval tasks reported as Hub benchmarks

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.name, "sections": list(self.sections)}
        if self.current or self.rechecks or self.served:  # how the bench's acceptance length reads: bench cards only
            out["acceptance_length"] = self.acceptance_length
        if self.derived_length:
            out["acceptance_length_derived"] = self.derived_length.as_dict(self.acceptance_length)
        if self.current:
            out["current"] = {"label": self.current.label, "files": list(self.current.files)}
        if self.previous:
            out["previous"] = {"label": self.previous.label, "files": list(self.previous.files)}
        if self.rechecks:
            out["rechecks"] = list(self.rechecks)
        if self.served:
            s = self.served
            out["served"] = {
                "field": s.field,
                "margin": s.margin,
                **({"rechecks": s.rechecks} if s.rechecks is not None else {}),
                **{
                    key: {"label": side.label, "files": list(side.files)}
                    for key, side in (("candidate", s.candidate), ("baseline", s.baseline))
                },
            }
        if self.proxy:
            out["proxy"] = self.proxy.as_dict()
        if self.ledger_reading.as_dict():
            out["ledger_reading"] = self.ledger_reading.as_dict()
        for key in ("launcher", "ledger", "chart", "note_chart", "signature"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.placeholders:
            out["placeholders"] = list(self.placeholders)
        if self.eval_results:
            out["eval_results"] = [b.as_dict() for b in self.eval_results]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], kind: Kind) -> EvidenceMap:
        from release.card.speculative.derived import DerivedLength  # its package imports this module

        def series(key: str) -> Series | None:
            value = data.get(key)
            return Series(str(value["label"]), tuple(map(str, value["files"]))) if value else None

        def side(value: dict[str, Any]) -> Series:
            return Series(str(value["label"]), tuple(map(str, value["files"])))

        served = data.get("served")
        return cls(
            current=series("current"),
            previous=series("previous"),
            rechecks=tuple(map(str, data.get("rechecks", ()))),
            served=Served(
                str(served["field"]),
                side(served["candidate"]),
                side(served["baseline"]),
                int(served["rechecks"]) if "rechecks" in served else None,
                float(served["margin"]),
            )
            if served
            else None,
            proxy=Proxy.from_dict(data["proxy"]) if data.get("proxy") else None,
            acceptance_length=str(data.get("acceptance_length", "accepted-per-draft")),
            launcher=data.get("launcher"),
            ledger=data.get("ledger"),
            ledger_reading=LedgerReading.from_dict(data.get("ledger_reading")),
            chart=data.get("chart"),
            note_chart=data.get("note_chart"),
            kind=kind,
            sections=tuple(map(str, data["sections"])),
            signature=str(data["signature"]) if data.get("signature") else None,
            placeholders=tuple(map(str, data.get("placeholders", ()))),
            derived_length=DerivedLength.from_dict(data.get("acceptance_length_derived")),
            eval_results=tuple(Benchmark.from_spec(b) for b in data.get("eval_results", ())),
        )

    @classmethod
    def from_record(cls, data: Any, kind_named: Callable[[object], Kind | None]) -> EvidenceMap | None:
        """The map recorded in release.json's `card`, or None when it is not a readable one; `kind_named`
        (release/kinds/ kind_named) gives the kind the record names."""
        try:
            kind = kind_named(data.get("kind"))
            if kind is None or not kind.card_part.readable(data) or not isinstance(data.get("sections"), list):
                return None
            return cls.from_dict(data, kind)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def match_files(globs: Iterable[str], paths: Iterable[str], where: str) -> tuple[tuple[str, ...], list[Problem]]:
    """The paths the globs name (in path order), and a problem for each glob that names none."""
    paths = sorted(paths)
    found: list[str] = []
    problems = []
    for pattern in globs:
        hits = [p for p in paths if fnmatch.fnmatchcase(p, pattern)]
        if not hits:
            problems.append(
                Problem(where, f"{pattern!r} matches no bench file of the release ({', '.join(paths) or 'none'})")
            )
        found += [h for h in hits if h not in found]
    return tuple(sorted(found)), problems


def evidence_map(
    card: dict[str, Any], spec_name: str, evidence: Evidence, kind: Kind
) -> tuple[EvidenceMap, list[Problem]]:
    """Resolve the spec's [card] globs against the release's bench files."""
    problems: list[Problem] = []
    bench_paths = list(evidence.bench)
    bench = card.get("bench", {})

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
    spec_served = card.get("honest_note", {}).get("served")
    if spec_served:
        sides = []
        for key in ("candidate", "baseline"):
            files, found = match_files(spec_served[key], bench_paths, f"{spec_name} card.honest_note.served.{key}")
            problems.extend(found)
            sides.append(Series(spec_served.get(f"{key}_label", key), files))
        if sides[0].label == sides[1].label:
            problems.append(
                Problem(
                    f"{spec_name} card.honest_note.served",
                    f"candidate_label and baseline_label are both "
                    f"{sides[0].label!r}; give the two variants different names",
                )
            )
        candidate, baseline = sides
        served = Served(
            spec_served["field"],
            candidate,
            baseline,
            spec_served.get("rechecks"),
            spec_served.get("margin", DEFAULT_MARGIN),
        )
    launchers, ledgers = sorted(evidence.launchers), sorted(evidence.ledgers)
    launcher = launchers[0] if len(launchers) == 1 else None
    read = {
        *(current.files if current else ()),
        *(previous.files if previous else ()),
        *rechecks,
        *(served.files if served else ()),
    }
    from release.card.speculative.derived import derived_length  # its package imports this module

    derived, found = derived_length(
        sorted(read), evidence.bench, evidence.launchers.get(launcher) if launcher else None, bench, spec_name
    )
    problems.extend(found)
    return (
        EvidenceMap(
            current=current,
            previous=previous,
            rechecks=rechecks,
            served=served,
            acceptance_length=bench.get("acceptance_length", "accepted-per-draft"),
            launcher=launcher,
            ledger=ledgers[0] if len(ledgers) == 1 else None,
            ledger_reading=LedgerReading.from_dict(card.get("ledger")),
            proxy=Proxy.from_dict(card["honest_note"]["proxy"]) if "proxy" in card.get("honest_note", {}) else None,
            chart=bench.get("chart", DEFAULT_CHART) if bench else None,
            note_chart=spec_served.get("chart", DEFAULT_NOTE_CHART) if spec_served else None,
            kind=kind,
            signature=card["signature"]["method"] if "signature" in card else None,
            placeholders=placeholders(card, kind.card_placeholders),
            derived_length=derived,
            eval_results=tuple(Benchmark.from_spec(b) for b in card.get("eval_results", ())),
        ),
        problems,
    )


# --- the evidence ----------------------------------------------------------------------------------


class ListedFile(Entry, Protocol):
    """A row of the card's files table: a FileRow, or the one record of the file itself (build's StagedFile,
    release.json's ManifestFile), never copied into a row object per file."""

    @property
    def path_in_repo(self) -> str: ...
    @property
    def md5(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class FileRow:
    """A files-table row of a file that has no record of its own yet (a chart drawn for the card)."""

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
    files: list[ListedFile] = field(default_factory=list)  # every release file but the card itself
    configs: dict[str, ModelConfig] = field(default_factory=dict)
    weights: dict[str, SafetensorsHeader] = field(default_factory=dict)
    evals: dict[str, LmEvalRun] = field(default_factory=dict)
    changes: dict[str, Any] | None = None  # the comparison with the previous version, as release.json records it
    proxies: dict[str, ProxyMetric] = field(default_factory=dict)  # proxy-metric evidence files
    kind_files: Any = None  # what the kind's files_check read (release/kinds/kind.py KindFiles), None: no such check
    model_files: dict[str, JsonFile | TokenizerAsset] = field(
        default_factory=dict
    )  # tokenizer and generation config files

    @classmethod
    def of(cls, parsed: Parsed, files: Iterable[ListedFile] = (), changes: dict[str, Any] | None = None) -> Evidence:
        """The one way evidence is assembled: from what the checks parsed (in build or from a staged folder)."""
        return cls(
            launchers=parsed.of(Launcher),
            ledgers=parsed.of(Ledger),
            bench=parsed.of(BenchRun),
            files=list(files),
            configs=parsed.of(ModelConfig),
            weights=parsed.of(SafetensorsHeader),
            evals=parsed.of(LmEvalRun),
            changes=changes,
            proxies=parsed.of(ProxyMetric),
            kind_files=getattr(parsed.one(KindFiles), "value", None),
            model_files={**parsed.of(JsonFile), **parsed.of(TokenizerAsset)},
        )
