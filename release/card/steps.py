"""The card's build steps: derive the card's facts and draw the chart early, render the card into the
staging folder, lint it. The facts are derived once and carried in `ctx.derived` from step to step."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import Any

from release.card.chart import Drawer, charts_possible
from release.card.evidence import Evidence, ListedFile
from release.card.lint import lint_text
from release.card.render import Derived, derive_card, drawn, prepare, produce, template_for, wanted_charts
from release.card.results import eval_results_text
from release.pipeline import Context, Done, Skipped, StepResult
from release.spec.placeholders import placeholder_message
from release.staged.digest import hash_file
from release.staged.file_stat import file_stat
from release.staged.names import CARD_NAME, CARD_ROLE, CHART_ROLE, EVAL_RESULTS_NAME, EVAL_RESULTS_ROLE
from release.staged.staged_file import StagedFile

logger = logging.getLogger(__name__)


def file_rows(files: list[StagedFile]) -> list[ListedFile]:
    """The files table's rows: every staged file but the card itself (each file's own record, not a copy)."""
    return [f for f in files if f.role != CARD_ROLE]


def _generated(ctx: Context, path_in_repo: str, data: bytes, role: str) -> None:
    staged = ctx.stage / path_in_repo
    if any(f.path_in_repo == path_in_repo for f in ctx.files):
        raise AssertionError(f"{path_in_repo} is already a file of the release")  # produce() reports it first
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.unlink(missing_ok=True)  # never write through a hard link to a source file
    staged.write_bytes(data)
    d = hash_file(staged)
    ctx.files.append(
        StagedFile(
            None,
            str(staged),
            path_in_repo,
            role,
            ctx.stage,
            size=d.size,
            sha256=d.sha256,
            git_blob_id=d.git_blob_id,
            stat=file_stat(staged),
        )
    )


def _changes(ctx: Context) -> dict[str, Any] | None:
    """The comparison with the previous version, as release.json will record it (verify reads it back)."""
    return ctx.changes.as_dict() if ctx.changes is not None else None


class StartDrawing:
    """Step, before any thread runs: when the spec's [card] can have charts, fork the child that draws them
    (card/chart.py Drawer), so that matplotlib's import runs beside the checks on a core of its own."""

    name = "start-charts"

    def run(self, ctx: Context) -> StepResult:
        if not charts_possible(ctx.spec.card):
            return Skipped("the card has no section with a chart")
        ctx.drawer = Drawer.start()
        if ctx.drawer is None:
            return Skipped("the charts are drawn in this process (it cannot fork here)")
        return Done("a child process draws the charts")


class DrawChartEarly:
    """Step, right after the checks that parse: derive the card's facts from what they parsed, and have the
    charts drawn while the files are hashed: by the Drawer's child (StartDrawing), else on a background thread,
    unless many files are hashed by threads of this process (builder/hashing.py Hashing.stalls_beside_python: the
    drawing, Python holding the GIL ~0.5 s a chart, would hold them up).

    Neither needs a digest (render-card adds the files table); RenderCard then finds the PNGs drawn (card/chart.py
    memoizes them, locked), or draws them itself. Asked before the scans and the checks' gate: on 16 cores the
    charts drawn after them were not ready when the hashing ended (bench/RESULTS.md, issue 41).
    """

    name = "draw-chart"

    def run(self, ctx: Context) -> StepResult:
        if ctx.problems:  # the gate after the scans stops the build: the evidence may be half parsed
            return Skipped("the checks found problems: no card to derive")
        derived = derive_card(ctx.spec, ctx.selected_kind(), Evidence.of(ctx.parsed))
        ctx.derived.add(CARD_NAME, derived)
        facts, emap = derived.facts, derived.facts.map
        wanted = (emap.chart and facts.kind_facts.chart_series) or (emap.note_chart and facts.kind_facts.note_series)
        if not wanted or derived.map_problems or derived.problems:
            return Skipped("no chart to draw early (render-card reports why, if anything is wrong)")
        if ctx.hashing is not None and ctx.hashing.stalls_beside_python:
            return Skipped(
                f"the charts are drawn after the hashing: beside {len(ctx.hashing.todo):,} files being hashed "
                "in this process, drawing them would stall it (each file's hashing needs the GIL the drawing holds)"
            )
        if ctx.drawer is not None:
            ctx.drawer.ask(wanted_charts(ctx.spec, facts))
            return Done("the child draws the charts while the files are hashed")
        # Not a daemon: a daemon thread inside matplotlib when the interpreter exits (Ctrl-C mid-hash) can
        # crash it; the exit waits for the drawing instead (well under a second).
        threading.Thread(target=drawn, args=(ctx.spec, facts), daemon=False).start()
        return Done("drawing the charts while the files are hashed")


class PrepareCard:
    """Step: while the files are being hashed, not after, import what rendering and linting the card need
    (huggingface_hub's ModelCard and its YAML, jinja2's sandbox, markdown-it), compile the template and read
    the front matter back (card/render.py prepare): on many cores the hashing ends last, and this was most of
    what the build did after it (bench/RESULTS.md, issue 41)."""

    name = "prepare-card"

    def run(self, ctx: Context) -> StepResult:
        derived = ctx.derived.one(Derived)
        if ctx.hashing is None or not ctx.hashing.todo:
            return Skipped("nothing is being hashed: the card is prepared when it is rendered")
        if derived is None or derived.problems or derived.map_problems:
            return Skipped("render-card reports the card's problems")
        import markdown_it  # noqa: F401 - the card lint's

        kind = ctx.selected_kind()
        prepare(ctx.spec, kind, derived, template_for(ctx.spec, ctx.template, kind))
        return Done("the card's template compiled and its front matter read while the files are hashed")


class RenderCard:
    """Step: render the chart and README.md into the staging folder and add them to the release."""

    name = "render-card"

    def run(self, ctx: Context) -> StepResult:
        if not ctx.release_digest:
            return Skipped("no release digest to quote")
        if ctx.drawer is not None:  # the charts it drew go to the memo that produce() draws from
            ctx.drawer.remember()
        derived = _derived(ctx)
        # .eval_results/ first: a file of the release like any other, so the card's files table lists it
        results, problems = eval_results_text(
            derived.facts.map, derived.evidence, ctx.spec.repo_id, ctx.spec.version, f"{ctx.spec.path.name} [card]"
        )
        if problems:
            ctx.problems.extend(problems)
            return Skipped("the card was not written (see the problems)")
        if results is not None:
            _generated(ctx, EVAL_RESULTS_NAME, results.encode("utf-8"), EVAL_RESULTS_ROLE)
        derived = replace(
            derived, evidence=replace(derived.evidence, files=file_rows(ctx.files), changes=_changes(ctx))
        )
        kind = ctx.selected_kind()
        template = template_for(ctx.spec, ctx.template, kind)
        rendered, problems = produce(ctx.spec, kind, derived.evidence, ctx.release_digest, template, derived)
        ctx.problems.extend(problems)
        if rendered is None or problems:
            return Skipped("the card was not written (see the problems)")
        ctx.derived.add(CARD_NAME, replace(derived, facts=rendered.facts))  # the facts as rendered: what lint checks
        ctx.card_record = rendered.facts.map.as_dict()
        for key in rendered.facts.map.placeholders:  # rendered all the same: the author sees the card it makes
            logger.warning(
                "warning: %s: %s; push refuses it until then (or pass --allow-placeholder)",
                ctx.spec.path.name,
                placeholder_message(key, kind.card_placeholders),
            )
        for path, png in rendered.charts.items():
            _generated(ctx, path, png, CHART_ROLE)
        _generated(ctx, CARD_NAME, rendered.text.encode("utf-8"), CARD_ROLE)
        return Done(" and ".join([f"{CARD_NAME} ({len(rendered.text)} chars)", *rendered.charts]))


class LintCard:
    """Step: lint the card just rendered, against the facts it was rendered from."""

    name = "lint-card"

    def run(self, ctx: Context) -> StepResult:
        card = next((f for f in ctx.files if f.role == CARD_ROLE), None)
        if card is None:
            return Skipped("no card was rendered")
        derived = _derived(ctx)
        problems = lint_text(
            card.staged.read_text("utf-8"),
            release_files={f.path_in_repo for f in ctx.files},
            release_digest=ctx.release_digest or None,
            version=ctx.spec.version,
            evidence=derived.evidence,
            emap=derived.facts.map,
            label=card.path_in_repo,
            repo_id=ctx.spec.repo_id,
            facts=derived.facts,
        )
        ctx.problems.extend(problems)
        return Done(f"{len(problems)} card problem(s)" if problems else "card lint clean")


def _derived(ctx: Context) -> Derived:
    derived = ctx.derived.one(Derived)
    if derived is None:
        raise AssertionError("draw-chart derives the card's facts before the card steps that use them")
    return derived
