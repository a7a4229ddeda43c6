"""Check the release's shape: the roles that must appear once for the others to be checked, and the
roles of a kind's own files (release/kinds/ REGISTRY) only in a release of that kind."""

from __future__ import annotations

from release.kinds import kind_roles, role_kind
from release.pipeline import Context, Done, StepResult

AT_MOST_ONE = ("config", "weights-index", "generation-config", "launcher", "ledger", "license")


class CheckRoles:
    name = "check-roles"

    def run(self, ctx: Context) -> StepResult:
        spec_name = ctx.spec.path.name
        for role in (*AT_MOST_ONE, *(r.name for r in kind_roles() if r.at_most_one)):
            files = ctx.by_role(role)
            if len(files) > 1:
                ctx.problem(
                    spec_name,
                    f"{len(files)} files have role {role!r} ({', '.join(f.path_in_repo for f in files)}); "
                    "give one (the others take role 'extra')",
                )
        for f in ctx.files:
            owner = role_kind(f.role)
            if owner is not None and owner != (kind := ctx.selected_kind()).name:
                ctx.problem(
                    spec_name,
                    f"{f.path_in_repo} has role {f.role!r}, a role of the {owner} kind, but this release is "
                    f"of the {kind.name} kind; set [release] kind = \"{owner}\" or give the file role 'extra'",
                )
        if ctx.by_role("weights") and not ctx.by_role("config") and (kind := ctx.selected_kind()).weights_need_config:
            ctx.problem(
                spec_name, f"a {kind.name} release with weights needs a file with role 'config'; add config.json"
            )
        return Done("roles consistent")
