"""What the Hub took of the release: the preupload's answer read before the commit, the landed commit's listing
read before the tag. A tag is immutable, so it goes only on a commit that holds exactly the release."""

from __future__ import annotations

import shlex

from release.errors import Problem, PublishRefused, VerifyFailed
from release.hub.client import RemoteFile, remote_files
from release.publish.context import PushContext
from release.publish.files import matches
from release.staged.names import CARD_NAME, GITATTRIBUTES_NAME, HUB_FILES
from release.util.wording import exact_size

GITIGNORE_NAME = ".gitignore"


def refuse_what_the_hub_would_drop(ctx: PushContext, modes: dict[str, str]) -> None:
    """After the preupload, before the commit: a file the Hub says it would ignore (a `.gitignore` on the Hub or
    in the release) is refused, and so is a card the Hub would store in LFS (a `.gitattributes` rule: the Hub
    reads no metadata from an LFS pointer). `modes`: path -> regular | lfs | ignored, as the Hub answered."""
    repo = ctx.plan.repo_id
    where = "the release's" if GITIGNORE_NAME in ctx.wanted else f"{repo}'s"
    problems = [
        Problem(
            path,
            f"the Hub would leave this file out of the commit ({where} {GITIGNORE_NAME} ignores it); nothing was "
            f"committed; remove the rule from {GITIGNORE_NAME} on the Hub (or delete it: `hf repos delete-files "
            f"{shlex.quote(repo)} {GITIGNORE_NAME}`), then push again",
        )
        for path, mode in sorted(modes.items())
        if mode == "ignored"
    ]
    if modes.get(CARD_NAME) == "lfs":
        problems.append(
            Problem(
                CARD_NAME,
                f"the Hub would store the card in LFS (a rule of {repo}'s {GITATTRIBUTES_NAME} matches it) and read "
                f"no metadata from it; nothing was committed; remove the rule from {GITATTRIBUTES_NAME} on the Hub, "
                "then push again",
            )
        )
    if problems:
        raise PublishRefused(problems)


def kept_files(ctx: PushContext) -> dict[str, RemoteFile]:
    """main's files this push leaves as they are (--keep-extra, or no commit at all): neither the release's nor
    deleted by the plan's commit."""
    wanted, deleted = ctx.wanted, set(ctx.plan.delete if ctx.plan.commit_needed else ())
    return {p: f for p, f in ctx.present.at_head.items() if p not in wanted and p not in deleted and p not in HUB_FILES}


def differences(ctx: PushContext, files: dict[str, RemoteFile]) -> list[Problem]:
    """How a commit's listing differs from the release plus the kept files (none: it holds exactly them)."""
    wanted, kept = ctx.wanted, kept_files(ctx)
    problems = [Problem(path, "is missing from the commit") for path in sorted(wanted.keys() - files.keys())]
    problems += [
        Problem(
            path,
            f"differs in the commit ({exact_size(files[path].size)} on the Hub, {exact_size(wanted[path].size)} in the "
            "release)",
        )
        for path in sorted(wanted.keys() & files.keys())
        if not matches(files[path], wanted[path])
    ]
    problems += [
        Problem(path, "is in the commit but neither in the release nor kept")
        for path in sorted(files.keys() - wanted.keys() - kept.keys() - HUB_FILES)
    ]
    problems += [
        Problem(path, "was kept (--keep-extra) but changed in the commit")
        for path, f in sorted(kept.items())
        if path in files and files[path].blob_id != f.blob_id
    ]
    return problems


def require_landed(ctx: PushContext, commit: str) -> None:
    """Before the tag: the commit's own listing (by its id, not main's) holds exactly the release and the kept
    files. Else no tag is made, and the problem says how to repair: a re-run plans against main as it is now."""
    plan = ctx.plan
    problems = differences(ctx, remote_files(ctx.hub, plan.repo_id, commit))
    if problems:
        version = shlex.quote(plan.version)
        raise VerifyFailed(
            [
                *(Problem(f"{plan.repo_id}@{commit[:12]}:{p.file}", p.message) for p in problems),
                Problem(
                    plan.repo_id,
                    f"the commit {commit} on main does not hold exactly release {plan.version}, so tag {plan.version} "
                    f"was not created; remove what made the Hub change it (a {GITIGNORE_NAME} or "
                    f"{GITATTRIBUTES_NAME} rule on the Hub), then run `hf-release push {version}` again: it commits "
                    "what is missing and tags that commit",
                ),
            ]
        )
