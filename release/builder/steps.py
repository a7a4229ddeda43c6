"""The build's steps, in the order they run, and the two that belong to no other module.

Data flows one way: spec → staged files → checks and digests → card → manifest. The manifest comes last:
it lists the card and holds its digest. Every Gate stops the build when earlier steps found problems.
"""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import Any

from release.builder.collect import Collect
from release.builder.hashing import Digest
from release.builder.limits import CommitLimits, HubLimits
from release.builder.manifest_steps import ReleaseDigest, WriteManifest
from release.builder.previous import read_small
from release.builder.previous_spec import stat_key
from release.builder.proof import ProveLoad
from release.builder.unchanged import UnchangedWhileBuilt
from release.card.steps import DrawChartEarly, LintCard, PrepareCard, RenderCard, StartDrawing
from release.checks.bench import BenchRun
from release.checks.order import DIGEST_CHECKS, PARSING_CHECKS, SCANNING_CHECKS
from release.evidence.lm_eval import LmEvalRun
from release.history.compare import SMALL_FILE, Changes, Snapshot, Unread, compare, release_metrics
from release.history.provenance import measured_on, model_digest, reused
from release.kinds.kind import Kind
from release.pipeline import Context, Done, Gate, PreviousSpec, Skipped, Step, StepResult
from release.spec import SPEC_NAME
from release.spec.versions import presented_versions, sort_versions, versions_under
from release.staged.names import CARD_NAME, MANIFEST_NAME
from release.util.wording import counted


class CompareWithPrevious:
    """What changed since the previous version (found before staging, see build), and this release's metrics.

    The metrics come from what the bench and eval checks parsed (a file over SMALL_FILE counts for none,
    as release.json has always recorded them); only a changed config or ledger is read again, to diff it.
    Then which version measured each evidence file (release/history/provenance.py): stale evidence is a problem."""

    name = "changes"

    def run(self, ctx: Context) -> StepResult:
        small = {f.path_in_repo for f in ctx.files if not f.generated and f.size <= SMALL_FILE}
        bench = {path: run.cells for path, run in ctx.parsed.of(BenchRun).items() if path in small}
        evals = {path: run.results for path, run in ctx.parsed.of(LmEvalRun).items() if path in small}
        metrics = release_metrics(bench, evals, ctx.spec.card.get("bench", {}).get("current", {}).get("files"))
        entries = {
            f.path_in_repo: f for f in ctx.files if not f.generated
        }  # each file's own record (role, size, sha256)
        current = Snapshot(ctx.spec.version, entries, lambda path: read_small(entries[path].staged), metrics)
        unread = ctx.previous[1] if ctx.previous and isinstance(ctx.previous[1], Unread) else None
        previous = _resolved(ctx.previous, ctx)
        changes = (
            compare(current, previous[1] if previous else None, previous[0] if previous else None)
            if unread is None
            else Changes(since=None, notes=[f"{unread.version} exists but its release is not here: {unread.why}"])
        )
        roles = ctx.kind.model_roles if ctx.kind is not None else Kind.model_roles
        ctx.evidence = measured_on(
            current, previous[1] if previous else None, roles, ctx.spec.card, unread.version if unread else None
        )
        evidence = reused(ctx.evidence, ctx.spec.version, model_digest(entries, roles), ctx.spec.card)
        _refuse_stale(ctx, evidence)
        ctx.changes, ctx.metrics = replace(changes, evidence=evidence), metrics
        if unread is not None:
            return Done(f"not compared: {unread.version}'s release is not here ({unread.why})")
        if changes.since is None:
            return Done("first release: nothing to compare with")
        return Done(
            f"since {changes.since}: {counted(len(changes.files), 'file')}, "
            f"{counted(len(changes.config), 'config key')}, {counted(len(changes.metrics), 'metric')}, "
            f"{counted(len(changes.ledger_rows_added), 'ledger row')} changed"
        )


def _resolved(
    previous: tuple[str, Snapshot | PreviousSpec | Unread] | None, ctx: Context
) -> tuple[str, Snapshot] | None:
    """The previous version as a Snapshot: a spec's files are hashed now, reusing this build's digests of the
    files they share; None for one that cannot be read."""
    if previous is None:
        return None
    label, found = previous
    if isinstance(found, Unread):
        return None
    if isinstance(found, Snapshot):
        return label, found
    known = {stat_key(f.stat): f.sha256 for f in ctx.files if f.stat is not None and f.sha256}
    return label, found.snapshot(known)


def _refuse_stale(ctx: Context, evidence: list[dict[str, Any]]) -> None:
    """Evidence of other weights is never presented as this version's: stale files unless declared, and the
    current bench label naming this version over measurements of another."""
    version = ctx.spec.version
    for row in evidence:
        path, when = row["path"], row["measured_on"]
        if row.get("model_changed") and "still_applies" not in row:
            ctx.problem(
                path,
                f"measured on {when} and unchanged since, but the model changed since {when}: it is stale as "
                f"{version}'s evidence; measure {version} again, or declare that it still applies: "
                f'[[card.still_applies]] files = ["{path}"], reason = "why it holds for these weights"',
            )
    current = ctx.spec.card.get("bench", {}).get("current") or {}
    shown = [row for row in evidence if any(fnmatch.fnmatchcase(row["path"], p) for p in current.get("files", ()))]
    older = sort_versions({row["measured_on"] for row in shown if row["measured_on"]})
    if current.get("label") == version and older:
        ctx.problem(
            f"{ctx.spec.path} card.bench.current.label",
            f"is {version!r}, but its files were measured on {', '.join(older)}; label them {older[-1]!r} "
            "(init --from keeps the label of reused bench files)",
        )


class CardPresentsThisVersion:
    """The rendered card presents this release's version as itself, never another known version.

    Known versions are the project's (artifacts/*/release.toml) and the staged ones (dist/*/release.json):
    a v6 spec copied from v5 with only `version` changed would otherwise publish "… (v5)" and
    "Pin the revision: `v5`" beside revision="v6"."""

    name = "card-version"

    def run(self, ctx: Context) -> StepResult:
        card = ctx.stage / CARD_NAME
        if not card.is_file():
            return Skipped("no card rendered")
        known = {
            ctx.spec.version,
            *versions_under(ctx.spec.reach, SPEC_NAME),
            *versions_under(ctx.stage.parent, MANIFEST_NAME),
        }
        found = presented_versions(card.read_text("utf-8"), ctx.spec.version, sorted(known))
        for line, message in found:
            ctx.problem(f"{CARD_NAME}:{line}", f"{message}; fix the spec's [card] text (init --from re-derives it)")
        return Done(
            f"presents {ctx.spec.version} only" if not found else f"{len(found)} places present another version"
        )


BUILD_STEPS: tuple[Step, ...] = (
    StartDrawing(),
    Collect(),
    HubLimits(),
    *PARSING_CHECKS,
    DrawChartEarly(),
    *SCANNING_CHECKS,
    Gate("checks"),
    PrepareCard(),
    Digest(),
    *DIGEST_CHECKS,
    Gate("expected-digests"),
    CompareWithPrevious(),
    ReleaseDigest(),
    ProveLoad(),
    RenderCard(),
    CardPresentsThisVersion(),
    LintCard(),
    Gate("card-lint"),
    UnchangedWhileBuilt(),
    CommitLimits(),
    WriteManifest(),
)
