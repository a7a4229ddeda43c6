"""The build's two steps that hold a release to the Hub's limits (release/hub/limits.py): its files' sizes, right
after collecting, and the counts of the commit a push will send, once the card and chart are written."""

from __future__ import annotations

import os

from release.hub.limits import count_limits, size_limits, warn
from release.pipeline import Context, Done, StepResult
from release.staged.names import bookkeeping
from release.util.wording import counted


class HubLimits:
    """Build step, right after collecting: a file the Hub would refuse fails the build before anything is hashed."""

    name = "hub-limits"

    def run(self, ctx: Context) -> StepResult:
        errors, warnings = size_limits(
            [(f.path_in_repo, f.stat.st_size if f.stat else os.stat(f.staged_name).st_size) for f in ctx.files]
        )
        ctx.problems.extend(errors)
        warn(warnings)
        return Done(
            f"{counted(len(ctx.files), 'file')} from the spec within the Hub's size limits"
            + (f", {counted(len(warnings), 'warning')}" if warnings else "")
        )


class CommitLimits:
    """Build step, once the card and chart are written: the counts of the commit a push will send (release.json
    and SHA256SUMS included), the very files push's preflight counts."""

    name = "commit-limits"

    def run(self, ctx: Context) -> StepResult:
        files = [(f.path_in_repo, f.size) for f in ctx.files] + [(name, 0) for name in bookkeeping("manifest", "sums")]
        warnings = count_limits(files, repo_id=ctx.spec.repo_id)
        warn(warnings)
        return Done(
            f"{counted(len(files), 'file')} to push with release.json and SHA256SUMS"
            + (f", {counted(len(warnings), 'warning')}" if warnings else "")
        )
