"""Step: the rendered card presents this release's version as itself, never another known version.

Known versions are the project's (artifacts/*/release.toml) and the staged ones (dist/*/release.json):
a v6 spec copied from v5 with only `version` changed would otherwise publish "… (v5)" and
"Pin the revision: `v5`" beside revision="v6".
"""

from __future__ import annotations

from ..manifest import CARD_NAME, MANIFEST_NAME
from ..pipeline import Context, Done, Skipped, StepResult
from ..spec import SPEC_NAME
from ..versions import presented_versions, versions_under


class CardPresentsThisVersion:
    name = "card-version"

    def run(self, ctx: Context) -> StepResult:
        card = ctx.stage / CARD_NAME
        if not card.is_file():
            return Skipped("no card rendered")
        known = {ctx.spec.version, *versions_under(ctx.spec.reach, SPEC_NAME), *versions_under(ctx.stage.parent, MANIFEST_NAME)}
        found = presented_versions(card.read_text("utf-8"), ctx.spec.version, sorted(known))
        for line, message in found:
            ctx.problem(f"{CARD_NAME}:{line}", f"{message}; fix the spec's [card] text (init --from re-derives it)")
        return Done(f"presents {ctx.spec.version} only" if not found else f"{len(found)} places present another version")
