"""What each command returns, and every word of its output: the lines for people and agents, the JSON
document, the quiet lines a script reads. Commands build no output themselves; release/cli/output.py
picks the format and prints: `lines()` for people (human), `agent()` records (agent: each one `key=value`
line, as hf's `out.result` prints), `document()` (json) and `quiet()` (one item a line, as hf's `-q`).

Three counts name three things, and every message says which: the files staged from the spec, the files
release.json lists (those plus the card and its chart), and the files a push sends (those plus release.json
and SHA256SUMS, and model.sig when signed).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from release.staged.names import BOOKKEEPING
from release.util.wording import counted, human_size

if TYPE_CHECKING:
    from release.attestation import ProvenanceChecked
    from release.builder import BuildResult
    from release.card.staged import CardResult
    from release.errors import Problem, ReleaseError
    from release.init import InitResult
    from release.pipeline import StepResult, StepsRan
    from release.publish.push import PushResult
    from release.staged.manifest import Manifest
    from release.status import VersionStatus
    from release.verify import VerifyResult


class Result(Protocol):
    command: ClassVar[str]

    @property
    def ok(self) -> bool: ...

    def lines(self) -> list[str]: ...

    def document(self) -> dict[str, Any]: ...

    def quiet(self) -> list[str]: ...

    def agent(self) -> list[dict[str, Any]]: ...


class Succeeded:
    """A result whose command succeeded (exit 0) whatever it reports: most of them."""

    command: ClassVar[str]
    ok: ClassVar[bool] = True


def manifest_counts(m: Manifest) -> str:
    """How many files release.json lists, and what they are."""
    from release.staged.names import GENERATED_ROLES, bookkeeping

    written = [f.path_in_repo for f in m.files if f.role in GENERATED_ROLES]
    pushed = len(m.files) + len(bookkeeping("manifest", "sums"))
    return (
        f"{counted(len(m.files), 'file')} in release.json ({len(m.files) - len(written)} from the spec"
        + "".join(f" + {name}" for name in written)
        + f"; {pushed} to push with release.json and SHA256SUMS)"
    )


STEP_COLUMN = 24  # the step names' column: the longest, check-generation-config, and a space


def step_lines(log: list[tuple[str, StepResult]], verbose: bool = False) -> list[str]:
    """One line per step that ran, what it did; the steps that did not apply to this release on one line, by
    name (with `verbose`, each on its own line with why, as --format json always says)."""
    from release.pipeline import Skipped

    skipped = [name for name, r in log if isinstance(r, Skipped)]
    lines = [
        f"{name:<{STEP_COLUMN}} {'skipped: ' + r.reason if isinstance(r, Skipped) else r.detail}"
        for name, r in log
        if verbose or not isinstance(r, Skipped)
    ]
    if skipped and not verbose:
        lines.append(f"{'skipped':<{STEP_COLUMN}} {', '.join(skipped)} (not for this release; -v says why)")
    return lines


def step_records(log: list[tuple[str, StepResult]]) -> list[dict[str, str]]:
    """Each step that ran, for --format json: its name, done or skipped, and what it did or why it was skipped."""
    from release.pipeline import Skipped

    return [
        {"step": name, "result": "skipped", "reason": r.reason}
        if isinstance(r, Skipped)
        else {"step": name, "result": "done", "detail": r.detail}
        for name, r in log
    ]


def stopped_lines(ran: StepsRan, error: BaseException, verbose: bool = False) -> list[str]:
    """A build that `error` stopped, for people: the steps that ran, then the one that stopped it and why (the
    problems, or the "interrupted" line, follow)."""
    from release.errors import ReleaseError, SigTerm

    problems = counted(len(error.problems), "problem") if isinstance(error, ReleaseError) else "an error"
    why = (
        "terminated (SIGTERM)"
        if isinstance(error, SigTerm)
        else "interrupted"
        if isinstance(error, KeyboardInterrupt)
        else f"the steps above found {problems} (below)"
        if ran.gate
        else f"{problems} (below)"
    )
    where = ran.stopped or "(after the steps)"
    return [*step_lines(ran.log, verbose), f"{where:<{STEP_COLUMN}} stopped the build: {why}"]


@dataclass(frozen=True)
class Built(Succeeded):
    command = "build"
    build: BuildResult
    verbose: bool = False  # -v: each skipped step on its line, with why

    def lines(self) -> list[str]:
        b, m = self.build, self.build.manifest
        lines = step_lines(b.steps, self.verbose)
        lines += [f"copied across filesystems (not hard-linked): {p}" for p in b.copied]
        return [
            *lines,
            f"built {m.repo_id}@{m.version} in {b.dist} — {manifest_counts(m)}, release digest {m.release_digest[:12]}",
        ]

    def agent(self) -> list[dict[str, Any]]:
        m = self.build.manifest
        return [
            {
                "repo_id": m.repo_id,
                "version": m.version,
                "dist": self.build.dist,
                "files": len(m.files),
                "release_digest": m.release_digest,
            },
            *({"copied": p} for p in self.build.copied),
        ]

    def document(self) -> dict[str, Any]:
        return {
            "dist": str(self.build.dist),
            "manifest": self.build.manifest.as_dict(streamed=True),
            "copied": self.build.copied,
            "steps": step_records(self.build.steps),
        }

    def quiet(self) -> list[str]:
        return [str(self.build.dist)]


@dataclass(frozen=True)
class RemoteVerified:
    """`verify --remote`: the Hub's copy at a revision."""

    url: str
    revision: str | None  # --revision as given; None: the version's tag
    commit: str
    download: bool  # every byte streamed and hashed (--download), not only the listing compared
    downloaded: int  # bytes
    signature: str | None = None  # the signature checked over the Hub's files
    reconstructed: int = 0  # bytes of Xet-backed files also rebuilt through hf_xet (--download)

    def checked(self) -> dict[str, Any]:
        """How the Hub's copy was checked, as json and agent say it."""
        if not self.download:
            return {"checked": "listing", "bytes_downloaded": self.downloaded}
        return {"checked": "bytes", "bytes_downloaded": self.downloaded, "bytes_reconstructed": self.reconstructed}


@dataclass(frozen=True)
class Verified(Succeeded):
    command = "verify"
    verify: VerifyResult
    signature: Path | None = None  # checked over the staged files
    remote: RemoteVerified | None = None
    provenance: ProvenanceChecked | None = None  # --provenance: the release workflow's attestation

    def lines(self) -> list[str]:
        from release.staged.names import MANIFEST_NAME

        v, m = self.verify, self.verify.manifest
        lines = [
            f"verified {m.repo_id}@{m.version}: {counted(v.files, 'file')} ({human_size(v.bytes)}) "
            f"match {MANIFEST_NAME}"
        ]
        for p in v.peers:
            skipped = v.not_compared.get(p)
            lines.append(
                f"peer {p}: digests agree"
                if not skipped
                else f"peer {p}: digests agree for the files it lists; "
                f"not compared (--allow-partial): {', '.join(skipped)}"
            )
        if self.signature:
            lines.append(f"signature {self.signature}: valid over every staged file")
        if self.provenance:
            a = self.provenance
            lines.append(
                f"provenance {a.bundle}: {counted(a.attestations, 'attestation')} of {' and '.join(a.subjects)} "
                f"as staged, signed by {a.identity} (issuer {a.issuer}); certificate, SCT, transparency log entry "
                "and signature verified offline"
            )
        if self.remote:
            r = self.remote
            proof = (
                f"every file's bytes, downloaded ({human_size(r.downloaded)}) and hashed, match"
                + (
                    f"; the Xet-backed ones also as hf_xet rebuilds them ({human_size(r.reconstructed)})"
                    if r.reconstructed
                    else ""
                )
                if r.download
                else "the Hub's listing matches every file (paths, sizes, recorded LFS sha256 / git blob ids; "
                "bytes not read: add --download)"
            )
            label = f"tag {m.version}" if r.revision is None else f"revision {r.revision}"
            lines.append(f"verified {r.url} at {label} (commit {r.commit}): {proof}")
            if r.signature:
                lines.append(f"signature {r.signature}: valid over the Hub's files at {r.revision or m.version}")
        return lines

    def document(self) -> dict[str, Any]:
        v, m = self.verify, self.verify.manifest
        document: dict[str, Any] = {
            "dist": str(v.dist),
            "files": v.files,
            "bytes": v.bytes,
            "release_digest": m.release_digest,
            "peers": v.peers,
            "peers_not_compared": v.not_compared,
        }
        if self.signature:
            document["signature"] = str(self.signature)
        if self.provenance:
            a = self.provenance
            document["provenance"] = {
                "bundle": str(a.bundle),
                "attestations": a.attestations,
                "identity": a.identity,
                "issuer": a.issuer,
                "subjects": a.subjects,
            }
        if self.remote:
            r = self.remote
            document["remote"] = {"url": r.url, "tag": r.revision or m.version, "commit": r.commit, **r.checked()}
        return document

    def quiet(self) -> list[str]:
        return [self.verify.manifest.release_digest]

    def agent(self) -> list[dict[str, Any]]:
        v, m = self.verify, self.verify.manifest
        record: dict[str, Any] = {
            "repo_id": m.repo_id,
            "version": m.version,
            "files": v.files,
            "bytes": v.bytes,
            "release_digest": m.release_digest,
            "signature": self.signature,
        }
        records = [record, *({"peer": p, "agrees": True} for p in v.peers)]
        if self.provenance:
            a = self.provenance
            records.append({"provenance": a.bundle, "attestations": a.attestations, "identity": a.identity})
        if self.remote:
            r = self.remote
            records.append(
                {
                    "remote": r.url,
                    "revision": r.revision or m.version,
                    "commit": r.commit,
                    **r.checked(),
                    "signature": r.signature,
                }
            )
        return records


@dataclass(frozen=True)
class Signed(Succeeded):
    command = "sign"
    signature: Path

    def lines(self) -> list[str]:
        return [f"signed {self.signature.parent} → {self.signature}"]

    def document(self) -> dict[str, Any]:
        return {"signature": str(self.signature)}

    def quiet(self) -> list[str]:
        return [str(self.signature)]

    def agent(self) -> list[dict[str, Any]]:
        return [{"signature": self.signature}]


UNCHECKED_TOKEN = (
    "  not checked: the token and its write permission (dry run without a token); the push needs a "
    "token with write access to the repo (HF_TOKEN, --token-file or --token-stdin)"
)
TAG_ACTIONS = {
    "create": "create tag {version}",
    "keep": "tag {version} already published with exactly these files: nothing to commit",
    "move": "move tag {version} to the new commit (--force-tag)",
    "none": "no tag: a pull request is opened; tag {version} after merging",
}


@dataclass(frozen=True)
class Pushed(Succeeded):
    command = "push"
    push: PushResult
    dry_run: bool

    def lines(self) -> list[str]:
        result, plan = self.push, self.push.plan
        if plan.tag == "keep":
            return self._published_already()
        files = [p for p, _ in plan.add + plan.change + plan.unchanged]
        listed = [p for p in files if p not in BOOKKEEPING]
        lines = [
            f"{'plan for' if self.dry_run else 'pushed'} {result.url} ({plan.version}): {counted(len(files), 'file')} "
            f"— the {len(listed)} release.json lists, " + " and ".join(sorted(set(files) - set(listed)))
        ]
        lines += [f"  add      {p} ({human_size(s)})" for p, s in plan.add]
        lines += [f"  change   {p} ({human_size(s)})" for p, s in plan.change]
        lines += [f"  delete   {p}" for p in plan.delete]
        lines += [f"  same     {p} ({human_size(s)})" for p, s in plan.unchanged]
        lines.append("  " + TAG_ACTIONS[plan.tag].format(version=plan.version))
        if not self.dry_run:
            sent = f"{human_size(result.bytes_sent)} sent" + (
                "" if result.bytes_measured else " (offered to Xet, not measured)"
            )
            if result.xet_new is not None:
                new, dedup = human_size(result.xet_new), human_size(result.xet_deduplicated or 0)
                sent += f" over Xet ({new} of new chunks, {dedup} deduplicated)"
            lines.append(
                f"commit {result.commit or '-'}, tag {result.tag or '-'}, {sent}, {human_size(result.bytes_skipped)} "
                f"already on the Hub, {counted(len(plan.unchanged), 'file')} unchanged"
                + (", verified on the Hub" if result.verified else "")
            )
            lines += self._urls()
            if result.pr_url:
                lines.append(
                    f"pull request: {result.pr_url} — merge it, then run `hf-release push {shlex.quote(plan.version)}` "
                    "to tag it"
                )
        if not result.token_checked:
            lines.append(UNCHECKED_TOKEN)
        return lines

    def _urls(self) -> list[str]:
        """Where to see what was published, as the Hub shows it: the tag's files and the commit (the repo's own
        address shows main, which a later push moves)."""
        result = self.push
        lines = [f"  files:  {result.url}/tree/{result.tag}"] if result.tag else []
        return lines + ([f"  commit: {result.url}/commit/{result.commit}"] if result.commit else [])

    def _published_already(self) -> list[str]:
        """The version's tag already holds exactly this release: nothing is sent, so no file lines (main may have
        moved on to a later version: its differences from this one are not this push's business) and no
        "pushed"."""
        result, plan = self.push, self.push.plan
        at = f"at tag {plan.version} (commit {plan.tag_commit or '-'}) of {result.url} with exactly these files"
        if self.dry_run:
            lines = [f"{plan.version} is already published {at}: a push would send nothing and commit nothing"]
        else:
            verified = "; verified on the Hub" if result.verified else ""
            lines = [f"{plan.version} is already published {at}: nothing was sent, nothing committed{verified}"]
        lines += self._urls()
        if plan.add or plan.change or plan.delete:
            lines.append(f"  main has moved on since {plan.version}; it was left as it is")
        if not result.token_checked:
            lines.append(UNCHECKED_TOKEN)
        return lines

    def agent(self) -> list[dict[str, Any]]:
        r, plan = self.push, self.push.plan
        summary = {
            "url": r.url,
            "version": plan.version,
            "dry_run": self.dry_run,
            "tag_action": plan.tag,
            "commit": r.commit,
            "tag": r.tag,
            "pr_url": r.pr_url,
            "bytes_to_send": plan.bytes_to_send,
            "token_checked": r.token_checked,
        }
        if not self.dry_run:
            summary.update(bytes_sent=r.bytes_sent, bytes_skipped=r.bytes_skipped, verified=r.verified)
        return [
            summary,
            *(
                {"action": action, "path": p, "size": s}
                for action, files in (("add", plan.add), ("change", plan.change), ("same", plan.unchanged))
                for p, s in files
            ),
            *({"action": "delete", "path": p} for p in plan.delete),
        ]

    def document(self) -> dict[str, Any]:
        r = self.push
        return {
            "url": r.url,
            "dry_run": self.dry_run,
            "plan": r.plan.as_dict(),
            "commit": r.commit,
            "tag": r.tag,
            "pr_url": r.pr_url,
            "bytes_sent": r.bytes_sent,
            "bytes_skipped": r.bytes_skipped,
            "bytes_measured": r.bytes_measured,
            "verified": r.verified,
            "xet": r.xet,
            "xet_bytes": None if r.xet_new is None else {"new": r.xet_new, "deduplicated": r.xet_deduplicated},
            "token_checked": r.token_checked,
        }

    def quiet(self) -> list[str]:
        """The commit pushed; for a dry run, each path the commit would add, change or delete."""
        plan = self.push.plan
        if self.dry_run:
            return sorted([p for p, _ in plan.add + plan.change] + plan.delete) if plan.commit_needed else []
        return [self.push.commit] if self.push.commit else []


@dataclass(frozen=True)
class CardRendered:
    command: ClassVar[str] = "card"
    staged: Path  # the staged release
    path: Path  # its card
    card: CardResult
    diff: str | None = None  # with --diff: against `diff_against`
    diff_against: Path | None = None

    @property
    def ok(self) -> bool:
        """False when --diff found a difference: printed, then exit 1 (as `diff` and `git diff --exit-code`)."""
        return not self.diff

    @property
    def changed(self) -> bool:
        return self.card.previous != self.card.text

    def lines(self) -> list[str]:
        if self.diff_against is not None:
            return [(self.diff or "").rstrip("\n") or f"no difference from {self.diff_against}"]
        return [
            f"card {'rendered (dry run)' if not self.card.written else 'updated' if self.changed else 'unchanged'}: "
            f"{self.path}"
        ]

    def document(self) -> dict[str, Any]:
        return {"dist": str(self.staged), "changed": self.changed, "written": self.card.written, "diff": self.diff}

    def quiet(self) -> list[str]:
        return [str(self.path)]

    def agent(self) -> list[dict[str, Any]]:
        if self.diff_against is not None:
            return [{"card": self.path, "against": self.diff_against, "differs": bool(self.diff)}]
        return [{"card": self.path, "changed": self.changed, "written": self.card.written}]


@dataclass(frozen=True)
class Initialized(Succeeded):
    command = "init"
    init: InitResult
    version: str

    def lines(self) -> list[str]:
        from release.init.leave_out import summary

        r = self.init
        lines = [f"wrote {r.spec}" + (f" from {r.previous}" if r.previous else f" (kind {r.kind})")]
        lines += [f"  {d.role:<18} {self._name(d.path)}" for d in r.files]
        lines += [f"  reused from {r.previous}: {', '.join(r.reused)}"] if r.reused else []
        lines += [  # what no library's loading rule names: shipped as is, unchecked, absent from the card's code
            f"  stayed extra: {self._name(d.path)} ({d.why}"
            + (
                ""
                if ", but this release is" in d.why
                else ": no library this release's kind uses loads a file of that name"
            )
            + "; shipped unchecked)"
            for d in r.files
            if d.role == "extra" and not r.previous
        ]
        lines += [f"  left out: {line}" for line in summary(r.left_out or [])]
        lines += (
            [
                "  to take any of them in: add a [[files]] entry for it to the spec, or run init again with --include "
                "PATTERN naming it or its folder (e.g. --include '*' --include train.py: with --include, only what "
                "the patterns name is taken)"
            ]
            if r.left_out
            else []
        )
        lines += (
            [
                f"  no license: no LICENSE file in {r.folder}, and build refuses the spec until [card.license] is "
                'given: put the license text beside the files (e.g. LICENSE), add it to [[files]] with role "license" '
                "and fill in the commented [card.license] block (id, text)"
            ]
            if r.no_license
            else []
        )
        lines += (
            [
                f"  copied {r.previous}'s prose with numbers in it ({', '.join(r.copied_prose)}): re-read them, they "
                f"were written about {r.previous}"
            ]
            if r.copied_prose
            else []
        )
        lines += [
            f"  not in the spec: {name} (in {r.spec.parent.name}/ but no [[files]] source names it; add one if it "
            "belongs to the release)"
            for name in r.unlisted or []
        ]
        return [*lines, f"next: check it, then `hf-release build {shlex.quote(self.version)}`"]

    def document(self) -> dict[str, Any]:
        r = self.init
        return {
            "spec": str(r.spec),
            "kind": r.kind,
            "previous": r.previous,
            "files": [{"source": str(d.path), "role": d.role, "why": d.why} for d in r.files],
            "reused": r.reused or [],
            "unlisted": r.unlisted or [],
            "left_out": [{"path": x.path, "why": x.reason} for x in r.left_out or []],
            "no_license": r.no_license,
            "copied_prose": r.copied_prose or [],
        }

    def _name(self, path: Path) -> str:
        """The file's path in its folder: two config.json (one in 1_Pooling/) are two lines, not one name twice."""
        folder = self.init.folder
        return path.relative_to(folder).as_posix() if folder is not None and path.is_relative_to(folder) else path.name

    def quiet(self) -> list[str]:
        return [str(self.init.spec)]

    def agent(self) -> list[dict[str, Any]]:
        r = self.init
        return [
            {"spec": r.spec, "version": self.version, "kind": r.kind, "previous": r.previous},
            *({"source": d.path, "role": d.role} for d in r.files),
            *({"reused": name} for name in r.reused or []),
            *({"unlisted": name} for name in r.unlisted or []),
            *({"left_out": x.path, "why": x.reason} for x in r.left_out or []),
            *([{"no_license": str(r.folder)}] if r.no_license else []),
            *({"copied_prose": key} for key in r.copied_prose or []),
        ]


STAGED_STATES = {
    "no": "not staged",
    "verified": "staged, unchanged since build",
    "changed": "staged, CHANGED since build",
    "damaged": "staged release unreadable",
}
OFFLINE = "HF_HUB_OFFLINE is set: the Hub was not asked; the local state only"
HUB_MATCHES = {True: ", Hub files match", False: ", Hub files DIFFER", None: " (nothing staged to compare)"}


def status_line(s: VersionStatus) -> str:
    """One version's state on one line."""
    staged = STAGED_STATES[s.staged] + (" (spec edited since build)" if s.spec_changed_since_build else "")
    staged += {"changed": "; sources CHANGED since build", "not told": "; a source not told (see its note)"}.get(
        s.sources, ""
    )
    hub = f"published at {(s.commit or '')[:12]}{HUB_MATCHES[s.hub_matches]}" if s.hub == "published" else s.hub
    return f"{s.version:<14} spec {s.spec:<8} {staged}; {hub}"


@dataclass(frozen=True)
class StatusReport:
    command: ClassVar[str] = "status"
    root: Path  # the project
    versions: list[VersionStatus]
    offline: bool = False  # HF_HUB_OFFLINE is set: the Hub was not asked
    hub_errors: list[Problem] = field(default_factory=list)  # the Hub could not be reached or seen: exit 3

    @property
    def ok(self) -> bool:
        """False when the Hub holds other files than a manifest, a staged file or a source changed since build,
        or the Hub could not be reached: printed whole, then exit_code."""
        return not (self.hub_errors or any(s.hub_matches is False or s.failed_locally for s in self.versions))

    def err_lines(self) -> list[str]:
        """After the rows, on stderr: why the Hub column is empty."""
        return [f"{p}; the rows printed are the local state only" for p in self.hub_errors]

    @property
    def exit_code(self) -> int:
        """3 when the Hub could not be reached (as any command that cannot), else 1 (a verification failed)."""
        return 3 if self.hub_errors else 1

    def lines(self) -> list[str]:
        from release.spec.project import ARTIFACTS

        lines = [
            line
            for s in self.versions
            for line in (status_line(s), *(f"  {p}" for p in s.problems), *(f"  note: {n}" for n in s.notes))
        ]
        lines = lines or [f"no versions under {self.root / ARTIFACTS}; start one with `hf-release init`"]
        return [OFFLINE, *lines] if self.offline else lines

    def document(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "offline": self.offline,
            "versions": [s.as_dict() for s in self.versions],
            "hub_errors": [p.as_dict() for p in self.hub_errors],
        }

    def quiet(self) -> list[str]:
        return [s.version for s in self.versions]

    def agent(self) -> list[dict[str, Any]]:
        return [
            {
                "version": s.version,
                "spec": s.spec,
                "staged": s.staged,
                "hub": s.hub,
                "commit": s.commit,
                "hub_matches": s.hub_matches,
                "problems": len(s.problems) or None,
            }
            for s in self.versions
        ]


@dataclass(frozen=True)
class Digests(Succeeded):
    command = "hash"
    digest_lines: list[str]  # sha256sum (and md5sum) lines

    def lines(self) -> list[str]:
        return self.digest_lines

    def document(self) -> dict[str, Any]:
        return {"lines": self.digest_lines}

    def quiet(self) -> list[str]:
        return self.digest_lines

    def agent(self) -> list[dict[str, Any]]:
        records = []
        for line in self.digest_lines:
            digest, _, path = line.partition("  ")
            records.append({"sha256" if len(digest) == 64 else "md5": digest, "path": path})
        return records


@dataclass(frozen=True)
class Serving(Succeeded):
    """`hub serve`, once listening (it then serves until interrupted)."""

    command = "hub serve"
    root: Path
    url: str

    def lines(self) -> list[str]:
        return [f"Local Hub serving {self.root} at {self.url}"]

    def document(self) -> dict[str, Any]:
        return {"root": str(self.root), "url": self.url}

    def quiet(self) -> list[str]:
        return [self.url]

    def agent(self) -> list[dict[str, Any]]:
        return [{"url": self.url, "root": self.root}]


@dataclass(frozen=True)
class Stopped(Succeeded):
    """`hub serve` stopped by SIGTERM or Ctrl-C: its normal end, not an error."""

    command = "hub serve"
    root: Path
    url: str
    signal: str  # SIGTERM or SIGINT

    def lines(self) -> list[str]:
        return [f"Local Hub at {self.url} stopped ({self.signal})"]

    def document(self) -> dict[str, Any]:
        return {"root": str(self.root), "url": self.url, "stopped_by": self.signal}

    def quiet(self) -> list[str]:
        return []

    def agent(self) -> list[dict[str, Any]]:
        return [{"url": self.url, "stopped_by": self.signal}]


@dataclass(frozen=True)
class Failure:
    """A command that failed: its problems, its exit code and the kind of error."""

    command: str | None
    exit_code: int
    kind: str
    problems: list[dict[str, str]]
    steps: StepsRan | None = None  # a build stopped: what it had run (release/pipeline.py)

    @classmethod
    def of(cls, command: str | None, error: ReleaseError) -> Failure:
        from release.pipeline import steps_ran

        problems = [p.as_dict() for p in error.problems]
        return cls(command, error.exit_code, error.kind, problems, steps_ran(error))

    def lines(self) -> list[str]:
        return [f"{p['file']}: {p['message']}" for p in self.problems]

    def document(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "ok": False,
            "error": self.kind,
            "exit_code": self.exit_code,
            "problems": self.problems,
            **(
                {"steps": step_records(self.steps.log), "stopped_at": self.steps.stopped}
                if self.steps is not None
                else {}
            ),
        }
