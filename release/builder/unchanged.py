"""The build's step that proves no staged file changed while the build read it."""

from __future__ import annotations

import os

from release.errors import CheckFailed, Problem
from release.pipeline import Context, Done, StepResult
from release.staged import CHANGED_DURING_BUILD, moved
from release.staged.staged_file import StagedFile
from release.util.wording import counted


class UnchangedWhileBuilt:
    """Step, just before the manifest is written: every staged file still has the stat it had when it was
    staged (before any check parsed it). Catches an edit behind the hashing — a hard-linked source changed
    in place after its digest was taken — which would otherwise publish bytes the manifest does not list."""

    name = "unchanged-while-built"

    def run(self, ctx: Context) -> StepResult:
        problems = [
            Problem(f.path_in_repo, CHANGED_DURING_BUILD.format(what=why)) for f in ctx.files if (why := _changed(f))
        ]
        if problems:
            raise CheckFailed(problems)
        return Done(f"{counted(len(ctx.files), 'file')} (the card and chart included) unchanged since they were staged")


def _changed(f: StagedFile) -> str:
    try:
        now = os.stat(f.staged_name)
    except OSError:
        return "the file is gone"
    assert f.stat is not None, f"{f.path_in_repo} was staged without a stat"
    return moved(f.stat, now)
