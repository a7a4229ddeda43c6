"""Push's apply: the release's one commit (landed detection after a lost answer), then the version tag
(a --force-tag move put back when it fails)."""

from __future__ import annotations

import shlex

from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

from release.errors import Problem, PublishRefused, ReleaseError, RemoteError
from release.history.compare import Changes, describe
from release.hub.client import (
    ATTEMPTS,
    branch_commit,
    commit_id,
    is_transient,
    list_refs,
    remote_errors,
    remote_files,
    tag_commit,
    wait_before_retry,
    with_retries,
)
from release.publish.commit_stream import commit_header, send_commit, upload_content
from release.publish.context import PushContext
from release.publish.landed import differences
from release.publish.upload_meter import CHANGED_WHILE_SENT
from release.staged import moved_since


def create_repo(ctx: PushContext) -> None:
    """Create the repo the preflight found missing; the plan's parent becomes the commit the Hub started it with."""
    plan, api = ctx.plan, ctx.hub.api
    with remote_errors(plan.repo_id, "creating the repo"):
        with_retries(
            lambda: api.create_repo(plan.repo_id, private=bool(ctx.options.private), exist_ok=True), "creating the repo"
        )
    plan.head = branch_commit(list_refs(ctx.hub, plan.repo_id))


def commit_release(ctx: PushContext, xet: bool) -> tuple[str, str | None]:
    """The release's one commit on top of plan.head: (commit id, pull request URL).

    Each attempt uploads the content the Hub lacks and streams the commit (commit_stream.py), POSTed once. After a
    transient failure nobody knows whether the commit landed, so main is re-read first: holding exactly the planned
    tree, it did (the answer was lost); still at plan.head, the commit is sent again with the same parent, which makes a
    duplicate commit impossible. A 412 (main moved since the preflight) is read the same way: an earlier push of this
    same release, killed with its commit in flight, may have landed since. A pull request is never retried: a second
    attempt could open a second pull request.
    """
    plan, what = ctx.plan, "committing the release"
    with remote_errors(plan.repo_id, what):
        for attempt in range(1, ATTEMPTS + 1):
            _unchanged_since_preflight(ctx)  # before any byte is read for sending (a 2 GiB upload, say)
            try:
                body = upload_content(
                    ctx,
                    xet,
                    commit_header(
                        f"Release {plan.version} (release digest {ctx.manifest.release_digest[:12]})",
                        "\n\n".join(
                            part
                            for part in (
                                _description(ctx),
                                f"Published by hf-release {ctx.manifest.tool_version}.",
                                f"release_digest: {ctx.manifest.release_digest}",
                            )
                            if part
                        ),
                        plan.head,
                    ),
                )
                oid, pr_url = send_commit(ctx.hub, plan.repo_id, body, create_pr=ctx.options.create_pr)
                return commit_id(plan.repo_id, what, oid), pr_url
            except Exception as exc:
                refused = _refusal_in(exc)  # huggingface_hub wraps what an upload thread raised in a RuntimeError
                if refused is not None:
                    raise refused from None
                moved = isinstance(exc, HfHubHTTPError) and exc.response is not None and exc.response.status_code == 412
                if ctx.options.create_pr or not (moved or is_transient(exc)):
                    raise
                landed = _landed(ctx)  # raises if main moved to anything but this release
                if landed is not None:
                    return landed, None
                if moved or attempt == ATTEMPTS:
                    raise
                wait_before_retry(attempt, exc, what)
    raise AssertionError("unreachable")


def _unchanged_since_preflight(ctx: PushContext) -> None:
    """Every file to send still has the stat the preflight saw (cheap: no byte read); else nothing is sent."""
    problems = [
        Problem(path, CHANGED_WHILE_SENT.format(what=what))
        for path, _ in ctx.plan.add + ctx.plan.change
        if (what := moved_since(ctx.staged.dist / path, ctx.seen.get(path)))
    ]
    if problems:
        raise PublishRefused(problems)


def _refusal_in(exc: BaseException) -> PublishRefused | None:
    seen: BaseException | None = exc
    for _ in range(8):  # a bounded walk down the causes
        if seen is None or isinstance(seen, PublishRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _landed(ctx: PushContext) -> str | None:
    """main's commit if it already holds exactly this push's tree; None if main is still at plan.head."""
    plan = ctx.plan
    refs = list_refs(ctx.hub, plan.repo_id)
    head = branch_commit(refs)
    if head == plan.head or head is None:
        return None
    if not differences(ctx, remote_files(ctx.hub, plan.repo_id, head)):
        return head
    tagged = tag_commit(refs, plan.version)
    if tagged is not None and tagged != plan.tag_commit:  # the race was for this very version
        raise PublishRefused(
            f"was published by another push during this one (tag at {tagged}, other files); nothing of "
            "this push was committed; publish a new version, or pass --force-tag to replace it deliberately",
            file=f"{plan.repo_id}@{plan.version}",
        )
    raise RemoteError(
        f"main moved from {plan.head} to {head} during the push and does not hold this release "
        "(another push?); nothing of this push was committed; run the push again to re-plan",
        file=plan.repo_id,
    )


def _description(ctx: PushContext) -> str:
    """The author's --message, then what changed since the previous version (recorded in release.json at build)."""
    recorded = ctx.manifest.changes
    return describe(Changes.from_dict(recorded) if recorded is not None else None, ctx.options.message)


def tag_release(ctx: PushContext, commit: str | None) -> None:
    """Create (or with --force-tag, move) the version tag. A moved tag whose re-creation fails is put back
    where it was: a published version never ends up without its tag."""
    plan = ctx.plan
    if plan.tag == "move":
        try:
            with remote_errors(plan.repo_id, f"moving tag {plan.version}"):
                _delete_tag(ctx)
        except RemoteError as exc:
            raise RemoteError(
                [
                    *exc.problems,
                    Problem(
                        plan.repo_id,
                        f"tag {plan.version} still points at {plan.tag_commit}; the commit {commit} is on main; "
                        "run the push again with --force-tag to move the tag",
                    ),
                ]
            ) from None
    try:
        with remote_errors(plan.repo_id, f"tagging {plan.version}"):
            _create_tag(
                ctx,
                commit,
                f"{plan.version}: release digest {ctx.manifest.release_digest}\n\n{_description(ctx)}".strip(),
            )
    except ReleaseError as exc:
        if plan.tag == "move":
            raise _restore_tag(ctx, commit, exc) from None
        if isinstance(exc, RemoteError):
            raise RemoteError(
                [
                    *exc.problems,
                    Problem(
                        plan.repo_id,
                        f"the commit {commit} is on main but the tag {plan.version} is not; "
                        "run the push again to tag it",
                    ),
                ]
            ) from None
        raise


def _restore_tag(ctx: PushContext, commit: str | None, failure: ReleaseError) -> ReleaseError:
    """Put a deleted tag back at its old commit after moving it failed; the error to report either way."""
    plan, old = ctx.plan, ctx.plan.tag_commit
    assert old is not None
    try:
        with remote_errors(plan.repo_id, f"restoring tag {plan.version}"):
            _create_tag(ctx, old, f"{plan.version}: restored by hf-release after a failed --force-tag")
    except ReleaseError as again:
        return RemoteError(
            [
                *failure.problems,
                *again.problems,
                Problem(
                    plan.repo_id,
                    f"tag {plan.version} was deleted to be moved and could NOT be put back at its old commit {old}: "
                    f"once the Hub answers, restore it (`hf repos tag create {shlex.quote(plan.repo_id)} "
                    f"{shlex.quote(plan.version)} --revision {old}`) or move it to this release (`hf-release push "
                    f"{shlex.quote(plan.version)} --force-tag`)",
                ),
            ]
        )
    return type(failure)(
        [
            *failure.problems,
            Problem(
                plan.repo_id,
                f"tag {plan.version} is back at its old commit {old}; this release's commit {commit} is on main, "
                f"untagged; run the push again with --force-tag to move the tag",
            ),
        ]
    )


def _create_tag(ctx: PushContext, commit: str | None, message: str) -> None:
    """Create the version tag at `commit`, retrying transient failures. huggingface_hub sends the tag POST
    once, so after a failure or a 409 the refs are read: the tag already there at `commit` is success."""
    plan, api = ctx.plan, ctx.hub.api
    for attempt in range(1, ATTEMPTS + 1):
        try:
            api.create_tag(plan.repo_id, tag=plan.version, revision=commit, tag_message=message)
            return
        except Exception as exc:
            conflict = isinstance(exc, HfHubHTTPError) and exc.response is not None and exc.response.status_code == 409
            if not (conflict or is_transient(exc)):
                raise
            refs = list_refs(ctx.hub, plan.repo_id)
            there = tag_commit(refs, plan.version)
            if there == commit:
                return
            if there is not None:  # another push tagged this version meanwhile
                raise PublishRefused(
                    f"was tagged by another push during this one (at {there}); this push's commit {commit} is on "
                    "main, untagged; publish it as a new version, or pass --force-tag to move the tag to it",
                    file=f"{plan.repo_id}@{plan.version}",
                ) from None
            if conflict or attempt == ATTEMPTS:
                raise
            wait_before_retry(attempt, exc, f"tagging {plan.version}")


def _delete_tag(ctx: PushContext) -> None:
    plan, api = ctx.plan, ctx.hub.api
    for attempt in range(1, ATTEMPTS + 1):
        try:
            api.delete_tag(plan.repo_id, tag=plan.version)
            return
        except RevisionNotFoundError:
            if attempt == 1:
                raise
            return  # an earlier attempt deleted it, its answer was lost
        except Exception as exc:
            if attempt == ATTEMPTS or not is_transient(exc):
                raise
            wait_before_retry(attempt, exc, f"moving tag {plan.version}")
