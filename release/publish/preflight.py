"""Push's preflight: every precondition, checked before any byte is sent, and the plan.

Each step records what it found; refusals and failures are collected, so one run reports all of them
together, with the exit code the README's precedence rule gives.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from huggingface_hub import CommitOperationDelete, hf_hub_download

from release.errors import InputError, Problem, PublishRefused, ReleaseError, RemoteError, combine, first_line
from release.hub import limits
from release.hub.client import (
    ManifestTooLarge,
    branch_commit,
    connect,
    list_refs,
    remote_errors,
    remote_files,
    require_token,
    tag_commit,
    whoami,
    with_retries,
)
from release.hub.limits import hub_limits, warn
from release.pipeline import Done, Skipped, StepResult, run_steps
from release.publish.context import PushContext, PushOptions
from release.publish.files import release_paths
from release.publish.plan import Present, push_plan, tag_differences
from release.spec import SPEC_NAME, repo_id_refusal
from release.spec.placeholders import kind_placeholders, placeholder_message
from release.spec.versions import version_key
from release.staged import OtherVersionStaged, changed_since_build, fingerprints, read_staged
from release.staged.names import CARD_NAME, MANIFEST_NAME, SIGNATURE_NAME, SUMS_NAME, bookkeeping
from release.staged.sources import compare_sources
from release.util.jsonio import read_json
from release.util.wording import counted


class StagedUnchanged:
    name = "staged-unchanged"

    def run(self, ctx: PushContext) -> StepResult:
        ctx.seen = fingerprints(
            ctx.staged.dist, sorted(ctx.wanted)
        )  # first: an edit from here on is seen at the upload
        problems, rehashed = changed_since_build(ctx.staged)
        ctx.refused.extend(problems)
        signer = (ctx.manifest.card or {}).get("signature")
        if (
            signer and SIGNATURE_NAME not in ctx.staged.bookkeeping
        ):  # the card would send readers to a missing signature
            ctx.refused.append(
                Problem(
                    SIGNATURE_NAME,
                    f"is missing: the card tells readers to check a {signer} signature; run `hf-release sign` first",
                )
            )
        return Done(f"files unchanged since build ({rehashed} bytes re-hashed)")


class SourcesUnchanged:
    """The spec's sources are still what was staged (issue 38, item 10): a source replaced or edited since build
    (`save_pretrained` writes a new file) is refused, naming it; sources not here (a staging handed over, as the
    release workflow pushes) are a warning: the staged files are what is published."""

    name = "sources-unchanged"

    def run(self, ctx: PushContext) -> StepResult:
        if ctx.options.spec is None:
            return Skipped("no project to find the spec in")
        check = compare_sources(ctx.options.spec, ctx.staged)
        ctx.refused.extend(check.changed)
        for note in check.notes():
            ctx.warnings.append(note)
            warn([Problem(str(ctx.options.spec), note)])
        return Done(
            f"{counted(check.compared, 'source')} compared with the staging"
            + (f", {counted(len(check.changed), 'changed')}" if check.changed else "")
            + (f", {len(check.absent)} not here" if check.absent else "")
            + (f" ({check.rehashed} bytes hashed)" if check.rehashed else "")
        )


class NoPlaceholder:
    """Placeholders are not content: a card still showing init's placeholder is published only deliberately."""

    name = "no-placeholder"

    def run(self, ctx: PushContext) -> StepResult:
        left = (ctx.manifest.card or {}).get("placeholders") or []
        if not left:
            return Done("the card holds no placeholder of init's")
        if ctx.options.allow_placeholder:
            return Done(f"publishing init's placeholder {', '.join(map(str, left))} (--allow-placeholder)")
        own = kind_placeholders((ctx.manifest.card or {}).get("kind"))  # the kind's say what to write instead
        for key in left:
            ctx.refused.append(
                Problem(
                    f"{CARD_NAME} ({SPEC_NAME} [card] {key})",
                    f"{placeholder_message(str(key), own)}, then build again; "
                    "or pass --allow-placeholder "
                    "to publish it as it is",
                )
            )
        return Done("init's placeholder found")


class PushLimits:
    """Dry runs included: the release as the Hub would receive it, bookkeeping files counted."""

    name = "hub-limits"

    def run(self, ctx: PushContext) -> StepResult:
        files = [(f.path_in_repo, f.size) for f in ctx.manifest.files] + [(p, 0) for p in (MANIFEST_NAME, SUMS_NAME)]
        errors, warnings = hub_limits(files, repo_id=ctx.manifest.repo_id)
        if errors:  # the release itself is wrong for the Hub: input (exit 2), as build reports it, not a safety refusal
            ctx.failed.append(InputError(errors))
        ctx.warnings = [f"{w.file}: {w.message}" for w in warnings]
        warn(warnings)
        return Done(
            f"{counted(len(files), 'file')} to push within the Hub's limits"
            + (f", {counted(len(warnings), 'warning')}" if warnings else "")
        )


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
                refused.append(
                    Problem(
                        path,
                        f"huggingface_hub refuses this path_in_repo ({first_line(exc)}); "
                        "give the file another path_in_repo in the spec and build again",
                    )
                )
        why = repo_id_refusal(ctx.manifest.repo_id)
        if why:  # no request can name this repo: the preflight ends here
            raise InputError(
                [
                    *refused,
                    Problem(
                        ctx.manifest.repo_id,
                        f"huggingface_hub refuses this repo_id "
                        f"({why}); give another repo_id in the spec and build again",
                    ),
                ]
            )
        if refused:
            ctx.failed.append(InputError(refused))
        return Done(f"huggingface_hub accepts the repo id, and refuses {len(refused)} paths")


class TokenCanWrite:
    name = "token"

    def run(self, ctx: PushContext) -> StepResult:
        if ctx.options.dry_run and not ctx.hub.api.token:
            return Skipped("dry run without a token")
        require_token(ctx.hub.api.token)
        name, role = whoami(ctx.hub, ctx.manifest.repo_id)
        if role == "read":  # an authorization failure, found before the Hub answers a write with 403
            ctx.failed.append(RemoteError(f"is read-only for {name}; use a token with write access", file="token"))
        return Done(f"token of {name} ({role or 'unknown role'})")


class RemoteState:
    """What the Hub holds: main's commit and files, and the version tag's commit and files."""

    name = "remote-state"

    def run(self, ctx: PushContext) -> StepResult:
        repo_id, api = ctx.manifest.repo_id, ctx.hub.api
        with remote_errors(repo_id, "reading the repo"):
            if not with_retries(lambda: api.repo_exists(repo_id), "reading the repo"):
                return Done("repo does not exist yet: push creates it")
        refs = list_refs(ctx.hub, repo_id)
        head, tagged = branch_commit(refs), tag_commit(refs, ctx.manifest.version)
        if branch_commit(refs, ctx.manifest.version) is not None:  # `--revision vN` would serve the branch, not the tag
            ctx.refused.append(
                Problem(
                    f"{repo_id}@{ctx.manifest.version}",
                    f"is a branch on the Hub: a download with --revision {ctx.manifest.version} (what the card tells "
                    "readers) would get the branch, not this release's tag; delete or rename the branch "
                    f"(`hf repos branch delete {repo_id} {ctx.manifest.version}`), or publish another version",
                )
            )
        at_head = remote_files(ctx.hub, repo_id, head) if head else {}
        at_tag = at_head if tagged == head else remote_files(ctx.hub, repo_id, tagged) if tagged else {}
        ctx.present = Present(True, head, at_head, tagged, at_tag)
        return Done(f"main at {head}, tag {ctx.manifest.version} {'at ' + tagged if tagged else 'free'}")


class Plan:
    name = "plan"

    def run(self, ctx: PushContext) -> StepResult:
        manifest, options = ctx.manifest, ctx.options
        plan = ctx.plan = push_plan(
            manifest.repo_id,
            manifest.version,
            ctx.wanted,
            ctx.present,
            keep_extra=options.keep_extra,
            create_pr=options.create_pr,
            force_tag=options.force_tag,
            warnings=ctx.warnings,
        )
        return Done(
            f"{len(plan.add)} to add, {len(plan.change)} to change, {len(plan.delete)} to delete, "
            f"{len(plan.unchanged)} unchanged"
        )


MAX_NAMED = 10  # files a refusal names before it counts the rest


class TagFree:
    """A published version is immutable: its tag may only be re-pointed deliberately (--force-tag)."""

    name = "tag-free"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        if plan.tag_commit is None:
            return Done(f"tag {plan.version} is free")
        if plan.tag == "keep":
            return Done(f"{plan.version} is already published with exactly these files")
        if plan.tag == "none":  # a pull request publishes nothing: the tag stays where it is
            return Done(f"tag {plan.version} left alone (pull request)")
        if plan.tag == "move":
            return Done(f"tag {plan.version} will be moved (--force-tag)")
        differing = tag_differences(ctx.wanted, ctx.present)
        named = ", ".join(differing[:MAX_NAMED]) + (
            f" and {len(differing) - MAX_NAMED} more" if len(differing) > MAX_NAMED else ""
        )
        ctx.refused.append(
            Problem(
                f"{plan.repo_id}@{plan.version}",
                f"is already published (commit {plan.tag_commit[:12]}) with different files: {named}; "
                "publish a new version, or pass --force-tag to move the tag deliberately",
            )
        )
        return Done("tag taken")


class DeletesOnlyOurs:
    """Push deletes on main only what an earlier release published (listed in main's release.json): a file it
    never published (added with `hf upload`, say) is deleted only deliberately (--delete-extra) or kept
    (--keep-extra); otherwise it is refused, naming the files, before anything is sent."""

    name = "deletes-only-ours"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        if not plan.delete or not plan.commit_needed or ctx.options.delete_extra:
            return Skipped("nothing to delete" if not plan.delete else "--delete-extra")
        ours = set(bookkeeping()) | _listed_on_main(ctx)
        foreign = [path for path in plan.delete if path not in ours]
        for path in foreign:
            ctx.refused.append(
                Problem(
                    f"{plan.repo_id}:{path}",
                    "is on main but no earlier release listed it (hf-release did not publish it), so push would "
                    "delete it; pass --keep-extra to keep it beside the release, or --delete-extra to delete it",
                )
            )
        return Done(f"{len(plan.delete) - len(foreign)} to delete were published by hf-release, {len(foreign)} not")


def _listed_on_main(ctx: PushContext) -> set[str]:
    """The paths main's release.json lists (none when it has none, or one hf-release cannot read)."""
    remote = ctx.present.at_head.get(MANIFEST_NAME)
    if remote is None or ctx.plan.head is None:
        return set()
    what = f"reading the Hub's {MANIFEST_NAME}"
    with tempfile.TemporaryDirectory() as tmp, remote_errors(ctx.plan.repo_id, what):
        try:
            path = ctx.hub.download_manifest(ctx.plan.repo_id, ctx.plan.head, Path(tmp), what, size=remote.size)
            files = read_json(path, max_bytes=limits.MAX_MANIFEST_BYTES, detect_encoding=True).get("files")
        except (ManifestTooLarge, ValueError, AttributeError, RecursionError):
            return set()
    if not isinstance(files, list):
        return set()
    return {f["path_in_repo"] for f in files if isinstance(f, dict) and isinstance(f.get("path_in_repo"), str)}


class MainNotNewer:
    """`main` is what a download without --revision gets: publishing v1 after v2 would quietly move it back."""

    name = "main-not-newer"

    def run(self, ctx: PushContext) -> StepResult:
        plan = ctx.plan
        remote = ctx.present.at_head.get(MANIFEST_NAME)
        if remote is None or ctx.options.create_pr or plan.tag == "keep":
            return Skipped("no hf-release version on main to compare with")
        assert plan.head is not None, "main holds files, so it has a commit"
        what = f"reading the Hub's {MANIFEST_NAME}"
        with tempfile.TemporaryDirectory() as tmp, remote_errors(plan.repo_id, what):
            try:
                path = ctx.hub.download_manifest(plan.repo_id, plan.head, Path(tmp), what, size=remote.size)
            except ManifestTooLarge:
                return Done(f"main's {MANIFEST_NAME} is {remote.size:,} bytes, not an hf-release manifest")
            try:
                on_main = read_json(path, max_bytes=limits.MAX_MANIFEST_BYTES, detect_encoding=True).get("version")
            except (ValueError, AttributeError, RecursionError):
                on_main = None
        if not isinstance(on_main, str) or on_main == plan.version or version_key(on_main) < version_key(plan.version):
            return Done(f"main holds {on_main or 'no readable version'}")
        if ctx.options.allow_older:
            return Done(f"main goes back from {on_main} to {plan.version} (--allow-older)")
        ctx.refused.append(
            Problem(
                f"{plan.repo_id}@main",
                f"holds {on_main}, newer than {plan.version}: "
                f"publishing {plan.version} would move main (what a download without --revision gets) back; "
                "publish a newer version, or pass --allow-older to do it deliberately",
            )
        )
        return Done("main holds a newer version")


class CardNotHandEdited:
    """Never silently overwrite a README edited by hand on the Hub."""

    name = "card-not-hand-edited"

    def run(self, ctx: PushContext) -> StepResult:
        remote = ctx.present.at_head.get(CARD_NAME)
        if remote is None or ctx.plan.tag == "keep":
            return Skipped("no card on the Hub to replace")
        # Imported here, not at the top: release.card loads the card linter and through it the checks
        # (numpy, safetensors, jsonschema): ~0.2 s of every push's start-up that only this step needs.
        from release.card.mark import hand_edited
        from release.card.sandbox import MAX_OUTPUT_CHARS

        if remote.size > 4 * MAX_OUTPUT_CHARS:  # larger than any card hf-release renders: not ours, not downloaded
            edited: bool | None = None
        else:
            with tempfile.TemporaryDirectory() as tmp, remote_errors(ctx.plan.repo_id, "reading the Hub's README.md"):
                text = Path(
                    with_retries(
                        lambda: hf_hub_download(
                            ctx.plan.repo_id,
                            CARD_NAME,
                            revision=ctx.plan.head,
                            endpoint=ctx.hub.endpoint,
                            token=ctx.hub.api.token,
                            cache_dir=tmp,
                        ),
                        "reading the Hub's README.md",
                    )
                ).read_text("utf-8", errors="replace")
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


# The plan comes from the Hub's state alone; the steps after it judge whether it may be carried out.
PREFLIGHT = (
    StagedUnchanged(),
    NoPlaceholder(),
    PushLimits(),
    SourcesUnchanged(),  # after PushLimits, which sets the warnings
    NamesAccepted(),
    TokenCanWrite(),
    RemoteState(),
    Plan(),
    TagFree(),
    DeletesOnlyOurs(),
    MainNotNewer(),
    CardNotHandEdited(),
)


def preflight(dist: Path, options: PushOptions, *, version: str | None = None) -> PushContext:
    """Every precondition of pushing `dist` (of `version`, when the user named one), and the plan; raises
    every failed one together."""
    try:
        staged = read_staged(dist, version=version)
    except OtherVersionStaged:
        raise
    except InputError as exc:
        if not (dist / MANIFEST_NAME).is_file():
            raise
        # There but damaged: a staged file changed since build, refused like any other.
        raise PublishRefused(Problem(MANIFEST_NAME, exc.problems[0].message)) from None
    hub = connect(options.endpoint, options.token)
    ctx = PushContext(staged, options, hub, release_paths(staged))
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
