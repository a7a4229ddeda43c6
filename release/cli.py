"""The `hf-release` command line: thin commands that parse, call one core function, and print.

Every error is a ReleaseError; `main` maps it to one line per problem and a documented exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from . import __version__
from .errors import EXIT_CODES, InputError, ReleaseError, redact
from .spec import find_spec, load_spec

FORMAT = click.option(
    "--format", "fmt", type=click.Choice(["human", "json"]), default="human", show_default=True,
    help="human: lines and progress bars for people; json: one JSON document on stdout.",
)
DIST = click.option(
    "--dist", type=click.Path(path_type=Path, file_okay=False), default=Path("dist"), show_default=True,
    help="Folder holding staged releases (one subfolder per version).",
)
VERSION = click.argument("version", required=False)


class Output:
    """Prints for people or for machines; progress bars only for people at a terminal."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    @property
    def progress(self) -> bool:
        return self.fmt == "human" and sys.stderr.isatty()

    def done(self, command: str, document: dict[str, Any], lines: list[str]) -> None:
        if self.fmt == "json":
            click.echo(redact(json.dumps({"command": command, "ok": True, **document}, indent=2, sort_keys=True)))
        else:
            for line in lines:
                click.echo(redact(line))


def _spec_path(version: str | None, spec: Path | None) -> Path:
    return spec if spec is not None else find_spec(version, Path.cwd())


EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES.items())


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODE_HELP)
@click.version_option(__version__, prog_name="hf-release")
def cli() -> None:
    """Publish a model release to the Hugging Face Hub exactly, checkably and honestly."""


@cli.command()
@VERSION
@click.option("--spec", type=click.Path(path_type=Path, dir_okay=False), help="The release spec (default: artifacts/VERSION/release.toml).")
@click.option("--template", type=click.Path(path_type=Path, dir_okay=False), help="A card template instead of the spec's or the default.")
@DIST
@FORMAT
def build(version: str | None, spec: Path | None, template: Path | None, dist: Path, fmt: str) -> None:
    """Stage, check, hash and describe a release into DIST/VERSION."""
    from .build import build as run_build

    out = Output(fmt)
    result = run_build(load_spec(_spec_path(version, spec)), dist, template=template, progress=out.progress)
    m = result.manifest
    lines = [f"{name:<24} {getattr(r, 'detail', '') or 'skipped: ' + getattr(r, 'reason', '')}" for name, r in result.steps]
    lines += [f"copied across filesystems (not hard-linked): {p}" for p in result.copied]
    lines += [f"built {m.repo_id}@{m.version} in {result.dist} — {len(m.files)} files, release digest {m.release_digest[:12]}"]
    out.done("build", {"dist": str(result.dist), "manifest": m.as_dict(), "copied": result.copied}, lines)


@cli.command()
@VERSION
@click.option("--peer", "peers", multiple=True, type=click.Path(path_type=Path, dir_okay=False), help="A digest list from another node (`hf-release hash` output); repeatable.")
@DIST
@FORMAT
def verify(version: str | None, peers: tuple[Path, ...], dist: Path, fmt: str) -> None:
    """Prove the staged release matches its manifest, byte for byte."""
    from .verify import verify_staged

    out = Output(fmt)
    result = verify_staged(_dist_for(version, dist), progress=out.progress, peers=list(peers))
    m = result.manifest
    lines = [f"verified {m.repo_id}@{m.version}: {result.files} files, {result.bytes} bytes match release.json"]
    lines += [f"peer {p}: digests agree" for p in result.peers]
    out.done("verify", {"dist": str(result.dist), "files": result.files, "bytes": result.bytes,
                        "release_digest": m.release_digest, "peers": result.peers}, lines)


@cli.command("hash")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--md5", is_flag=True, help="Also print md5sum-format lines.")
@FORMAT
def hash_command(paths: tuple[Path, ...], md5: bool, fmt: str) -> None:
    """Print the digest lines this node sees (compare them elsewhere with `verify --peer`)."""
    from .verify import digest_lines

    lines = digest_lines(list(paths), md5=md5)
    Output(fmt).done("hash", {"lines": lines}, lines)


def _dist_for(version: str | None, dist: Path) -> Path:
    if version:
        return dist / version
    staged = sorted(p for p in dist.glob("v*") if (p / "release.json").exists()) if dist.exists() else []
    if len(staged) != 1:
        raise InputError(f"found {len(staged)} staged releases; name the version, e.g. `v5`", file=str(dist))
    return staged[0]


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one place errors become messages and exit codes."""
    fmt = "json" if _wants_json(argv if argv is not None else sys.argv[1:]) else "human"
    try:
        cli.main(args=argv, prog_name="hf-release", standalone_mode=False)
    except ReleaseError as exc:
        _report(exc.exit_code, exc.kind, [p.as_dict() for p in exc.problems], fmt)
    except click.exceptions.Abort:
        _report(130, "interrupted", [{"file": "hf-release", "message": "interrupted"}], fmt)
    except click.ClickException as exc:
        _report(2, "usage", [{"file": "hf-release", "message": exc.format_message()}], fmt)
    except KeyboardInterrupt:
        _report(130, "interrupted", [{"file": "hf-release", "message": "interrupted"}], fmt)
    sys.exit(0)


def _wants_json(argv: list[str]) -> bool:
    return any(a == "--format=json" for a in argv) or any(
        a == "--format" and i + 1 < len(argv) and argv[i + 1] == "json" for i, a in enumerate(argv)
    )


def _report(code: int, kind: str, problems: list[dict[str, str]], fmt: str) -> None:
    for p in problems:
        click.echo(redact(f"{p['file']}: {p['message']}"), err=True)
    if fmt == "json":
        click.echo(redact(json.dumps({"ok": False, "error": kind, "exit_code": code, "problems": problems}, indent=2)))
    sys.exit(code)

