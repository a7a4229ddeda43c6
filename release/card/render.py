"""Render the model card: Hub front matter, the generated mark, and a sandboxed Jinja2 template.

The template sees data, never source: spec strings and evidence are passed as variables into a
`SandboxedEnvironment` with `StrictUndefined`, so `{{ … }}` inside spec data prints literally and a
template that names a missing variable fails with a Problem naming the template, line and variable.
Spec strings are printed with template syntax escaped (`{{` → `&#123;{`, which Markdown shows as `{{`),
so the lint's "no leftover template syntax" rule only ever fires on the template's own mistakes.

Front matter goes through huggingface_hub's `ModelCardData` / `ModelCard`; the mark (card/mark.py)
follows it. Pure apart from reading the template: the build steps (card/steps.py) and `hf-release card`
(card/staged.py) write the results.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from release.card.chart import render
from release.card.claims import claim_problems
from release.card.evidence import Evidence, FileRow, evidence_map
from release.card.facts import Facts, derive, released, sections
from release.card.headings import BY_KEY, PROSE_SECTIONS
from release.card.mark import with_mark
from release.card.prose import prose_problems
from release.card.results import model_index, model_name
from release.card.text import CODE_WIDTH, Md, code, esc, link
from release.card.verify_commands import verify_section
from release.errors import InputError, Problem
from release.kinds.kind import Kind
from release.spec import ReleaseSpec
from release.spec.project import default_templates
from release.staged.names import CHART_ROLE

TEMPLATES = default_templates()  # one per kind (release/kinds/); shipped in the wheel as release.templates

LINEAGE_LABELS = {  # the kind's card part adds its own roles' labels
    "base-model": "Base model",
    "method": "Method",
    "build-recipe": "Build recipe",
    "experiment-loop": "Experiment loop",
    "prior-art": "Prior art we checked and ruled out",
    "other": "Also credited",
}


# --- front matter ----------------------------------------------------------------------------------


def card_data(
    card: dict[str, Any],
    defaults: dict[str, Any] | None = None,
    results: list[Any] | None = None,
    model_name: str | None = None,
) -> Any:
    """The Hub metadata as huggingface_hub's ModelCardData (no None values: absent keys are left out).

    The license comes from [card.license] (id, and for `other` its name and link); the rest from
    [card.metadata]. For weights made by folding an adapter into a vendor checkpoint, the
    example spec sets base_model = that checkpoint with base_model_relation = "finetune" (trained
    weights of one model; the Hub's "merge" means several models merged, "adapter" an adapter shipped
    alone) and library_name = "vllm" (what loads it: vLLM's --speculative-config; transformers cannot).
    spec_problems() refuses "merge" with a single base model and a base model not credited in the lineage.
    A model trained from scratch has no base_model: the key is left out. `defaults` are the kind's
    (e.g. library_name = "transformers"). `results` (card/results.py model_index) become `model-index`
    under `model_name`.
    """
    from huggingface_hub import ModelCardData

    meta = {**(defaults or {}), **card.get("metadata", {})}
    lic = card["license"]
    extra: dict[str, Any] = (
        {"base_model_relation": meta["base_model_relation"]} if "base_model_relation" in meta else {}
    )
    return ModelCardData(
        base_model=meta.get("base_model"),
        datasets=meta.get("datasets"),
        language=meta.get("language"),
        library_name=meta.get("library_name"),
        license=lic["id"],
        license_name=lic.get("name"),
        license_link=lic.get("link"),
        pipeline_tag=meta.get("pipeline_tag"),
        tags=list(meta.get("tags", [])) or None,
        model_name=model_name if results else None,
        eval_results=results or None,
        **extra,
    )


def front_matter(
    card: dict[str, Any],
    defaults: dict[str, Any] | None = None,
    results: list[Any] | None = None,
    model_name: str | None = None,
) -> str:
    return _round_tripped(f"---\n{card_data(card, defaults, results, model_name).to_yaml()}\n---\n")


@functools.lru_cache(maxsize=16)
def _round_tripped(text: str) -> str:
    """The front matter as huggingface_hub's own parser reads it back and writes it: a pure function of the
    text (PyYAML's pure-Python load and dump, ~0.1 s for the example's), so a build run again in one process
    does it once."""
    from huggingface_hub import ModelCard

    return str(ModelCard(text))


def spec_problems(card: dict[str, Any], spec_name: str, files: set[str]) -> list[Problem]:
    """What the schema cannot say: cross-field rules of the [card] section."""
    problems = []
    lic, meta = card["license"], card.get("metadata", {})
    where = f"{spec_name} card"
    if lic["id"] == "other":
        for key in ("name", "link"):
            if key not in lic:
                problems.append(
                    Problem(f"{where}.license", f"license id 'other' needs `{key}` (the Hub's license_{key})")
                )
    link_ = lic.get("link")
    if link_ and not link_.startswith("https://") and link_ not in files:
        problems.append(
            Problem(f"{where}.license.link", f"{link_!r} is neither an https URL nor a file of the release")
        )
    base = meta.get("base_model", [])
    bases = [base] if isinstance(base, str) else list(base)
    relation = meta.get("base_model_relation")
    if relation and not bases:
        problems.append(
            Problem(
                f"{where}.metadata.base_model_relation", "needs base_model; remove it for a model trained from scratch"
            )
        )
    if relation == "merge" and len(bases) < 2:
        problems.append(
            Problem(
                f"{where}.metadata.base_model_relation",
                "'merge' means several models merged into one; with one base model use 'finetune' "
                "(weights trained from it) or 'adapter' (an adapter shipped alone)",
            )
        )
    named = {e["name"] for e in card.get("lineage", {}).get("entries", [])}
    for base in bases if "lineage" in card else ():
        if base not in named:
            problems.append(
                Problem(
                    f"{where}.metadata.base_model",
                    f"{base!r} is not credited in [card.lineage]; add an entry naming it",
                )
            )
    return problems


# --- rendering -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    text: str
    charts: dict[str, bytes]  # path_in_repo → PNG: the card's pictures (the bench chart, the honest note's)
    facts: Facts


def chosen_template(spec: ReleaseSpec, override: Path | None) -> Path | None:
    """The author's template: --template, else the spec's card.template (relative to the spec); None for the
    kind's default. Needs no staged file, so build checks it before staging: a typo hashes nothing."""
    if override is not None:
        path, how = Path(override), "check the --template path"
    elif "template" in spec.card:
        path, how = spec.root / spec.card["template"], f"fix [card] template in {spec.path.name}"
    else:
        return None
    if not path.is_file():
        raise InputError(f"card template not found; {how}", file=str(path))
    return path


def template_for(spec: ReleaseSpec, override: Path | None, kind: Kind) -> Path:
    """The author's template (chosen_template), else the kind's default."""
    chosen = chosen_template(spec, override)
    if chosen is not None:
        return chosen
    path = TEMPLATES / kind.template
    if not path.is_file():
        how = "reinstall hf-release (its default templates ship in the package) or pass --template"
        raise InputError(f"card template not found; {how}", file=str(path))
    return path


def template_label(path: Path, spec: ReleaseSpec | None = None) -> str:
    for base in ([spec.root] if spec else []) + [TEMPLATES.parent]:  # "templates/NAME", installed or not
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


@dataclass(frozen=True)
class Derived:
    """The card's facts derived from the evidence (once per build: card/steps.py carries them), with what
    could not be resolved in the spec's [card] (`map_problems`) or computed (`problems`)."""

    evidence: Evidence
    facts: Facts
    map_problems: list[Problem]
    problems: list[Problem]


def derive_card(spec: ReleaseSpec, kind: Kind, evidence: Evidence) -> Derived:
    """The evidence map and the facts of the spec's [card]: what needs no digest (the files table comes at
    `produce`)."""
    emap, map_problems = evidence_map(spec.card, spec.path.name, evidence, kind)
    facts, problems = derive(emap, evidence)
    return Derived(evidence, facts, map_problems, problems)


def produce(
    spec: ReleaseSpec,
    kind: Kind,
    evidence: Evidence,
    release_digest: str,
    template: Path,
    derived: Derived | None = None,
) -> tuple[Rendered | None, list[Problem]]:
    """Chart and card text from the spec's [card] and the evidence (`derived` from it, unless given);
    problems instead of exceptions."""
    card = spec.card
    files = {f.path_in_repo for f in evidence.files}
    derived = derived or derive_card(spec, kind, evidence)
    emap = derived.facts.map
    problems = derived.map_problems + spec_problems(card, spec.path.name, files)
    for path, key in ((emap.chart, "card.bench.chart"), (emap.note_chart, "card.honest_note.served.chart")):
        if path and path in files:
            problems.append(
                Problem(f"{spec.path.name} {key}", f"{path!r} is already a file of the release; choose another path")
            )
    facts = derived.facts
    problems += derived.problems + claim_problems(card, facts.kind_facts.served_verdict, spec.path.name)
    problems += prose_problems(card, evidence.evals, spec.path.name)
    charts = drawn(spec, facts)
    emap = replace(
        emap,
        chart=emap.chart if emap.chart in charts else None,
        note_chart=emap.note_chart if emap.note_chart in charts else None,
    )
    rows = list(evidence.files) + [
        FileRow(p, len(png), hashlib.sha256(png).hexdigest(), CHART_ROLE) for p, png in charts.items()
    ]
    facts = released(facts, rows, evidence.changes)
    emap = replace(emap, sections=sections(card, facts))
    facts = replace(facts, map=emap)
    template_problems, body = render_body(spec, facts, release_digest, template)
    problems += template_problems
    if body is None:
        return None, problems
    text = with_mark(_front_matter(spec, kind, evidence, facts), body, release_digest)
    return Rendered(text, charts, facts), problems


def _front_matter(spec: ReleaseSpec, kind: Kind, evidence: Evidence, facts: Facts) -> str:
    defaults = {
        **kind.card_defaults,
        **getattr(facts.kind_facts, "metadata", {}),
        **(kind.card_metadata(spec.card, facts) if kind.card_metadata else {}),
    }
    results = model_index(facts.map, evidence, spec.repo_id, spec.version)
    return front_matter(spec.card, defaults, results, model_name(spec.repo_id))


def prepare(spec: ReleaseSpec, kind: Kind, derived: Derived, template: Path) -> None:
    """Do ahead, while the files are hashed, what `produce` will redo from memory: compile the template (into
    card/sandbox.py COMPILED) and read the front matter back as huggingface_hub does (memoized by its text, so it
    counts only when the files table leaves the metadata as it is). A template that does not compile is left
    for render_body to report."""
    from jinja2 import TemplateError

    try:
        _environment(template).get_template(template.name)
    except (TemplateError, RecursionError, OSError):
        pass
    _front_matter(spec, kind, derived.evidence, derived.facts)


def wanted_charts(spec: ReleaseSpec, facts: Facts) -> list[tuple[str, dict[str, Any], str]]:
    """What the card's pictures are drawn from: (which chart, its series, its title), when the evidence gives the
    series."""
    emap, kind_facts = facts.map, facts.kind_facts
    wanted = []
    if kind_facts.chart_series and emap.chart:
        wanted.append(("bench", kind_facts.chart_series, chart_title(spec)))
    if kind_facts.note_series and emap.note_chart:
        wanted.append(("note", kind_facts.note_series, note_chart_title(spec)))
    return wanted


def drawn(spec: ReleaseSpec, facts: Facts) -> dict[str, bytes]:
    """The card's pictures, by path_in_repo: the bench chart and the honest note's, when the evidence gives their
    series."""
    paths = {"bench": facts.map.chart, "note": facts.map.note_chart}
    return {str(paths[which]): render(which, series, title) for which, series, title in wanted_charts(spec, facts)}


def _finalize(value: Any) -> Any:
    """Every `{{ … }}` output passes here: our Markdown as is, data with template syntax escaped."""
    from jinja2.exceptions import UndefinedError

    if isinstance(value, Md):
        return value
    if value is None:
        raise UndefinedError("the template printed a value that is not there (None); guard it with {% if … %}")
    if isinstance(value, str):
        return esc(value)
    return value


def render_body(
    spec: ReleaseSpec, facts: Facts, release_digest: str, template: Path
) -> tuple[list[Problem], str | None]:
    from jinja2 import TemplateError, TemplateSyntaxError, UndefinedError
    from jinja2.sandbox import SecurityError

    from release.card.sandbox import render_bounded

    label = template_label(template, spec)
    if not template.is_file():
        return [Problem(label, "card template not found")], None
    try:
        tpl = _environment(template).get_template(template.name)
        body = render_bounded(tpl, context(spec, facts, release_digest))
    except TemplateSyntaxError as exc:
        return [Problem(f"{label}:{exc.lineno}", f"template syntax error: {exc.message}")], None
    except UndefinedError as exc:
        return [Problem(_where(label, template, exc), f"undefined variable: {exc.message}")], None
    except SecurityError as exc:
        return [Problem(_where(label, template, exc), f"not allowed in the template sandbox: {exc}")], None
    except RecursionError:  # compiling: the sandbox turns one while rendering into a SecurityError
        return [Problem(label, "not allowed in the template sandbox: the template nests too deeply to compile")], None
    except (TemplateError, TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        return [Problem(_where(label, template, exc), f"template failed: {type(exc).__name__}: {exc}")], None
    body = body.lstrip("\n")
    return [], body if body.endswith("\n") else body + "\n"


def _environment(template: Path) -> Any:
    """The sandbox a card template runs in, its compiled code kept for the process (card/sandbox.py COMPILED)."""
    from jinja2 import ChoiceLoader, FileSystemLoader, StrictUndefined

    from release.card.sandbox import COMPILED, BoundedSandbox

    return BoundedSandbox(
        # the template's own folder first, then the default templates: a custom template may extend their
        # shared parts (`{% extends "_card.md.j2" %}`)
        loader=ChoiceLoader([FileSystemLoader(str(template.parent)), FileSystemLoader(str(TEMPLATES))]),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        finalize=_finalize,
        bytecode_cache=COMPILED,
    )


def _where(label: str, template: Path, exc: BaseException) -> str:
    """`template:line` from the traceback frames Jinja maps back to template lines."""
    target = str(template.resolve())
    lines = [
        f.lineno
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename and os.path.abspath(f.filename) == target
    ]
    return f"{label}:{lines[-1]}" if lines else label


def context(spec: ReleaseSpec, facts: Facts, release_digest: str) -> dict[str, Any]:
    """The template's variables (documented at the top of each default template in templates/).

    An optional part the spec does not give is None (its section is left out): the note, serving,
    bench and lineage; `sections` holds only the headings this card must have. The kind's card part
    adds its variables to `serving` and `note`, and its own namespaces (`bench`).
    """
    card = copy.deepcopy(spec.card)
    emap = facts.map
    kind = emap.kind
    own = facts.kind_facts.variables(card, emap)
    serving, note = own.pop("serving", {}), own.pop("note", {})
    launcher = emap.launcher
    labels = {**LINEAGE_LABELS, **kind.card_part.lineage_labels}
    return {
        "card": card,
        "sections": {key: name for key, name in BY_KEY.items() if name in emap.sections},
        "release": {"repo_id": spec.repo_id, "version": spec.version, "release_digest": release_digest},
        "model": {"table": facts.model.markdown() if facts.model else None},
        "evaluation": {
            "results": facts.evaluation.markdown() if facts.evaluation else None,
            "table": facts.evaluation_table.markdown() if facts.evaluation_table else None,
        },
        "verify": verify_section(spec.repo_id, spec.version, card.get("signature"), card.get("attestation")),
        "note": _note(card, facts, note),
        "serving": {
            "text": card["serving"]["text"] if "serving" in card else None,
            "flags": facts.flags.markdown() if facts.flags else None,
            **serving,
            "launch_order": facts.launch_order.markdown() if facts.launch_order else None,
            "launcher": Md(link(launcher, launcher)) if launcher else None,
        },
        **own,
        "ledger": {
            "table": facts.ledger.markdown() if facts.ledger else None,
            "summary": facts.ledger_line.markdown() if facts.ledger_line else None,
            "link": Md(link(emap.ledger, emap.ledger)) if emap.ledger else None,
        },
        "files": {
            "table": facts.files.markdown(),
            "first_release": facts.changes_line.markdown()
            if facts.changes_line and not facts.changes_heading
            else None,
        },
        "changes": {
            "heading": facts.changes_heading,
            "line": facts.changes_line.markdown() if facts.changes_line else None,
            "table": facts.changes.markdown() if facts.changes else None,
        }
        if facts.changes_heading
        else None,
        "usage": {
            **usage(spec),
            "proof": Md(facts.proof_line) if facts.proof_line else None,
            **{
                k: Md(v) if v is not None else None
                for k, v in (kind.card_context(spec, facts) if kind.card_context else {}).items()
            },
        },
        "lineage": {
            "intro": card["lineage"]["intro"],
            "entries": [
                {**e, "label": labels[e["role"]], "by": e.get("by"), "arxiv": e.get("arxiv")}
                for e in card["lineage"]["entries"]
            ],
        }
        if "lineage" in card
        else None,
        "license": {**card["license"], "name": card["license"].get("name"), "link": card["license"].get("link")},
        "citations": [bibtex(c) for c in card.get("citations", [])],
        "what": card.get("what"),
        **{key: card.get(key) for key in PROSE_SECTIONS},
        "ops_notes": card.get("ops_notes", []),
        "original_work": card.get("original_work", []),
    }


def _note(card: dict[str, Any], facts: Facts, own: dict[str, Any]) -> dict[str, Any] | None:
    """The note's spec words, its computed clauses (`proxy`, and the kind's `served`), and the same said finding
    first: `finding` (one sentence, no figures) and `figures` (each claim's measure with its figures)."""
    note = card.get("honest_note")
    if note is None:
        return None
    own = dict(own)
    claims = [c for c in (facts.proxy_claim, own.pop("served_claim", None)) if c is not None]
    finding = figures = None
    if claims:
        said = " ".join(" ".join(filter(None, (c.joiner if n else "", c.finding))) for n, c in enumerate(claims))
        finding = Md(_sentence(f"{esc(note['subject'])} {said}"))
        figures = Md("; ".join(f"{c.measure} ({c.figures})" for c in claims) + ".")
    return {
        "label": note["label"],
        "lead": _sentence(note["label"])[:-1],
        "subject": note["subject"],
        "text": note["text"],
        "proxy": Md(facts.proxy_claim.clause) if facts.proxy_claim else None,
        "finding": finding,
        "figures": figures,
        "served": None,
        "chart": None,
        **own,
    }


def _sentence(text: str) -> str:
    """`text` as a sentence: its first letter upper case, one full stop at the end."""
    return text[:1].upper() + text[1:].rstrip(".") + "."


def usage(spec: ReleaseSpec) -> dict[str, Any]:
    """How to get exactly this version: snapshot_download(revision=…); the kind adds its own snippet."""
    call = f'snapshot_download(repo_id="{spec.repo_id}", revision="{spec.version}")'
    if len("path = " + call) > CODE_WIDTH:  # continued inside the parentheses, to fit the card's code box
        call = f'snapshot_download(\n    repo_id="{spec.repo_id}", revision="{spec.version}"\n)'
    python = f"```python\nfrom huggingface_hub import snapshot_download\n\npath = {call}\n```"
    given = spec.card.get("usage", {})
    return {
        "python": Md(python),
        "text": given.get("text"),
        "target_model": given.get("target_model"),
        "revision": Md(code(f'revision="{spec.version}"')),
    }


def bibtex(c: dict[str, Any]) -> Md:
    fields = [("title", c["title"]), ("author", " and ".join(c["authors"])), ("year", str(c["year"]))]
    if c.get("arxiv"):
        fields += [("eprint", c["arxiv"]), ("archivePrefix", "arXiv")]
        if c.get("primary_class"):
            fields.append(("primaryClass", c["primary_class"]))
    if c.get("url"):
        fields.append(("url", c["url"]))
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k.ljust(width)} = {{{v}}}" for k, v in fields)
    kind = "misc" if c.get("arxiv") else "article"
    return Md(f"```bibtex\n@{kind}{{{c['key']},\n{body}\n}}\n```")


def chart_title(spec: ReleaseSpec) -> str:
    return f"{spec.repo_id} {spec.version}: per bench cell"


def note_chart_title(spec: ReleaseSpec) -> str:
    return f"{spec.repo_id} {spec.version}: the honest note's served evidence"
