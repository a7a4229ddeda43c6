"""`hf-release hub serve`: the local Hub."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import click

from release.cli.options import examples, numbered_secret_lines, secret, warn_on_command_line
from release.cli.output import FORMAT_OPTIONS, Output
from release.cli.results import Serving, Stopped
from release.errors import InputError, Problem, SigTerm, register_secret


@click.group(
    epilog=examples(
        "hf-release hub serve --root /tmp/hub --port 8000",
        "hf-release push v5 --endpoint http://127.0.0.1:8000",
    )
)
def hub() -> None:
    """A local Hub-compatible server: rehearse a release offline (tests and the demo use it)."""


@hub.command(
    "serve",
    epilog=examples(
        "hf-release hub serve --root /tmp/hub --port 8000",
        "hf-release hub serve --root /tmp/hub --token-file tokens.txt --json",
        "hf-release verify v5 --remote --endpoint http://127.0.0.1:8000",
    ),
)
@click.option(
    "--root",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder holding the Hub's repos (created if missing; kept across restarts).",
)
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (only loopback is allowed)."
)
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0 picks a free one; the URL is printed).",
)
@click.option(
    "--token",
    "tokens",
    multiple=True,
    callback=secret,
    help="Accepted token as TOKEN[:read|write] (default write); repeatable. Visible in the process list: "
    "prefer --token-file or $HF_TOKEN (the default).",
)
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Accepted tokens, one TOKEN[:read|write] a line.",
)
@click.option(
    "--fault",
    "faults",
    multiple=True,
    help="Inject faults for tests as METHOD:KIND:COUNT:REGEX, e.g. 'POST:503:2:/commit/'; "
    "see release/localhub/faults.py.",
)
@FORMAT_OPTIONS
def hub_serve(
    root: Path,
    host: str,
    port: int,
    tokens: tuple[str, ...],
    token_file: Path | None,
    faults: tuple[str, ...],
    fmt: str,
) -> None:
    """Serve Hub repos from ROOT until interrupted; prints its URL (in the chosen format) once listening."""
    try:
        from release.localhub import BadTokenSpecs, FaultPlan, parse_tokens, serve
    except ModuleNotFoundError as exc:
        raise InputError(
            f"the local Hub needs {exc.name}, of hf-release's extra [hub]; add it to this install: {add_hub_extra()}",
            file="hub serve",
        ) from None

    if tokens:
        warn_on_command_line("--token", "token", "--token-file or HF_TOKEN")
    specs: list[str | tuple[str, str]] = [*tokens]
    if token_file:  # each line named by FILE:LINE when it is malformed
        specs += [(f"{token_file}:{n}", line) for n, line in numbered_secret_lines(token_file, False, str(token_file))]
    if not specs and os.environ.get("HF_TOKEN"):
        register_secret(os.environ["HF_TOKEN"])
        specs = [("HF_TOKEN", os.environ["HF_TOKEN"])]
    if not specs:
        raise InputError(
            "give at least one token (HF_TOKEN or --token-file); the local Hub refuses writes without one", file="token"
        )
    try:
        accepted = parse_tokens(specs)
    except BadTokenSpecs as exc:
        raise InputError([Problem(where, message) for where, message in exc.problems]) from None
    try:
        plan = FaultPlan.parse(";".join(faults)) if faults else None
    except ValueError as exc:
        raise InputError(str(exc), file="hub serve") from None
    root.mkdir(parents=True, exist_ok=True)
    listening: list[str] = []

    def announce(url: str) -> None:
        listening.append(url)
        Output(fmt).result(Serving(root, url))

    try:
        serve(root, host, port, tokens=accepted, faults=plan, announce=announce)
    except (ValueError, OSError) as exc:
        raise InputError(str(exc), file=f"{host}:{port}") from None
    except KeyboardInterrupt as exc:  # uvicorn shut down gracefully, then raised the signal again
        if not listening:  # stopped before it served: an interruption like any other command's
            raise
        # serving until stopped is what this command does: SIGTERM or Ctrl-C is its normal end (exit 0)
        Output(fmt).result(Stopped(root, listening[0], "SIGTERM" if isinstance(exc, SigTerm) else "SIGINT"))


def add_hub_extra() -> str:
    """The command that adds the [hub] extra to the install running now: pipx's, uv's or pip's, from the source
    it was installed from (a local path, recorded by the installer as PEP 610 direct_url.json) — the package
    index may not hold hf-release at all."""
    from importlib import metadata

    try:
        dist = metadata.distribution("hf-release")
    except metadata.PackageNotFoundError:
        return f"{shlex.quote(sys.executable)} -m pip install 'hf-release[hub]'"
    needed = sorted(
        re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0] for r in dist.requires or [] if re.search(r"extra\s*==\s*.hub.", r)
    )
    target = shlex.quote(f"{_installed_from(dist) or _source_checkout() or 'hf-release'}[hub]")
    parts = Path(sys.prefix).parts
    if "pipx" in parts:
        return f"pipx inject hf-release {' '.join(needed)} (or: pipx install --force {target})"
    if "uv" in parts and "tools" in parts:
        return f"uv tool install --force {target}"
    return f"{shlex.quote(sys.executable)} -m pip install {target}"


def _source_checkout() -> str | None:
    """The checkout this package runs from (an editable install), if it is one."""
    checkout = Path(__file__).resolve().parents[2]
    return str(checkout) if (checkout / "pyproject.toml").is_file() and (checkout / "release").is_dir() else None


def _installed_from(dist: object) -> str | None:
    """The local folder or file this distribution was installed from, if its installer recorded one."""
    try:
        record = json.loads(dist.read_text("direct_url.json") or "null")  # type: ignore[attr-defined]
    except (ValueError, OSError):
        return None
    url = record.get("url", "") if isinstance(record, dict) else ""
    return unquote(urlsplit(url).path) if url.startswith("file://") else None
