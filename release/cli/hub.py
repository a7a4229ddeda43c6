"""`hf-release hub serve`: the local Hub."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..errors import InputError, register_secret
from .options import read_secret_lines, secret, warn_on_command_line


@click.group()
def hub() -> None:
    """A local Hub-compatible server: rehearse a release offline (tests and the demo use it)."""


@hub.command("serve")
@click.option("--root", required=True, type=click.Path(path_type=Path, file_okay=False), help="Folder holding the Hub's repos (created if missing; kept across restarts).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to bind (only loopback is allowed).")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="Port (0 picks a free one; the URL is printed).")
@click.option("--token", "tokens", multiple=True, callback=secret,
              help="Accepted token as TOKEN[:read|write] (default write); repeatable. Visible in the process list: "
                   "prefer --token-file or $HF_TOKEN (the default).")
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False),
              help="Accepted tokens, one TOKEN[:read|write] a line.")
@click.option("--fault", "faults", multiple=True, help="Inject faults for tests as METHOD:KIND:COUNT:REGEX, e.g. 'POST:503:2:/commit/'; see release/localhub/faults.py.")
def hub_serve(root: Path, host: str, port: int, tokens: tuple[str, ...], token_file: Path | None,
              faults: tuple[str, ...]) -> None:
    """Serve Hub repos from ROOT until interrupted."""
    try:
        from ..localhub import FaultPlan, parse_tokens, serve
    except ModuleNotFoundError as exc:
        raise InputError(f"the local Hub needs {exc.name}: pip install 'hf-release[hub]'", file="hub serve") from None

    if tokens:
        warn_on_command_line("--token", "token", "--token-file or HF_TOKEN")
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
