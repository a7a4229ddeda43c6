"""The `hf-release` command line: thin commands that parse, call one core function, and print.

Every error is a ReleaseError; `main` maps it to one line per problem and a documented exit code.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .errors import EXIT_CODES, InputError, ReleaseError, redact, redact_logs, register_secret
from .output import FORMAT, Output, wants_json

if TYPE_CHECKING:
    from .spec import ReleaseSpec



def DIST(command: Any) -> Any:  # noqa: N802 - used as a decorator, like the options above
    """--root (the project: nearest folder upward holding artifacts/) and --dist (its staged releases)."""
    command = click.option(
        "--dist", type=click.Path(path_type=Path, file_okay=False), default=None,
        help="Folder holding staged releases, one subfolder per version (default: ROOT/dist).",
    )(command)
    return click.option(
        "--root", type=click.Path(path_type=Path, file_okay=False), default=None,
        help="The project folder holding artifacts/ (default: the nearest such folder from here upward).",
    )(command)

VERSION = click.argument("version", required=False)
SPEC = click.option(
    "--spec", type=click.Path(path_type=Path, dir_okay=False), help="The release spec (default: artifacts/VERSION/release.toml)."
)
TEMPLATE = click.option(
    "--template", type=click.Path(path_type=Path, dir_okay=False), help="A card template instead of the spec's or the default."
)


def _secret(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    for item in value if isinstance(value, tuple) else [value]:
        register_secret(item)  # before anything, even a usage error, could echo it
        register_secret(item and item.rpartition(":")[0])  # hub serve's TOKEN:ROLE
    return value


def _endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value:
        from urllib.parse import urlsplit

        parts = urlsplit(value)
        register_secret(parts.password)  # before a usage error could echo the URL
        register_secret(parts.username)
    return value


TOKEN_FILE_LIMIT = 16 * 1024  # bytes: a token file is one short line
MAX_DIFF_BYTES = 16 * 1024 * 1024  # `card --diff FILE`: a card, not a data file (difflib is super-linear)
TOKEN_ON_COMMAND_LINE = "warning: --token puts the token in the process list (ps) of this machine; use {} instead"


def read_secret_lines(source: Path | None, from_stdin: bool, label: str) -> list[str]:
    """The non-empty lines of a token file or of standard input (bounded), each registered as a secret."""
    try:
        if from_stdin:
            data = sys.stdin.buffer.read(TOKEN_FILE_LIMIT + 1)
        else:
            assert source is not None
            with source.open("rb") as handle:
                data = handle.read(TOKEN_FILE_LIMIT + 1)
    except OSError as exc:
        raise InputError(f"cannot read the token: {exc.strerror or exc}", file=label) from None
    if len(data) > TOKEN_FILE_LIMIT:
        raise InputError(f"is larger than {TOKEN_FILE_LIMIT} bytes; a token file holds one token a line", file=label)
    lines = [line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
    for line in lines:
        register_secret(line)
        register_secret(line.rpartition(":")[0])
    if not lines:
        raise InputError("holds no token", file=label)
    return lines


def _token(token: str | None, token_file: Path | None, token_stdin: bool) -> str | None:
    """The token from --token (warned about), --token-file or --token-stdin; None leaves HF_TOKEN and the
    login cache to huggingface_hub."""
    given = [name for name, value in (("--token", token), ("--token-file", token_file), ("--token-stdin", token_stdin)) if value]
    if len(given) > 1:
        raise InputError(f"give the token one way, not {' and '.join(given)}", file="token")
    if token:
        click.echo(TOKEN_ON_COMMAND_LINE.format("HF_TOKEN, --token-file or --token-stdin"), err=True)
        return token
    if token_file or token_stdin:
        return read_secret_lines(token_file, token_stdin, str(token_file or "standard input"))[0]
    return None


def HUB_OPTIONS(command: Any) -> Any:  # noqa: N802 - used as a decorator, like the options above
    """--endpoint and the token options, resolved as the hf CLI resolves them; the command gets `token`."""

    @functools.wraps(command)
    def with_token(*args: Any, token: str | None, token_file: Path | None, token_stdin: bool, **kwargs: Any) -> Any:
        return command(*args, token=_token(token, token_file, token_stdin), **kwargs)

    with_token = click.option("--token-stdin", is_flag=True, help="Read the Hub token from standard input.")(with_token)
    with_token = click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False),
                              help="Read the Hub token from the first line of this file.")(with_token)
    with_token = click.option("--token", default=None, callback=_secret,
                              help="Hub token (visible in the process list: prefer the default HF_TOKEN, then the "
                                   "login cache, or --token-file / --token-stdin). Never printed.")(with_token)
    return click.option("--endpoint", default=None, callback=_endpoint,
                        help="Hub URL (default: HF_ENDPOINT, then https://huggingface.co).")(with_token)


def _project(root: Path | None, dist: Path | None) -> tuple[Path, Path]:
    """The project root and its dist folder, from --root/--dist or found upward from here."""
    from .project import DIST as DIST_NAME, project_root

    found = project_root(root)
    if dist is None:
        dist = found / DIST_NAME
        if dist.is_relative_to(Path.cwd().resolve()):  # messages name `dist/v5`, not a long absolute path
            dist = dist.relative_to(Path.cwd().resolve())
    return found, dist


def _load_spec(version: str | None, spec: Path | None, root: Path) -> ReleaseSpec:
    """The release spec named by --spec, else by VERSION (imported here: only build and card need it)."""
    from .spec import find_spec, load_spec

    loaded = load_spec(spec if spec is not None else find_spec(version, root))
    if spec is not None and version is not None and version != loaded.version:
        raise InputError(f"says version {loaded.version!r}, the command line {version!r}; make them agree", file=str(spec))
    return loaded


EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODE_HELP)
@click.version_option(__version__, prog_name="hf-release")
def cli() -> None:
    """Publish a model release to the Hugging Face Hub exactly, checkably and honestly."""


@cli.command()
@VERSION
@SPEC
@TEMPLATE
@click.option("--since", help="Compare with this version: staged (v5), or on the Hub (hub:v5). Default: the previous staged version.")
@HUB_OPTIONS
@DIST
@FORMAT
def build(version: str | None, spec: Path | None, template: Path | None, since: str | None, endpoint: str | None,
          token: str | None, root: Path | None, dist: Path | None, fmt: str) -> None:
    """Stage, check, hash and describe a release into DIST/VERSION."""
    from .build import build as run_build
    from .pipeline import Skipped

    def hub() -> Any:  # only `--since hub:VERSION` connects (and imports the Hub client)
        from .publish.client import connect

        return connect(endpoint, token)

    out = Output(fmt)
    project, dist = _project(root, dist)
    result = run_build(_load_spec(version, spec, project), dist, template=template, progress=out.progress,
                       since=since, hub=hub)
    m = result.manifest
    lines = [f"{name:<24} {'skipped: ' + r.reason if isinstance(r, Skipped) else r.detail}" for name, r in result.steps]
    lines += [f"copied across filesystems (not hard-linked): {p}" for p in result.copied]
    lines += [f"built {m.repo_id}@{m.version} in {result.dist} — {len(m.files)} files, release digest {m.release_digest[:12]}"]
    out.done("build", {"dist": str(result.dist), "manifest": m.as_dict(), "copied": result.copied}, lines, [str(result.dist)])


@cli.command()
@VERSION
@click.option("--remote", is_flag=True, help="Also check the Hub's listing at the version's tag: paths, sizes and the "
              "hashes the Hub records (LFS sha256, git blob id). Reads no file's bytes.")
@click.option("--download", is_flag=True, help="With --remote: also stream every file at the tag from the Hub and hash "
              "its bytes (nothing is written to disk).")
@click.option("--revision", help="With --remote: check this revision (branch, tag or commit) instead of the version's tag.")
@HUB_OPTIONS
@click.option("--signature", type=click.Path(path_type=Path, dir_okay=False), help="Check this model-signing bundle (e.g. DIST/VERSION/model.sig) over the files.")
@click.option("--public-key", type=click.Path(path_type=Path, dir_okay=False), help="PEM public key the release was signed with.")
@click.option("--certificate-chain", multiple=True, type=click.Path(path_type=Path, dir_okay=False), help="PEM certificate chain (key + certificate signing); repeatable.")
@click.option("--identity", help="Keyless (Sigstore) signatures: the signer identity, e.g. the workflow's URL.")
@click.option("--oidc-issuer", help="Keyless (Sigstore) signatures: the identity's OIDC issuer.")
@click.option("--peer", "peers", multiple=True, type=click.Path(path_type=Path, dir_okay=False), help="A digest list from another node (`hf-release hash` output); repeatable.")
@DIST
@FORMAT
def verify(
    version: str | None, remote: bool, download: bool, revision: str | None, endpoint: str | None, token: str | None,
    signature: Path | None,
    public_key: Path | None, certificate_chain: tuple[Path, ...], identity: str | None, oidc_issuer: str | None,
    peers: tuple[Path, ...], root: Path | None, dist: Path | None, fmt: str,
) -> None:
    """Prove the staged release matches its manifest, byte for byte; --remote checks the Hub's listing at the
    tag, --remote --download every byte the Hub serves."""
    from .verify import verify_staged

    if download and not remote:
        raise InputError("--download checks the Hub's copy: give it with --remote", file="--download")
    if revision is not None and not remote:
        raise InputError("--revision names what to check on the Hub; add --remote", file="--revision")
    out = Output(fmt)
    result = verify_staged(_dist_for(version, root, dist), progress=out.progress, peers=list(peers), version=version)
    m = result.manifest
    lines = [f"verified {m.repo_id}@{m.version}: {result.files} files, {result.bytes} bytes match release.json"]
    lines += [f"peer {p}: digests agree" for p in result.peers]
    document = {"dist": str(result.dist), "files": result.files, "bytes": result.bytes,
                "release_digest": m.release_digest, "peers": result.peers}
    keys = {"public_key": public_key, "certificate_chain": certificate_chain, "identity": identity, "oidc_issuer": oidc_issuer}
    if signature:
        from .sign import verify_signature

        verify_signature(result.dist, signature=signature, **keys)
        lines.append(f"signature {signature}: valid over every staged file")
        document["signature"] = str(signature)
    if remote:
        from .publish.client import connect
        from .publish.verify_remote import verify_remote

        hub = connect(endpoint, token)
        at_revision = revision or m.version
        at = verify_remote(hub, result.staged, revision=at_revision, download=download)
        proof = (f"every file's bytes, downloaded ({at['downloaded']} B) and hashed, match" if download else
                 "the Hub's listing matches every file (paths, sizes, recorded LFS sha256 / git blob ids; "
                 "bytes not read: add --download)")
        label = f"tag {m.version}" if revision is None else f"revision {revision}"
        lines.append(f"verified {hub.repo_url(m.repo_id)} at {label} (commit {at['commit']}): {proof}")
        document["remote"] = {"url": hub.repo_url(m.repo_id), "tag": at_revision, "commit": at["commit"],
                              "checked": "bytes" if download else "listing",
                              "bytes_downloaded": int(at["downloaded"])}
        if signature:
            from .sign import verify_remote_signature

            verify_remote_signature(hub, m, revision=at_revision, signature_name=signature.name, **keys)
            lines.append(f"signature {signature.name}: valid over the Hub's files at {at_revision}")
    out.done("verify", document, lines, [m.release_digest])


@cli.command()
@VERSION
@click.option("--private-key", required=True, type=click.Path(path_type=Path, dir_okay=False), help="PEM elliptic-curve private key (offline signing).")
@click.option("--password", default=None, callback=_secret, help="Password of an encrypted private key (visible in ps: prefer --password-file).")
@click.option("--password-file", type=click.Path(path_type=Path, dir_okay=False), help="File whose first line is the private key's password.")
@click.option("--certificate", type=click.Path(path_type=Path, dir_okay=False), help="Signing certificate for the key (certificate signing).")
@click.option("--certificate-chain", multiple=True, type=click.Path(path_type=Path, dir_okay=False), help="Further certificates of the chain; repeatable.")
@DIST
@FORMAT
def sign(version: str | None, private_key: Path, password: str | None, password_file: Path | None, certificate: Path | None,
         certificate_chain: tuple[Path, ...], root: Path | None, dist: Path | None, fmt: str) -> None:
    """Sign the staged release (OpenSSF model signing); model.sig is pushed with it."""
    from .sign import sign_release

    if password and password_file:
        raise InputError("give the password one way, not --password and --password-file", file="password")
    if password:
        click.echo("warning: --password puts the password in the process list (ps) of this machine; use --password-file instead", err=True)
    if password_file:
        password = read_secret_lines(password_file, False, str(password_file))[0]

    path = sign_release(_dist_for(version, root, dist), private_key=private_key, password=password,
                        certificate=certificate, chain=certificate_chain, version=version)
    Output(fmt).done("sign", {"signature": str(path)}, [f"signed {path.parent} → {path}"], [str(path)])


@cli.command()
@VERSION
@HUB_OPTIONS
@click.option("--dry-run", is_flag=True, help="Print the plan (files added/changed/deleted/unchanged, tag action) and write nothing.")
@click.option("--force-tag", is_flag=True, help="Move an existing version tag to this release (a published version is otherwise immutable).")
@click.option("--keep-extra", is_flag=True, help="Keep files on main that are not part of this release (default: delete them in the same commit).")
@click.option("--create-pr", is_flag=True, help="Open a pull request instead of writing main; no tag is created until it is merged and pushed again.")
@click.option("--private/--no-private", " /--public", default=None,
              help="Create the repo private (or not; --public is an alias of --no-private). Ignored if the repo exists.")
@click.option("--overwrite-card", is_flag=True, help="Replace a README.md that was edited by hand on the Hub.")
@click.option("--allow-older", is_flag=True, help="Publish a version older than the one main holds (main goes back to it).")
@click.option("-m", "--message", help="Your words for the commit description and the tag message, before the list of changes.")
@DIST
@FORMAT
def push(
    version: str | None, endpoint: str | None, token: str | None, dry_run: bool, force_tag: bool,
    keep_extra: bool, create_pr: bool, private: bool | None, overwrite_card: bool, allow_older: bool, message: str | None,
    root: Path | None, dist: Path | None, fmt: str,
) -> None:
    """Publish the staged release: one atomic commit on main plus the version tag, then verify it remotely."""
    from .publish.push import PushOptions, push as run_push

    out = Output(fmt)
    options = PushOptions(endpoint=endpoint, token=token, dry_run=dry_run, force_tag=force_tag, keep_extra=keep_extra,
                          create_pr=create_pr, private=private, overwrite_card=overwrite_card, allow_older=allow_older, progress=out.progress,
                          message=message)
    result = run_push(_dist_for(version, root, dist), options, version=version)
    plan = result.plan
    lines = [f"{'plan for' if dry_run else 'pushed'} {result.url} ({plan.version})"]
    lines += [f"  add      {p} ({s} B)" for p, s in plan.add]
    lines += [f"  change   {p} ({s} B)" for p, s in plan.change]
    lines += [f"  delete   {p}" for p in plan.delete]
    lines += [f"  same     {p} ({s} B)" for p, s in plan.unchanged]
    lines.append("  " + {
        "create": f"create tag {plan.version}",
        "keep": f"tag {plan.version} already published with exactly these files: nothing to commit",
        "move": f"move tag {plan.version} to the new commit (--force-tag)",
        "none": f"no tag: a pull request is opened; tag {plan.version} after merging",
    }[plan.tag])
    if not dry_run:
        sent = f"{result.bytes_sent} bytes sent" + ("" if result.bytes_measured else " (offered to Xet, not measured)")
        lines.append(f"commit {result.commit or '-'}, tag {result.tag or '-'}, {sent}, {result.bytes_skipped} bytes "
                     f"already on the Hub, {len(plan.unchanged)} files unchanged" + (", verified on the Hub" if result.verified else ""))
        if result.pr_url:
            lines.append(f"pull request: {result.pr_url} — merge it, then run `hf-release push {plan.version}` to tag it")
    out.done("push", {"url": result.url, "dry_run": dry_run, "plan": plan.as_dict(), "commit": result.commit,
                      "tag": result.tag, "pr_url": result.pr_url, "bytes_sent": result.bytes_sent,
                      "bytes_skipped": result.bytes_skipped, "bytes_measured": result.bytes_measured,
                      "verified": result.verified, "xet": result.xet}, lines,
             [result.commit] if result.commit and not dry_run else [])


@cli.command()
@VERSION
@SPEC
@TEMPLATE
@click.option("--diff", "diff_against", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="Show what changed against this card (e.g. the Hub's README.md); writes nothing.")
@click.option("--dry-run", is_flag=True, help="Render and lint, but write nothing.")
@DIST
@FORMAT
def card(version: str | None, spec: Path | None, template: Path | None, diff_against: Path | None,
         dry_run: bool, root: Path | None, dist: Path | None, fmt: str) -> None:
    """Re-render the model card (README.md and chart) into the staged release."""
    from .card.staged import card_diff, render_card

    project, dist = _project(root, dist)
    release_spec = _load_spec(version, spec, project)
    staged = dist / release_spec.version
    if diff_against is not None and diff_against.stat().st_size > MAX_DIFF_BYTES:
        raise InputError(f"is larger than {MAX_DIFF_BYTES // 1024 // 1024} MiB; --diff compares with a model card", file=str(diff_against))
    result = render_card(release_spec, staged, template=template, write=not (diff_against or dry_run))
    if diff_against is not None:
        diff = card_diff(diff_against.read_text("utf-8", errors="replace"), result.text,
                         old_label=str(diff_against), new_label=f"{release_spec.version}/README.md (rendered)")
        lines = [diff.rstrip("\n") or f"no difference from {diff_against}"]
    else:
        diff = None
        changed = "unchanged" if result.previous == result.text else "updated"
        lines = [f"card {'rendered (dry run)' if not result.written else changed}: {staged / 'README.md'}"]
    Output(fmt).done("card", {"dist": str(staged), "changed": result.previous != result.text, "written": result.written,
                              "diff": diff}, lines, [str(staged / "README.md")])


@cli.command()
@click.argument("version")
@click.option("--files", "files_dir", type=click.Path(path_type=Path, file_okay=False), help="The folder holding the release's files (referenced where they are, not copied).")
@click.option("--repo-id", help="The Hub repo, ORG/NAME (with --files).")
@click.option("--from", "previous", help="Start from this earlier version's spec (e.g. v5): unchanged files are reused where they are.")
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The project folder (default: the nearest folder upward holding artifacts/, else the current one).")
@FORMAT
def init(version: str, files_dir: Path | None, repo_id: str | None, previous: str | None, root: Path | None, fmt: str) -> None:
    """Write artifacts/VERSION/release.toml: from a folder of files (roles and kind detected), or from the previous version."""
    from .init import init_from_files, init_from_previous
    from .project import project_root

    project = project_root(root)
    if (files_dir is None) == (previous is None):
        raise InputError("give either --files DIR --repo-id ORG/NAME, or --from VERSION", file="hf-release init")
    if previous is not None:
        result = init_from_previous(project, version, previous)
    elif repo_id is None:
        raise InputError("--files needs --repo-id ORG/NAME (the Hub repo to publish to)", file="hf-release init")
    else:
        result = init_from_files(project, version, files_dir, repo_id)
    lines = [f"wrote {result.spec}" + (f" from {result.previous}" if result.previous else f" (kind {result.kind})")]
    lines += [f"  {d.role:<18} {d.path.name}" for d in result.files]
    lines += [f"  reused from {result.previous}: {', '.join(result.reused)}"] if result.reused else []
    lines += [f"  not in the spec: {name} (in {result.spec.parent.name}/ but no [[files]] source names it; add one if it belongs to the release)"
              for name in result.unlisted or []]
    lines.append(f"next: check it, then `hf-release build {version}`")
    Output(fmt).done("init", {"spec": str(result.spec), "kind": result.kind, "previous": result.previous,
                              "files": [{"source": str(d.path), "role": d.role, "why": d.why} for d in result.files],
                              "reused": result.reused or [], "unlisted": result.unlisted or []}, lines, [str(result.spec)])


@cli.command()
@click.option("--local", "local_only", is_flag=True, help="Do not ask the Hub; report the local state only.")
@HUB_OPTIONS
@DIST
@FORMAT
def status(local_only: bool, endpoint: str | None, token: str | None, root: Path | None, dist: Path | None, fmt: str) -> None:
    """Every version under artifacts/: spec, staged release (changed since build?), tag on the Hub, Hub files match."""
    from .status import project_status

    project, dist = _project(root, dist)
    hub = None
    if not local_only:
        from .publish.client import connect

        hub = connect(endpoint, token)
    statuses = project_status(project, dist, hub)
    lines = [line for s in statuses for line in (s.summary, *(f"  {p}" for p in s.problems))]
    lines = lines or [f"no versions under {project / 'artifacts'}; start one with `hf-release init`"]
    drift = any(s.hub_matches is False for s in statuses)  # the Hub holds other files than the manifest: exit 1
    Output(fmt).done("status", {"root": str(project), "versions": [s.as_dict() for s in statuses]}, lines,
                     [f"{s.version}\t{s.staged}\t{s.hub}" for s in statuses], ok=not drift)


@cli.command("hash")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--md5", is_flag=True, help="Also print md5sum-format lines.")
@FORMAT
def hash_command(paths: tuple[Path, ...], md5: bool, fmt: str) -> None:
    """Print the digest lines this node sees (compare them elsewhere with `verify --peer`)."""
    from .verify import digest_lines

    lines = digest_lines(list(paths), md5=md5)
    Output(fmt).done("hash", {"lines": lines}, lines, lines)


@cli.group()
def hub() -> None:
    """A local Hub-compatible server: rehearse a release offline (tests and the demo use it)."""


@hub.command("serve")
@click.option("--root", required=True, type=click.Path(path_type=Path, file_okay=False), help="Folder holding the Hub's repos (created if missing; kept across restarts).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (only loopback is allowed).")
@click.option("--port", default=0, show_default=True, help="Port (0 picks a free one; the URL is printed).")
@click.option("--token", "tokens", multiple=True, callback=_secret,
              help="Accepted token as TOKEN[:read|write] (default write); repeatable. Visible in the process list: "
                   "prefer --token-file or $HF_TOKEN (the default).")
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False),
              help="Accepted tokens, one TOKEN[:read|write] a line.")
@click.option("--fault", "faults", multiple=True, help="Inject faults for tests as METHOD:KIND:COUNT:REGEX, e.g. 'POST:503:2:/commit/'; see release/hub/faults.py.")
def hub_serve(root: Path, host: str, port: int, tokens: tuple[str, ...], token_file: Path | None,
              faults: tuple[str, ...]) -> None:
    """Serve Hub repos from ROOT until interrupted."""
    try:
        from .hub import FaultPlan, parse_tokens, serve
    except ModuleNotFoundError as exc:
        raise InputError(f"the local Hub needs {exc.name}: pip install 'hf-release[hub]'", file="hub serve") from None

    if tokens:
        click.echo(TOKEN_ON_COMMAND_LINE.format("--token-file or HF_TOKEN"), err=True)
    specs = list(tokens) + (read_secret_lines(token_file, False, str(token_file)) if token_file else [])
    if not specs and os.environ.get("HF_TOKEN"):
        specs = [os.environ["HF_TOKEN"]]
        register_secret(specs[0])
    if not specs:
        raise InputError("give at least one token (HF_TOKEN or --token-file); the local Hub refuses writes without one", file="token")
    try:
        accepted = parse_tokens(specs)
        plan = FaultPlan.parse(";".join(faults)) if faults else None
    except ValueError as exc:
        raise InputError(str(exc), file="hub serve") from None
    root.mkdir(parents=True, exist_ok=True)
    try:
        serve(root, host, port, tokens=accepted, faults=plan)
    except (ValueError, OSError) as exc:
        raise InputError(str(exc), file=f"{host}:{port}") from None


def _dist_for(version: str | None, root: Path | None, dist: Path | None) -> Path:
    """The staged release of VERSION (or the only one staged) under the project's dist folder. The command
    reads it, and refuses one holding another version's release (release/staging.py, read_staged)."""
    from .versions import version_problem

    _, dist = _project(root, dist)
    if version:
        why = version_problem(version)
        if why:
            raise InputError(f"version {version!r} {why}; name a version such as v5, 1.0.0 or 2026-11-30", file="VERSION")
        return dist / version
    staged = sorted(p for p in dist.iterdir() if (p / "release.json").is_file()) if dist.is_dir() else []
    if len(staged) != 1:
        raise InputError(f"found {len(staged)} staged releases; name the version, e.g. `v5`", file=str(dist))
    return staged[0]


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one place errors become messages and exit codes."""
    args = argv if argv is not None else sys.argv[1:]
    redact_logs()
    fmt = "json" if wants_json(args) else "human"
    command = next((a for a in args if not a.startswith("-")), None)
    try:
        cli.main(args=argv, prog_name="hf-release", standalone_mode=False)
    except ReleaseError as exc:
        _report(command, exc.exit_code, exc.kind, [p.as_dict() for p in exc.problems], fmt)
    except (click.exceptions.Abort, KeyboardInterrupt):
        # Exit now: what must be undone was undone on the way up (build removes its staging folder), and a
        # normal shutdown would wait for worker threads or let a late second interrupt end the process by signal.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            _report(command, 130, "interrupted", [{"file": "hf-release", "message": "interrupted"}], fmt)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    except click.ClickException as exc:
        _report(command, 2, "usage", [{"file": "hf-release", "message": exc.format_message()}], fmt)
    except OSError as exc:  # a file or the network failed under us: still one line, never a traceback
        remote = isinstance(exc, ConnectionError) or type(exc).__module__.startswith(("huggingface_hub", "httpx"))
        where = str(exc.filename) if exc.filename else "hf-release"
        _report(command, 3 if remote else 2, "remote-error" if remote else "input-error",
                [{"file": where, "message": f"{exc.strerror or exc}; check the path, its permissions and free space"}], fmt)
    sys.exit(0)


def _report(command: str | None, code: int, kind: str, problems: list[dict[str, str]], fmt: str) -> None:
    for p in problems:
        click.echo(redact(f"{p['file']}: {p['message']}"), err=True)
    if fmt == "json":
        document = {"command": command, "ok": False, "error": kind, "exit_code": code, "problems": problems}
        click.echo(redact(json.dumps(document, indent=2)))
    sys.exit(code)

