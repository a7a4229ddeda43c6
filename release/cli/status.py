"""`hf-release status`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli import calls
from release.cli.options import DIST, HUB_OPTIONS, examples
from release.cli.output import FORMAT, Output
from release.cli.results import StatusReport


@click.command(
    epilog=examples(
        "hf-release status",
        "hf-release status --local",
        "hf-release status --json",
    )
)
@click.option("--local", "local_only", is_flag=True, help="Do not ask the Hub; report the local state only.")
@HUB_OPTIONS
@DIST
@FORMAT
def status(
    local_only: bool, endpoint: str | None, token: str | None, root: Path | None, dist: Path | None, out: Output
) -> StatusReport:
    """Every version under artifacts/: spec, staged release (changed since build?), tag on the Hub, Hub files match."""
    return calls.status(local=local_only, endpoint=endpoint, token=token, root=root, dist=dist)
