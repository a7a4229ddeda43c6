"""`hf-release build`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from release.cli.options import DIST, HUB_OPTIONS, SPEC, TEMPLATE, VERSION, project_paths, spec_for
from release.cli.output import FORMAT, Output
from release.cli.results import Built


@click.command()
@VERSION
@SPEC
@TEMPLATE
@click.option(
    "--since",
    help="Compare with this version: staged (v5), or on the Hub (hub:v5). "
    "Default: the previous version of this repo, staged, else published on the Hub.",
)
@click.option(
    "--prove-with",
    metavar="PYTHON",
    help="The Python interpreter that has the release's library (transformers), to prove that the card's code "
    "loads the staged release. Default: $LIBRARY_PYTHON, else this one when it has the library.",
)
@click.option(
    "--trust-remote-code",
    is_flag=True,
    help="Let the load proof run the model's own code (config.json's auto_map files); recorded in release.json.",
)
@HUB_OPTIONS
@DIST
@FORMAT
def build(
    version: str | None,
    spec: Path | None,
    template: Path | None,
    since: str | None,
    prove_with: str | None,
    trust_remote_code: bool,
    endpoint: str | None,
    token: str | None,
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> Built:
    """Stage, check, hash and describe a release into DIST/VERSION."""
    from release.builder import build as run_build

    def hub() -> Any:  # connects (and imports the Hub client) only when the previous version is read from the Hub
        from release.hub.client import connect

        return connect(endpoint, token)

    project, dist = project_paths(root, dist)
    return Built(
        run_build(
            spec_for(version, spec, project),
            dist,
            template=template,
            progress=out.progress,
            since=since,
            hub=hub,
            prove_with=prove_with,
            trust_remote_code=trust_remote_code,
        )
    )
