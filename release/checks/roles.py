"""Check the release's shape: the roles that must appear once for the others to be checked."""

from __future__ import annotations

from ..pipeline import Context, Done, StepResult

AT_MOST_ONE = ("config", "weights-index", "generation-config", "launcher", "ledger", "license")


class CheckRoles:
    name = "check-roles"

    def run(self, ctx: Context) -> StepResult:
        spec_name = ctx.spec.path.name
        for role in AT_MOST_ONE:
            files = ctx.by_role(role)
            if len(files) > 1:
                ctx.problem(spec_name, f"{len(files)} files have role {role!r} ({', '.join(f.path_in_repo for f in files)}); give one")
        if ctx.by_role("weights") and not ctx.by_role("config") and ctx.kind.weights_need_config:
            ctx.problem(spec_name, f"a {ctx.kind.name} release with weights needs a file with role 'config'; add config.json")
        return Done("roles consistent")
