#!/usr/bin/env python3
"""The release workflow's job summary and step outputs, from the JSON documents hf-release printed.

    python scripts/ci_summary.py --dir "$RUNNER_TEMP"

reads DIR/build.json, verify.json, push.json, verify-remote.json and verify-signature.json (each the
stdout of `hf-release … --format json`; any may be missing or hold an error document) and writes:

- a Markdown summary (to $GITHUB_STEP_SUMMARY): the release (repo, tag, commit, card, digests),
  one line per step, the files table (path, role, size, sha256, what the push did), and every
  problem of a failed step;
- step outputs (to $GITHUB_OUTPUT): repo, tag, commit, manifest_digest (sha256 of release.json),
  release_digest, url, card_url — only those known.

Exit 1 when the documents contradict each other or the tag (the release is not the one the tag
names, or the Hub's tag is not at the commit the push made); 0 otherwise, also when a step failed
(that step already failed the job: the summary only reports it). Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEPS = (
    ("build", "build"),
    ("verify", "verify (staged)"),
    ("push", "push"),
    ("verify-remote", "verify --remote"),
    ("verify-signature", "verify signature on the Hub"),
)
OIDC_ISSUER = "https://token.actions.githubusercontent.com"
BOOKKEEPING = (("release.json", "manifest"), ("SHA256SUMS", "checksums"), ("model.sig", "signature"))


@dataclass
class Documents:
    """The documents found, by step name; `broken` names steps whose file is not one JSON document."""

    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)

    def ok(self, step: str) -> dict[str, Any] | None:
        doc = self.found.get(step)
        return doc if doc is not None and doc.get("ok") is True else None


def load_documents(folder: Path) -> Documents:
    docs = Documents()
    for step, _ in STEPS:
        path = folder / f"{step}.json"
        if not path.exists():
            continue
        text = path.read_text("utf-8", errors="replace").strip()
        try:
            doc = json.loads(text)
        except ValueError:
            docs.broken[step] = (
                "printed no JSON document (did it crash?)"
                if not text
                else "printed something that is not one JSON document"
            )
            continue
        if not isinstance(doc, dict) or "ok" not in doc:
            docs.broken[step] = "printed JSON that is not an hf-release document"
            continue
        docs.found[step] = doc
    return docs


@dataclass
class Release:
    tag: str | None
    repo: str | None = None
    version: str | None = None
    url: str | None = None
    commit: str | None = None
    hub_tag: str | None = None
    release_digest: str | None = None
    manifest_digest: str | None = None
    files: list[dict[str, Any]] = field(default_factory=list)
    actions: dict[str, str] = field(default_factory=dict)  # path -> what the push did
    signature: str | None = None  # sha256 of model.sig, when the release is signed
    bookkeeping: list[tuple[str, str, int, str]] = field(default_factory=list)  # (path, role, size, sha256)
    problems: list[str] = field(default_factory=list)  # contradictions this script found

    @property
    def card_url(self) -> str | None:
        ref = self.hub_tag or self.commit
        return f"{self.url}/blob/{ref}/README.md" if self.url and ref else None

    def outputs(self) -> dict[str, str]:
        values = {
            "repo": self.repo,
            "tag": self.hub_tag,
            "commit": self.commit,
            "manifest_digest": self.manifest_digest,
            "release_digest": self.release_digest,
            "url": self.url,
            "card_url": self.card_url,
        }
        return {k: v for k, v in values.items() if v}


def describe(docs: Documents, tag: str | None, dist: Path | None) -> Release:
    rel = Release(tag=tag)
    build = docs.ok("build")
    if build:
        manifest = build.get("manifest", {})
        rel.repo, rel.version = manifest.get("repo_id"), manifest.get("version")
        rel.release_digest = manifest.get("release_digest")
        rel.files = list(manifest.get("files", []))
        dist = dist or Path(build["dist"])
        if tag and rel.version and rel.version != tag:
            rel.problems.append(f"the tag is {tag} but the spec builds version {rel.version}")
    if dist is not None:
        for name, role in BOOKKEEPING:
            if (dist / name).is_file():
                rel.bookkeeping.append((name, role, (dist / name).stat().st_size, _sha256(dist / name)))
        digests = {name: sha for name, _, _, sha in rel.bookkeeping}
        rel.manifest_digest, rel.signature = digests.get("release.json"), digests.get("model.sig")
    push = docs.ok("push")
    if push:
        rel.url, rel.commit, rel.hub_tag = push.get("url"), push.get("commit"), push.get("tag")
        plan = push.get("plan", {})
        rel.repo = rel.repo or plan.get("repo_id")
        for action, label in (("add", "added"), ("change", "changed"), ("unchanged", "unchanged")):
            for entry in plan.get(action, []):
                rel.actions[entry["path"]] = label
        for path in plan.get("delete", []):
            rel.actions[path] = "deleted"
        if plan.get("tag") == "keep":
            rel.actions = {p: "already published" for p in rel.actions}
        if tag and rel.hub_tag and rel.hub_tag != tag:
            rel.problems.append(f"the push tagged {rel.hub_tag}, the workflow ran for {tag}")
    remote = (docs.ok("verify-remote") or {}).get("remote")
    if remote:
        rel.url = rel.url or remote.get("url")
        rel.hub_tag = rel.hub_tag or remote.get("tag")
        if rel.commit and remote.get("commit") != rel.commit:
            rel.problems.append(
                f"the Hub's tag {remote.get('tag')} is at {remote.get('commit')}, the push made {rel.commit}"
            )
        rel.commit = rel.commit or remote.get("commit")
    return rel


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- Markdown ------------------------------------------------------------------------------------


def cell(value: object) -> str:
    """Table-safe text: no line breaks, pipes escaped, angle brackets neutralised."""
    text = " ".join(str(value).split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(value: object) -> str:
    return f"`{cell(value).replace('`', '')}`"


def link(text: str, url: str | None) -> str:
    return f"[{text}]({url})" if url else text


def step_line(docs: Documents, step: str, label: str) -> str | None:
    if step in docs.broken:
        return f"| {label} | ❌ {cell(docs.broken[step])} |"
    doc = docs.found.get(step)
    if doc is None:
        return None
    if not doc.get("ok"):
        return f"| {label} | ❌ {cell(doc.get('error', 'failed'))} (exit {doc.get('exit_code', '?')}) |"
    detail = {
        "build": lambda d: f"{len(d.get('manifest', {}).get('files', []))} files staged in {code(d.get('dist'))}",
        "verify": lambda d: f"{d.get('files')} files, {d.get('bytes'):,} bytes match release.json",
        "push": lambda d: _push_detail(d),
        "verify-remote": lambda d: _remote_detail(d.get("remote", {})),
        "verify-signature": lambda d: "model.sig is valid over the Hub's files",
    }[step](doc)
    return f"| {label} | ✅ {detail} |"


def _remote_detail(remote: dict[str, Any]) -> str:
    tag = code(remote.get("tag"))
    if remote.get("checked") == "bytes":
        return f"every file's bytes at tag {tag} match ({remote.get('bytes_downloaded', 0):,} bytes downloaded)"
    return f"the Hub's listing at tag {tag} matches every file (bytes not downloaded)"


def _push_detail(doc: dict[str, Any]) -> str:
    plan = doc.get("plan", {})
    if plan.get("tag") == "keep":
        return f"{code(plan.get('version'))} was already published with these files; nothing sent"
    counts = ", ".join(
        f"{len(plan.get(k, []))} {label}"
        for k, label in (("add", "added"), ("change", "changed"), ("delete", "deleted"), ("unchanged", "unchanged"))
    )
    return f"{counts}; {doc.get('bytes_sent', 0):,} bytes sent" + (", verified" if doc.get("verified") else "")


def markdown(docs: Documents, rel: Release, *, identity: str | None, source_commit: str | None) -> str:
    failed = [s for s, _ in STEPS if s in docs.broken or (s in docs.found and not docs.found[s].get("ok"))]
    status = (
        "published"
        if docs.ok("push") and not failed and not rel.problems
        else (f"failed at {failed[0]}" if failed else ("inconsistent" if rel.problems else "not published"))
    )
    title = f"## Release {rel.tag or rel.version or '?'}" + (f" of {rel.repo}" if rel.repo else "") + f": {status}"
    out = [title, ""]

    facts = []
    if rel.repo:
        facts.append(("Hub repo", link(code(rel.repo), rel.url)))
    if rel.hub_tag:
        facts.append(("Tag", link(code(rel.hub_tag), f"{rel.url}/tree/{rel.hub_tag}" if rel.url else None)))
    if rel.commit:
        facts.append(("Commit", link(code(rel.commit), f"{rel.url}/commit/{rel.commit}" if rel.url else None)))
    if rel.card_url:
        facts.append(("Model card", link(f"README.md at {rel.hub_tag or rel.commit[:12]}", rel.card_url)))
    if rel.release_digest:
        facts.append(("Release digest", code(rel.release_digest)))
    if rel.manifest_digest:
        facts.append(("release.json sha256", code(rel.manifest_digest)))
    if source_commit:
        facts.append(("Source commit", code(source_commit)))
    if rel.signature:
        who = f" by {code(identity)}" if identity else ""
        facts.append(("Signature", f"model.sig (Sigstore{who}), sha256 {code(rel.signature)}"))
    if facts:
        out += ["| | |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in facts), ""]

    steps = [line for s, label in STEPS if (line := step_line(docs, s, label))]
    if steps:
        out += ["| step | result |", "| --- | --- |", *steps, ""]

    if rel.files:
        out += [
            "### Files",
            "",
            "| file | role | size (bytes) | sha256 | on the Hub |",
            "| --- | --- | ---: | --- | --- |",
        ]
        for f in sorted(rel.files, key=lambda f: f["path_in_repo"]):
            role = f.get("role", "") + (" (generated)" if f.get("generated") else "")
            out.append(
                f"| {code(f['path_in_repo'])} | {cell(role)} | {f['size']:,} | {code(f['sha256'])} | "
                f"{cell(rel.actions.get(f['path_in_repo'], '—'))} |"
            )
        for name, role, size, sha in rel.bookkeeping:
            out.append(f"| {code(name)} | {role} | {size:,} | {code(sha)} | {cell(rel.actions.get(name, '—'))} |")
        out.append("")

    problems = [f"{p['file']}: {p['message']}" for s, _ in STEPS for p in (docs.found.get(s) or {}).get("problems", [])]
    problems += rel.problems
    if problems:
        out += ["### Problems", "", *(f"- {cell(p)}" for p in problems), ""]

    if rel.signature and identity and rel.hub_tag:
        out += [
            "### Verify it yourself",
            "",
            "```",
            f"hf-release verify {rel.hub_tag} --remote --signature dist/{rel.hub_tag}/model.sig \\",
            f"  --identity {identity} \\",
            f"  --oidc-issuer {OIDC_ISSUER}",
            "```",
            "",
        ]
    return "\n".join(out)


def write_outputs(path: Path, outputs: dict[str, str]) -> None:
    with path.open("a", encoding="utf-8") as f:
        for key, value in outputs.items():
            if "\n" in value or "\r" in value:
                raise ValueError(f"output {key} holds a line break")
            f.write(f"{key}={value}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="folder holding build.json, push.json, …")
    parser.add_argument("--dist", type=Path, help="the staged release (default: the build document's dist)")
    parser.add_argument(
        "--tag", default=os.environ.get("GITHUB_REF_NAME"), help="the release tag (default: GITHUB_REF_NAME)"
    )
    parser.add_argument(
        "--summary", type=Path, default=_env_path("GITHUB_STEP_SUMMARY"), help="default: GITHUB_STEP_SUMMARY"
    )
    parser.add_argument("--output", type=Path, default=_env_path("GITHUB_OUTPUT"), help="default: GITHUB_OUTPUT")
    args = parser.parse_args(argv)

    docs = load_documents(args.dir)
    rel = describe(docs, args.tag, args.dist)
    server, workflow_ref = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_WORKFLOW_REF")
    identity = f"{server}/{workflow_ref}" if server and workflow_ref else None
    text = markdown(docs, rel, identity=identity, source_commit=os.environ.get("GITHUB_SHA"))
    if args.summary:
        with args.summary.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    outputs = rel.outputs()
    if args.output:
        write_outputs(args.output, outputs)
    for key, value in outputs.items():
        print(f"{key}={value}")
    for problem in rel.problems:
        print(f"ci_summary: {problem}", file=sys.stderr)
    return 1 if rel.problems else 0


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


if __name__ == "__main__":
    sys.exit(main())
