"""Steps: select the release's kind, and check that [card] has what the kind requires."""

from __future__ import annotations

from release.checks.common import read_json
from release.errors import CheckFailed
from release.kinds import detect_kind, kind_named
from release.kinds.kind import KindFiles
from release.pipeline import Context, Done, Skipped, StepResult


class SelectKind:
    """Step: the spec's `[release] kind`, else the kind config.json shows (the config check reports a bad one)."""

    name = "select-kind"

    def run(self, ctx: Context) -> StepResult:
        declared = kind_named(ctx.spec.kind) if ctx.spec.kind else None
        if declared is not None:
            ctx.kind = declared
            return Done(f"{declared.name} (from the spec)")
        configs = ctx.by_role("config")
        config = None
        if len(configs) == 1:
            try:
                data = read_json(configs[0].staged, configs[0].path_in_repo)
                config = data if isinstance(data, dict) else None
            except CheckFailed:
                pass
        ctx.kind, why = detect_kind(config, [f.path_in_repo for f in ctx.files])
        return Done(f"{ctx.kind.name} (detected: {why})")


class CheckCardSpec:
    """Step: the [card] keys the kind requires (the schema leaves them optional for other kinds)."""

    name = "check-card-spec"

    def run(self, ctx: Context) -> StepResult:
        kind = ctx.selected_kind()
        missing = [key for key in kind.card_requires if not _given(ctx.spec.card, key)]
        for key in missing:
            ctx.problem(
                f"{ctx.spec.path.name} card",
                f"the {kind.name} kind needs [card.{key}]; add it (see the README's release kinds)",
            )
        return Done(
            f"[card] has what the {kind.name} kind needs" if not missing else f"{len(missing)} [card] key(s) missing"
        )


def _given(card: dict, dotted: str) -> bool:
    node: object = card
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


class CheckKindFiles:
    """Step: a kind whose files are its own (an adapter, GGUF files) reads and checks them all at once; what
    it read goes with the parsed evidence (`KindFiles`), for its card part."""

    name = "check-kind-files"

    def run(self, ctx: Context) -> StepResult:
        kind = ctx.selected_kind()
        check = kind.files_check
        if check is None:
            return Skipped(f"the {kind.name} kind checks its files by role")
        files = {f.path_in_repo: f.staged for f in ctx.files}
        facts, problems = check(files, ctx.spec.card)
        ctx.problems.extend(problems)
        if facts is not None:
            ctx.parsed.add(kind.name, KindFiles(facts))
        return Done(f"{kind.name} files read" + (f" ({len(problems)} problem(s))" if problems else ""))
