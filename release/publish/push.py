"""`hf-release push`: publish the staged release as one atomic commit plus an immutable tag.

Plan, then apply (pip-tools' shape): every precondition runs as a preflight before any byte is
sent (preflight.py), the plan is a pure function of what the release and the Hub hold (plan.py), and
`--dry-run` prints exactly the plan a real run carries out (apply.py), before remote verify checks the tag.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

from release.hub.client import use_xet, xet_offered
from release.publish.apply import commit_release, create_repo, tag_release
from release.publish.context import PushOptions
from release.publish.landed import kept_files, require_landed
from release.publish.plan import PushPlan
from release.publish.preflight import preflight
from release.publish.verify_remote import verify_remote
from release.staged.locks import version_lock

__all__ = ["PushOptions", "PushResult", "push"]


@dataclass
class PushResult:
    plan: PushPlan
    url: str
    commit: str | None = None
    tag: str | None = None
    pr_url: str | None = None
    bytes_sent: int = 0  # measured: file bytes the upload read to send (LFS streams, inline small files)
    bytes_skipped: int = (
        0  # release bytes not sent because the Hub already held them (unchanged, or LFS content stored)
    )
    bytes_measured: bool = True  # False through Xet where hf_xet's report could not be had (xet_meter.py)
    xet: bool = False  # the commit's files went through Xet (offered by the Hub and not switched off), not LFS
    # Over Xet, measured: bytes of the files' chunks that were new (sent, before compression) and deduplicated
    # (the Hub held them, or the release repeats them: not sent); None over LFS
    xet_new: int | None = None
    xet_deduplicated: int | None = None
    xet_files: dict[str, tuple[int, int]] | None = None  # path in the repo -> its (new, deduplicated) bytes
    verified: bool = False
    token_checked: bool = True  # False: a dry run without a token skipped the token and permission checks


def push(dist: Path, options: PushOptions, *, version: str | None = None) -> PushResult:
    """Preflight, then (unless a dry run) one commit with exactly the release, then the tag, then remote verify.
    `version`: the one the user named; the staged release must be that version's.

    The version's lock is held (shared) throughout (release/staged/locks.py): a rebuild cannot replace the staged
    files between the preflight's look at them and the tag's closing check."""
    if not dist.parent.is_dir():  # nothing staged there to protect: the preflight says what is missing
        return _push(dist, options, version)
    with version_lock(dist, f"hf-release push {dist.name}", shared=True):  # pushes to two Hubs may run side by side
        return _push(dist, options, version)


def _push(dist: Path, options: PushOptions, version: str | None) -> PushResult:
    ctx = preflight(dist, options, version=version)
    plan, hub = ctx.plan, ctx.hub
    result = PushResult(plan, hub.repo_url(plan.repo_id), token_checked=bool(hub.api.token))
    if options.dry_run:
        return result
    if not plan.repo_exists:
        create_repo(ctx)
    commit = plan.tag_commit if plan.tag == "keep" else plan.head
    if plan.commit_needed:
        # The transport used, not merely offered: HF_HUB_DISABLE_XET=1 sends over LFS, whose bytes are metered.
        result.xet = use_xet(xet_offered(hub, plan.repo_id))
        (enable_progress_bars if options.progress else disable_progress_bars)()
        commit, result.pr_url = commit_release(ctx, result.xet)
        meter = ctx.meter
        result.bytes_measured = not result.xet or meter.xet_measured
        if not result.bytes_measured:  # hf_xet's report could not be had (xet_meter.py)
            result.bytes_sent = plan.bytes_to_send
        elif result.xet:  # small files inline in the commit, then xorbs and shards as hf_xet reports them
            result.bytes_sent = meter.bytes_sent + meter.xet.wire
            result.bytes_skipped = meter.xet.deduplicated
            result.xet_new, result.xet_deduplicated = meter.xet.new, meter.xet.deduplicated
            dist = ctx.staged.dist
            result.xet_files = {Path(p).relative_to(dist).as_posix(): v for p, v in meter.xet.files.items()}
        else:
            result.bytes_sent = meter.bytes_sent
            result.bytes_skipped = meter.already_held(plan.add + plan.change)
    result.bytes_skipped += sum(size for _, size in plan.unchanged)
    result.commit = commit
    if plan.tag in ("create", "move"):
        assert commit is not None  # a repo the push created or found has a main
        require_landed(ctx, commit)  # the tag goes only on a commit holding exactly the release
        tag_release(ctx, commit)
        result.tag = plan.version
    elif plan.tag == "keep":
        result.tag = plan.version
    if plan.tag != "none":
        verify_remote(
            hub, ctx.staged, revision=plan.version, commit=commit, wanted=ctx.wanted, kept=kept_files(ctx).keys()
        )
        result.verified = True
    return result
