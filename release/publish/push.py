"""`hf-release push`: publish the staged release as one atomic commit plus an immutable tag.

Plan, then apply (pip-tools' shape): every precondition runs as a preflight before any byte is
sent, and `--dry-run` prints exactly the plan a real run would carry out.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, HFValidationError, RevisionNotFoundError
from huggingface_hub.utils import disable_progress_bars, enable_progress_bars, validate_repo_id

from ..errors import InputError, Problem, PublishRefused, ReleaseError, RemoteError, combine, first_line
from ..limits import PushLimits
from ..manifest import CARD_NAME, MANIFEST_NAME, SIGNATURE_NAME, Manifest
from ..pipeline import Done, Skipped, StepResult, run_steps
from .client import (
    ATTEMPTS,
    HUB_FILES,
    Expected,
    HubClient,
    RemoteFile,
    connect,
    is_transient,
    matches,
    release_paths,
    remote_errors,
    remote_files,
    require_token,
    use_xet,
    verify_remote,
    wait_before_retry,
    with_retries,
    xet_offered,
)
from ..changes import Changes, describe
from ..staging import changed_since_build
from ..versions import version_key
from .upload_meter import CHANGED_SINCE_BUILD, MeteredAdd, UploadMeter


# LFS uploads at once (the client's default is 5). A killed push loses the part-uploaded content of every file
# in flight (multipart parts are not resumable across processes through the client): 2 bounds that loss to
# two shards while still overlapping one file's tail with the next one's start. Xet manages its own transfers.
LFS_FILES_IN_FLIGHT = 2


@dataclass(frozen=True)
class PushOptions:
    endpoint: str | None = None
    token: str | None = field(default=None, repr=False)
    dry_run: bool = False
    force_tag: bool = False
    keep_extra: bool = False
    create_pr: bool = False
    private: bool | None = None
    overwrite_card: bool = False
    allow_older: bool = False  # let main go back to an older version than the one it holds
    progress: bool = False
    message: str | None = None  # the author's words, before the generated list of changes


@dataclass
class PushPlan:
    repo_id: str
    version: str
    repo_exists: bool = False
    head: str | None = None  # main's commit seen at preflight: the commit's parent
    add: list[tuple[str, int]] = field(default_factory=list)
    change: list[tuple[str, int]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    unchanged: list[tuple[str, int]] = field(default_factory=list)
    tag: str = "create"  # create | keep (already published, same content) | move (--force-tag) | none (--create-pr)
    tag_commit: str | None = None
    warnings: list[str] = field(default_factory=list)  # the Hub's recommendations this release crosses

    @property
    def commit_needed(self) -> bool:
        return self.tag != "keep" and bool(self.add or self.change or self.delete)

    @property
    def bytes_to_send(self) -> int:
        return sum(size for _, size in self.add + self.change) if self.commit_needed else 0

    def as_dict(self) -> dict[str, object]:
        return {
            "repo_id": self.repo_id, "version": self.version, "repo_exists": self.repo_exists, "head": self.head,
            "add": [{"path": p, "size": s} for p, s in self.add],
            "change": [{"path": p, "size": s} for p, s in self.change],
            "delete": self.delete,
            "unchanged": [{"path": p, "size": s} for p, s in self.unchanged],
            "commit": self.commit_needed, "tag": self.tag, "bytes_to_send": self.bytes_to_send, "warnings": self.warnings,
        }


@dataclass
class PushResult:
    plan: PushPlan
    url: str
    commit: str | None = None
    tag: str | None = None
    pr_url: str | None = None
    bytes_sent: int = 0  # measured: file bytes the upload read to send (LFS streams, inline small files)
    bytes_skipped: int = 0  # release bytes not sent because the Hub already held them (unchanged, or LFS content stored)
    bytes_measured: bool = True  # False through Xet, whose transfer is not visible to the caller
    xet: bool = False
    verified: bool = False


@dataclass
class PushContext:
    dist: Path
    manifest: Manifest
    options: PushOptions
    hub: HubClient
    plan: PushPlan
    wanted: dict[str, Expected]  # every path the release holds, as release.json says (remote.release_paths)
    remote_head: dict[str, RemoteFile] = field(default_factory=dict)
    meter: UploadMeter = field(default_factory=UploadMeter)
    refused: list[Problem] = field(default_factory=list)
    failed: list[ReleaseError] = field(default_factory=list)  # preflight problems that are not refusals
    log: list[tuple[str, StepResult]] = field(default_factory=list)


# --- preflight: everything that can fail before publishing ---------------------------------------


class StagedUnchanged:
    name = "staged-unchanged"

    def run(self, ctx: PushContext) -> StepResult:
        problems, rehashed = changed_since_build(ctx.dist, ctx.manifest)
        ctx.refused.extend(problems)
        signer = (ctx.manifest.card or {}).get("signature")
        if signer and not (ctx.dist / SIGNATURE_NAME).is_file():  # the card would send readers to a missing signature
            ctx.refused.append(Problem(SIGNATURE_NAME, f"is missing: the card tells readers to check a {signer} signature; "
                                                       "run `hf-release sign` first"))
        return Done(f"files unchanged since build ({rehashed} bytes re-hashed)")


class TokenCanWrite:
    name = "token"

    def run(self, ctx: PushContext) -> StepResult:
        if ctx.options.dry_run and not ctx.hub.api.token:
            return Skipped("dry run without a token")
        require_token(ctx.hub.api.token)
        with remote_errors(ctx.plan.repo_id, f"checking the token with {ctx.hub.endpoint}"):
            who = with_retries(ctx.hub.api.whoami, "checking the token")
        role = who.get("auth", {}).get("accessToken", {}).get("role")
        if role == "read":  # an authorization failure, found before the Hub answers a write with 403
            ctx.failed.append(RemoteError(f"is read-only for {who.get('name', '?')}; use a token with write access", file="token"))
        return Done(f"token of {who.get('name', '?')} ({role or 'unknown role'})")


class RemoteState:
    name = "remote-state"

    def run(self, ctx: PushContext) -> StepResult:
        plan, api = ctx.plan, ctx.hub.api
        with remote_errors(plan.repo_id, "reading the repo"):
            plan.repo_exists = with_retries(lambda: api.repo_exists(plan.repo_id), "reading the repo")
            if not plan.repo_exists:
                return Done("repo does not exist yet: push creates it")
            refs = with_retries(lambda: api.list_repo_refs(plan.repo_id), "reading refs")
        plan.head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        tag = next((t for t in refs.tags if t.name == plan.version), None)
        plan.tag_commit = tag.target_commit if tag else None
        if plan.head:
            ctx.remote_head = remote_files(ctx.hub, plan.repo_id, plan.head)
        return Done(f"main at {plan.head}, tag {plan.version} {'at ' + tag.target_commit if tag else 'free'}")


class TagFree:
    """A published version is immutable: its tag may only be re-pointed deliberately (--force-tag)."""

    name = "tag-free"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        if ctx.options.create_pr:
            plan.tag = "none"
        if plan.tag_commit is None:
            return Done(f"tag {plan.version} is free")
        at_tag = ctx.remote_head if plan.tag_commit == plan.head else remote_files(ctx.hub, plan.repo_id, plan.tag_commit)
        if _same_release(at_tag, ctx.wanted):
            plan.tag = "keep"
            return Done(f"{plan.version} is already published with exactly these files")
        if ctx.options.create_pr:  # a pull request publishes nothing: the tag stays where it is
            return Done(f"tag {plan.version} left alone (pull request)")
        if ctx.options.force_tag:
            plan.tag = "move"
            return Done(f"tag {plan.version} will be moved (--force-tag)")
        ctx.refused.append(
            Problem(
                f"{plan.repo_id}@{plan.version}",
                f"is already published (commit {plan.tag_commit[:12]}) with different files; "
                "publish a new version, or pass --force-tag to move the tag deliberately",
            )
        )
        return Done("tag taken")


class CardNotHandEdited:
    """Never silently overwrite a README edited by hand on the Hub."""

    name = "card-not-hand-edited"

    def run(self, ctx: PushContext) -> StepResult:
        remote = ctx.remote_head.get(CARD_NAME)
        if remote is None or ctx.plan.tag == "keep":
            return Skipped("no card on the Hub to replace")
        # Imported here, not at the top: release.card loads the card linter and through it the checks
        # (numpy, safetensors, jsonschema): ~0.2 s of every push's start-up that only this step needs.
        from ..card.mark import hand_edited
        from ..card.sandbox import MAX_OUTPUT_CHARS

        if remote.size > 4 * MAX_OUTPUT_CHARS:  # larger than any card hf-release renders: not ours, not downloaded
            edited: bool | None = None
        else:
            with tempfile.TemporaryDirectory() as tmp, remote_errors(ctx.plan.repo_id, "reading the Hub's README.md"):
                text = Path(with_retries(
                    lambda: hf_hub_download(ctx.plan.repo_id, CARD_NAME, revision=ctx.plan.head, endpoint=ctx.hub.endpoint,
                                            token=ctx.hub.api.token, cache_dir=tmp),
                    "reading the Hub's README.md",
                )).read_text("utf-8", errors="replace")
            edited = hand_edited(text)  # None: no hf-release mark at all; True: changed after hf-release wrote it
        if edited is not False and not ctx.options.overwrite_card:
            why = "has no hf-release mark" if edited is None else "was changed after hf-release generated it"
            ctx.refused.append(
                Problem(
                    f"{ctx.plan.repo_id}:{CARD_NAME}",
                    f"was edited by hand on the Hub ({why}); fold the edits into the spec, "
                    "or pass --overwrite-card to replace it",
                )
            )
            return Done("hand-edited card found")
        return Done("the Hub's card was generated by hf-release")


class NamesAccepted:
    """The repo id and every path are ones huggingface_hub accepts (it refuses e.g. '--' in a repo name,
    or a '.cache/' or '.git/' folder anywhere in a path): its own validation, before anything is sent."""

    name = "names-accepted"

    def run(self, ctx: PushContext) -> StepResult:
        refused = []
        for path in sorted(ctx.wanted):
            try:
                CommitOperationDelete(path_in_repo=path)  # validates the path; nothing is sent
            except ValueError as exc:
                refused.append(Problem(path, f"huggingface_hub refuses this path_in_repo ({first_line(exc)}); "
                                             "give the file another path_in_repo in the spec and build again"))
        try:
            validate_repo_id(ctx.manifest.repo_id)
        except HFValidationError as exc:  # no request can name this repo: the preflight ends here
            raise InputError([*refused, Problem(ctx.manifest.repo_id, f"huggingface_hub refuses this repo_id "
                                                f"({first_line(exc)}); give another repo_id in the spec and build again")]) from None
        if refused:
            ctx.failed.append(InputError(refused))
        return Done(f"huggingface_hub accepts the repo id, and refuses {len(refused)} paths")


class Plan:
    name = "plan"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        wanted = ctx.wanted
        for path, expected in sorted(wanted.items()):
            remote = ctx.remote_head.get(path)
            if remote is None:
                plan.add.append((path, expected.size))
            elif matches(remote, expected):
                plan.unchanged.append((path, expected.size))
            else:
                plan.change.append((path, expected.size))
        if not ctx.options.keep_extra:
            plan.delete = sorted(ctx.remote_head.keys() - wanted.keys() - HUB_FILES)
        return Done(f"{len(plan.add)} to add, {len(plan.change)} to change, {len(plan.delete)} to delete, {len(plan.unchanged)} unchanged")


MAX_MANIFEST_BYTES = 64 * 1024 * 1024  # release.json of 100k files is ~20 MB


class MainNotNewer:
    """`main` is what a download without --revision gets: publishing v1 after v2 would quietly move it back."""

    name = "main-not-newer"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        remote = ctx.remote_head.get(MANIFEST_NAME)
        if remote is None or ctx.options.create_pr or plan.tag == "keep":
            return Skipped("no hf-release version on main to compare with")
        if remote.size > MAX_MANIFEST_BYTES:  # bounded before downloading: not one we wrote
            return Done(f"main's {MANIFEST_NAME} is {remote.size:,} bytes, not an hf-release manifest")
        with tempfile.TemporaryDirectory() as tmp, remote_errors(plan.repo_id, f"reading the Hub's {MANIFEST_NAME}"):
            path = with_retries(lambda: hf_hub_download(plan.repo_id, MANIFEST_NAME, revision=plan.head, endpoint=ctx.hub.endpoint,
                                                        token=ctx.hub.api.token, cache_dir=tmp), f"reading the Hub's {MANIFEST_NAME}")
            try:
                on_main = json.loads(Path(path).read_bytes()).get("version")
            except (ValueError, AttributeError, RecursionError):
                on_main = None
        if not isinstance(on_main, str) or on_main == plan.version or version_key(on_main) < version_key(plan.version):
            return Done(f"main holds {on_main or 'no readable version'}")
        if ctx.options.allow_older:
            return Done(f"main goes back from {on_main} to {plan.version} (--allow-older)")
        ctx.refused.append(Problem(
            f"{plan.repo_id}@main",
            f"holds {on_main}, newer than {plan.version}: publishing {plan.version} would move main (what a download "
            "without --revision gets) back; publish a newer version, or pass --allow-older to do it deliberately",
        ))
        return Done("main holds a newer version")


PREFLIGHT = (StagedUnchanged(), PushLimits(), NamesAccepted(), TokenCanWrite(), RemoteState(), TagFree(), MainNotNewer(),
             CardNotHandEdited(), Plan())


def _same_release(remote: dict[str, RemoteFile], wanted: dict[str, Expected]) -> bool:
    extra = remote.keys() - wanted.keys() - HUB_FILES
    return not extra and all(p in remote and matches(remote[p], e) for p, e in wanted.items())


# --- apply ------------------------------------------------------------------------------------------


def plan_push(dist: Path, options: PushOptions) -> PushContext:
    try:
        manifest = Manifest.load(dist / MANIFEST_NAME)
    except InputError as exc:
        if not (dist / MANIFEST_NAME).is_file():
            raise
        # There but damaged: a staged file changed since build, refused like any other.
        raise PublishRefused(Problem(MANIFEST_NAME, exc.problems[0].message)) from None
    hub = connect(options.endpoint, options.token)
    ctx = PushContext(dist, manifest, options, hub, PushPlan(manifest.repo_id, manifest.version), release_paths(manifest, dist))
    try:
        run_steps(ctx, PREFLIGHT)
    except ReleaseError as exc:  # a step that cannot go on (no token, Hub unreachable) ends the preflight
        ctx.failed.append(exc)
    # The gate: every failed precondition is reported together, before anything is sent, with the exit
    # code the README's precedence rule gives.
    errors = ctx.failed + ([PublishRefused(ctx.refused)] if ctx.refused else [])
    if errors:
        raise combine(errors)
    return ctx


def push(dist: Path, options: PushOptions) -> PushResult:
    """Preflight, then (unless a dry run) one commit with exactly the release, then the tag, then remote verify."""
    ctx = plan_push(dist, options)
    plan, hub, api = ctx.plan, ctx.hub, ctx.hub.api
    result = PushResult(plan, hub.repo_url(plan.repo_id))
    if options.dry_run:
        return result
    if not plan.repo_exists:
        with remote_errors(plan.repo_id, "creating the repo"):
            with_retries(lambda: api.create_repo(plan.repo_id, private=bool(options.private), exist_ok=True), "creating the repo")
            refs = with_retries(lambda: api.list_repo_refs(plan.repo_id), "reading refs")
            plan.head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    commit = plan.tag_commit if plan.tag == "keep" else plan.head
    if plan.commit_needed:
        result.xet = xet_offered(hub, plan.repo_id)
        through_xet = use_xet(result.xet)
        (enable_progress_bars if options.progress else disable_progress_bars)()
        commit, result.pr_url = _commit(ctx, through_xet)
        result.bytes_measured = not result.xet
        result.bytes_sent = ctx.meter.bytes_sent if result.bytes_measured else plan.bytes_to_send
        if result.bytes_measured:
            result.bytes_skipped = ctx.meter.already_held(plan.add + plan.change)
    result.bytes_skipped += sum(size for _, size in plan.unchanged)
    result.commit = commit
    if plan.tag in ("create", "move"):
        _tag(ctx, commit)
        result.tag = plan.version
    elif plan.tag == "keep":
        result.tag = plan.version
    if plan.tag != "none":
        verify_remote(hub, ctx.manifest, dist, revision=plan.version, commit=commit, wanted=ctx.wanted)
        result.verified = True
    return result


def _operations(ctx: PushContext, xet: bool) -> list[CommitOperationAdd | CommitOperationDelete]:
    """Adds for new and changed files, deletes for stale ones.

    Every add carries the sha256 release.json lists (MeteredAdd, release/publish/upload_meter.py): a plain file's
    bytes are hashed as they are read for the commit and refused when they differ. Over LFS that sha256 is
    also the pointer's oid, which the Hub checks against the bytes it receives: it is preset, so a large
    file is not hashed a second time. hf_xet would take a preset sha256 without checking it, so over Xet it
    is left for hf_xet to compute, and `_commit` compares it with release.json before committing."""
    ops: list[CommitOperationAdd | CommitOperationDelete] = []
    for path, _ in ctx.plan.add + ctx.plan.change:
        expected = ctx.wanted[path].sha256
        op = MeteredAdd(path_in_repo=path, path_or_fileobj=str(ctx.dist / path), meter=ctx.meter, expected_sha256=expected)
        if not xet:
            op.upload_info.sha256 = bytes.fromhex(expected)
        ops.append(op)
    ops += [CommitOperationDelete(path_in_repo=path) for path in ctx.plan.delete]
    return ops


def _uploaded_as_built(ops: list[CommitOperationAdd | CommitOperationDelete]) -> None:
    """After a Xet preupload: the sha256 hf_xet computed over the bytes it sent is release.json's, or nothing
    is committed."""
    changed = [op.path_in_repo for op in ops if isinstance(op, MeteredAdd) and op.upload_info.is_hashed
               and op.upload_info.sha256.hex() != op.expected_sha256]
    if changed:
        raise PublishRefused([Problem(path, CHANGED_SINCE_BUILD) for path in changed])


def _commit(ctx: PushContext, xet: bool) -> tuple[str, str | None]:
    """The release's one commit on top of plan.head: (commit id, pull request URL).

    huggingface_hub sends the commit POST once. After a transient failure nobody knows whether the commit
    landed, so main is re-read first: holding exactly the planned tree, it did (the answer was lost); still
    at plan.head, the commit is sent again with the same parent, which makes a duplicate commit impossible.
    A 412 (main moved since the preflight) is read the same way: an earlier push of this same release,
    killed with its commit in flight, may have landed since. A pull request is never retried: a second
    attempt could open a second pull request.
    """
    plan, api, what = ctx.plan, ctx.hub.api, "committing the release"
    with remote_errors(plan.repo_id, what):
        for attempt in range(1, ATTEMPTS + 1):
            try:
                operations = _operations(ctx, xet)
                if xet:  # upload first, check what hf_xet hashed, then commit (the uploaded content is not sent again)
                    api.preupload_lfs_files(plan.repo_id, [op for op in operations if isinstance(op, CommitOperationAdd)],
                                            create_pr=ctx.options.create_pr, num_threads=LFS_FILES_IN_FLIGHT, free_memory=False)
                    _uploaded_as_built(operations)
                info = api.create_commit(
                    plan.repo_id,
                    operations=operations,
                    commit_message=f"Release {plan.version} (release digest {ctx.manifest.release_digest[:12]})",
                    commit_description="\n\n".join(part for part in (
                        _description(ctx), f"Published by hf-release {ctx.manifest.tool_version}.",
                        f"release_digest: {ctx.manifest.release_digest}") if part),
                    parent_commit=plan.head,
                    create_pr=ctx.options.create_pr,
                    num_threads=LFS_FILES_IN_FLIGHT,
                )
                return info.oid, info.pr_url
            except Exception as exc:
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


def _landed(ctx: PushContext) -> str | None:
    """main's commit if it already holds exactly this push's tree; None if main is still at plan.head."""
    plan, api = ctx.plan, ctx.hub.api
    refs = with_retries(lambda: api.list_repo_refs(plan.repo_id), "reading refs")
    head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    if head == plan.head or head is None:
        return None
    files = remote_files(ctx.hub, plan.repo_id, head)
    wanted = ctx.wanted
    kept = {p: f for p, f in ctx.remote_head.items() if p not in wanted and p not in plan.delete and p not in HUB_FILES}
    if (
        files.keys() - HUB_FILES == wanted.keys() | kept.keys()
        and all(matches(files[p], e) for p, e in wanted.items())
        and all(files[p].blob_id == f.blob_id for p, f in kept.items())
    ):
        return head
    tag = next((t for t in refs.tags if t.name == plan.version), None)
    if tag is not None and tag.target_commit != plan.tag_commit:  # the race was for this very version
        raise PublishRefused(
            f"was published by another push during this one (tag at {tag.target_commit}, other files); nothing of "
            "this push was committed; publish a new version, or pass --force-tag to replace it deliberately",
            file=f"{plan.repo_id}@{plan.version}",
        )
    raise RemoteError(
        f"main moved from {plan.head} to {head} during the push and does not hold this release "
        "(another push?); nothing of this push was committed; run the push again to re-plan", file=plan.repo_id,
    )


def _description(ctx: PushContext) -> str:
    """The author's --message, then what changed since the previous version (recorded in release.json at build)."""
    recorded = ctx.manifest.changes
    return describe(Changes.from_dict(recorded) if recorded is not None else None, ctx.options.message)


def _tag(ctx: PushContext, commit: str | None) -> None:
    """Create (or with --force-tag, move) the version tag. A moved tag whose re-creation fails is put back
    where it was: a published version never ends up without its tag."""
    plan = ctx.plan
    if plan.tag == "move":
        try:
            with remote_errors(plan.repo_id, f"moving tag {plan.version}"):
                _delete_tag(ctx)
        except RemoteError as exc:
            raise RemoteError([*exc.problems, Problem(
                plan.repo_id, f"tag {plan.version} still points at {plan.tag_commit}; the commit {commit} is on main; "
                "run the push again with --force-tag to move the tag",
            )]) from None
    try:
        with remote_errors(plan.repo_id, f"tagging {plan.version}"):
            _create_tag(ctx, commit, f"{plan.version}: release digest {ctx.manifest.release_digest}\n\n{_description(ctx)}".strip())
    except ReleaseError as exc:
        if plan.tag == "move":
            raise _restore_tag(ctx, commit, exc) from None
        if isinstance(exc, RemoteError):
            raise RemoteError([*exc.problems, Problem(
                plan.repo_id, f"the commit {commit} is on main but the tag {plan.version} is not; run the push again to tag it",
            )]) from None
        raise


def _restore_tag(ctx: PushContext, commit: str | None, failure: ReleaseError) -> ReleaseError:
    """Put a deleted tag back at its old commit after moving it failed; the error to report either way."""
    plan, old = ctx.plan, ctx.plan.tag_commit
    assert old is not None
    try:
        with remote_errors(plan.repo_id, f"restoring tag {plan.version}"):
            _create_tag(ctx, old, f"{plan.version}: restored by hf-release after a failed --force-tag")
    except ReleaseError as again:
        return RemoteError([*failure.problems, *again.problems, Problem(
            plan.repo_id, f"tag {plan.version} was deleted to be moved and could NOT be put back at its old commit "
            f"{old}: once the Hub answers, restore it (`hf repos tag create {plan.repo_id} {plan.version} --revision {old}`) "
            f"or move it to this release (`hf-release push {plan.version} --force-tag`)",
        )])
    return type(failure)([*failure.problems, Problem(
        plan.repo_id, f"tag {plan.version} is back at its old commit {old}; this release's commit {commit} is on main, "
        f"untagged; run the push again with --force-tag to move the tag",
    )])


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
            refs = with_retries(lambda: api.list_repo_refs(plan.repo_id), "reading refs")
            there = next((t.target_commit for t in refs.tags if t.name == plan.version), None)
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
