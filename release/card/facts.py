"""What the card states about the evidence, computed once and shared by the renderer and the lint.

Every number the card shows is built here (or by the kind's card part, release/kinds/, for what only
its cards show: e.g. the speculative-decoding bench and rechecks) as a `Table` or a `Line` from the
parsed evidence. The renderer prints them; `lint` parses the card back with markdown-it-py and compares
each cell and line with what these same functions compute from the staged files, so a hand-edited
number is caught and reported with both values.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from release.card.changes import changes_facts
from release.card.evidence import Evidence, EvidenceMap, ListedFile
from release.card.headings import (
    ALWAYS,
    BENCHMARK,
    CITATION,
    EVALUATION,
    FILES,
    HONEST_NOTE,
    LEDGER,
    LINEAGE,
    MODEL,
    PROSE_SECTIONS,
    SERVING,
    in_reading_order,
)
from release.card.results import lm_eval_table
from release.card.serving import serving_table
from release.card.text import DASH, Claim, Expected, Line, Table, cell, code, code_cell, link, number
from release.checks.ledger import LedgerRow
from release.errors import Problem
from release.kinds.kind import KindFacts


def sections(card: dict[str, Any], facts: Facts) -> tuple[str, ...]:
    """The H2 headings this card must have: the ones every card has, and those the spec or evidence gives."""
    given = {
        MODEL: facts.model is not None,
        EVALUATION: facts.evaluation is not None,
        HONEST_NOTE: "honest_note" in card,
        SERVING: "serving" in card or facts.flags is not None,
        BENCHMARK: "bench" in card,
        LEDGER: facts.ledger is not None,
        LINEAGE: "lineage" in card,
        CITATION: bool(card.get("citations")),
        **{heading: key in card for key, heading in PROSE_SECTIONS.items()},
    }
    required = [*ALWAYS, *(name for name, shown in given.items() if shown)]
    if facts.changes_heading:  # after the files: what the files are, then what changed in them
        required.append(facts.changes_heading)
    return in_reading_order(required)


# --- the facts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """Everything the card computes; `expected()` is what lint checks each section against."""

    map: EvidenceMap
    flags: Table | None
    launch_order: Line | None
    ledger: Table | None
    ledger_line: Line | None
    files: Table
    proxy_claim: Claim | None  # the honest note's proxy metric
    kind_facts: KindFacts  # what only the kind's cards show (its card part, release/kinds/)
    model: Table | None = None
    evaluation: Line | None = None
    evaluation_table: Table | None = None  # lm-eval results (card/results.py)
    architectures: tuple[str, ...] = ()  # config.json's, for the kind's usage snippet
    changes_heading: str | None = None  # "Changes since v5" (card/changes.py), None when nothing was compared
    changes: Table | None = None
    changes_line: Line | None = None
    proof_line: str | None = None  # "Loaded by the code below with transformers 5.24.0 …" (builder/proof.py)

    def expected(self) -> dict[str, Expected]:
        out = {name: Expected() for name in (*self.map.sections, *ALWAYS)}

        def add(section: str, *items: Table | Line | None) -> None:
            for item in items:
                if isinstance(item, Table):
                    out.setdefault(section, Expected()).tables.append(item)
                elif isinstance(item, Line):
                    out.setdefault(section, Expected()).lines.append(item)

        add(MODEL, self.model)
        add(EVALUATION, self.evaluation, self.evaluation_table)
        add(SERVING, self.flags, self.launch_order)
        add(LEDGER, self.ledger, self.ledger_line)
        add(FILES, self.files)
        if self.changes_heading:
            add(self.changes_heading, self.changes_line, self.changes)
        if self.proxy_claim:
            out.setdefault(HONEST_NOTE, Expected()).phrases.extend(self.proxy_claim.phrases)
        for section, more in self.kind_facts.expected().items():
            mine = out.setdefault(section, Expected())
            mine.tables += more.tables
            mine.lines += more.lines
            mine.phrases += more.phrases
        return out


def derive(emap: EvidenceMap, evidence: Evidence) -> tuple[Facts, list[Problem]]:
    """Compute every table and line of the card from the evidence; problems say what cannot be computed."""
    problems: list[Problem] = []
    flags, order = serving_table(emap, evidence, problems)
    kind_facts = emap.kind.card_part.derive(emap, evidence, problems)
    ledger, ledger_line = _ledger(emap, evidence, problems)
    facts = Facts(
        map=emap,
        flags=flags,
        launch_order=order,
        ledger=ledger,
        ledger_line=ledger_line,
        files=files_table(evidence.files),
        proxy_claim=proxy_claim(emap, evidence, problems),
        kind_facts=kind_facts,
        model=getattr(kind_facts, "model_table", None),  # the kind's facts hold its Model table, derived with them
        evaluation=_evaluation(evidence),
        evaluation_table=lm_eval_table(evidence),
        architectures=_architectures(evidence),
    )
    return _with_changes(facts, evidence.changes), problems


def released(facts: Facts, files: Sequence[ListedFile], changes: dict[str, Any] | None) -> Facts:
    """The facts with the files table and the changes section of these files (a build knows them once hashed)."""
    return _with_changes(replace(facts, files=files_table(files)), changes)


def _with_changes(facts: Facts, changes: dict[str, Any] | None) -> Facts:
    heading, table, line = changes_facts(changes)
    return replace(facts, changes_heading=heading, changes=table, changes_line=line)


# --- the honest note's proxy metric -----------------------------------------------------------------

PROXY_REPORTED = "reported by the authors, not derived from a file of this release"


def proxy_claim(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> Claim | None:
    """e.g. `improved teacher-forced top-1` with `0.57 → 0.64, from [eval.json](eval.json)`; a number typed in the
    spec is marked as reported by the authors, never shown as if derived."""
    proxy = emap.proxy
    if proxy is None:
        return None
    if proxy.evidence is None:
        before, after, source = proxy.before, proxy.after, PROXY_REPORTED
    else:
        read = evidence.proxies.get(proxy.evidence)
        if read is None:
            problems.append(
                Problem(
                    proxy.evidence, "the card quotes this proxy-metric file but it is not valid evidence of the release"
                )
            )
            return None
        before, after, source = read.before, read.after, f"from {link(proxy.evidence, proxy.evidence)}"
    assert isinstance(before, float | int) and isinstance(after, float | int)  # key paths only come with a file
    verb = "improved" if after > before else "did not improve"
    return Claim(cell(proxy.metric), f"{verb} {cell(proxy.metric)}", f"{number(before)} → {number(after)}, {source}")


# --- ledger and files ------------------------------------------------------------------------------


def _ledger(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
    if emap.ledger is None:
        return None, None
    ledger = evidence.ledgers.get(emap.ledger)
    if ledger is None:
        problems.append(Problem(emap.ledger, "the card quotes this ledger but it is not a valid ledger of the release"))
        return None, None
    columns = ledger.columns or ledger.metric_columns  # number and text columns, in the file's order

    def value(row: LedgerRow, column: str) -> str:
        if column in row.metrics:
            return number(row.metrics[column])
        return cell(row.texts[column]) if row.texts.get(column) else DASH

    header = ("Commit", *(cell(c) for c in columns), "Status", "Description")
    rows = tuple(
        (code_cell(r.commit), *(value(r, c) for c in columns), cell(r.status), cell(r.description)) for r in ledger.rows
    )
    numeric = frozenset(1 + i for i, c in enumerate(columns) if c in ledger.metric_columns)
    table = Table("ledger", header, rows, numeric, key_columns=1)
    base = ledger.baseline
    counts = {s: sum(1 for r in ledger.trials if r.status == s) for s in ("keep", "discard", "crash")}
    metrics = ", ".join(f"{cell(c)} {value(base, c)}" for c in columns)
    n = len(ledger.trials)
    trials = "trial" if n == 1 else "trials"
    text = (
        f"baseline {code(base.commit)} ({metrics}); {n} single-knob {trials}: "
        f"{counts['keep']} keep, {counts['discard']} discard, {counts['crash']} crash"
    )
    return table, Line("Summary", text)


# The files table stays readable and its card bounded whatever the file count: past FILE_ROWS files, a folder
# of more than FOLDER_ROWS files is one summary row (release.json and SHA256SUMS still list every file), and past
# FILE_ROWS rows even then, every file in a folder is summarised by its top-level folder, then the rest in one row.
FILE_ROWS = 300
FOLDER_ROWS = 20
IN_SUMS = "in SHA256SUMS"


def files_table(files: Sequence[ListedFile]) -> Table:
    with_md5 = any(f.md5 for f in files)
    ordered = sorted(files, key=lambda f: f.path_in_repo)
    if len(ordered) > FILE_ROWS:
        groups = _grouped(ordered, lambda p: p.rpartition("/")[0], FOLDER_ROWS)
    else:
        groups = [("", [f]) for f in ordered]  # ("", [file]): one row for the file
    if len(groups) > FILE_ROWS:
        groups = _grouped(ordered, lambda p: p.partition("/")[0] if "/" in p else "", 0)
    if len(groups) > FILE_ROWS:
        rest = [f for _, members in groups[FILE_ROWS - 1 :] for f in members]
        groups = [*groups[: FILE_ROWS - 1], ("…", rest)]
    rows = []
    for folder, members in groups:
        if folder:
            size = sum(f.size for f in members)
            label = f"{len(members):,} more files" if folder == "…" else f"{folder}/ ({len(members):,} files)"
            row = [
                cell(label),
                f"{size:,} B",
                IN_SUMS,
                *((IN_SUMS,) if with_md5 else ()),
                cell(", ".join(sorted({f.role for f in members}))),
            ]
        else:
            f = members[0]
            row = [link(f.path_in_repo, f.path_in_repo), f"{f.size:,} B", code_cell(f.sha256[:12])]
            if with_md5:
                row.append(code_cell(f.md5[:12]) if f.md5 else DASH)
            row.append(cell(f.role))
        rows.append(tuple(row))
    header = ("File", "Size", "sha256", *(("md5",) if with_md5 else ()), "Role")
    return Table("files", header, tuple(rows), frozenset({1}), key_columns=1)


def _grouped(ordered: list[ListedFile], folder_of: Any, keep: int) -> list[tuple[str, list[ListedFile]]]:
    """Files by folder (path order kept): a folder of more than `keep` files becomes one summary group, every
    other file its own row; a root file (folder '') is always its own row."""
    by_folder: dict[str, list[ListedFile]] = {}
    for f in ordered:
        by_folder.setdefault(folder_of(f.path_in_repo), []).append(f)
    groups: list[tuple[str, list[ListedFile]]] = []
    for folder, members in by_folder.items():
        if folder and len(members) > keep:
            groups.append((folder, members))
        else:
            groups += [("", [f]) for f in members]
    return groups


def _architectures(evidence: Evidence) -> tuple[str, ...]:
    if len(evidence.configs) != 1:
        return ()
    arch = next(iter(evidence.configs.values())).data.get("architectures")
    return tuple(a for a in arch if isinstance(a, str)) if isinstance(arch, list) else ()


def _evaluation(evidence: Evidence) -> Line | None:
    if not evidence.evals:
        return None
    parts = []
    for path, run in sorted(evidence.evals.items()):
        tasks = sorted({row.task for row in run.rows})
        noun = "task" if len(tasks) == 1 else "tasks"
        parts.append(f"{link(path, path)} ({len(tasks)} {noun}: {', '.join(cell(t) for t in tasks)})")
    return Line("lm-evaluation-harness results", "; ".join(parts))
