"""`hf-release status`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli.options import DIST, HUB_OPTIONS, project_paths
from release.cli.output import FORMAT, Output
from release.cli.results import StatusReport


@click.command()
@click.option("--local", "local_only", is_flag=True, help="Do not ask the Hub; report the local state only.")
@HUB_OPTIONS
@DIST
@FORMAT
def status(
    local_only: bool, endpoint: str | None, token: str | None, root: Path | None, dist: Path | None, out: Output
) -> StatusReport:
    """Every version under artifacts/: spec, staged release (changed since build?), tag on the Hub, Hub files match."""
    from huggingface_hub import constants

    from release.status import project_status

    project, dist = project_paths(root, dist)
    hub = None
    offline = not local_only and constants.is_offline_mode()  # HF_HUB_OFFLINE=1: what can be seen here, not exit 3
    if not (local_only or offline):
        from release.hub.client import connect

        hub = connect(endpoint, token)
    return StatusReport(project, project_status(project, dist, hub), offline=offline)
