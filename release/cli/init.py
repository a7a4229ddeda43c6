"""`hf-release init`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli.output import FORMAT, Output
from release.cli.results import Initialized
from release.errors import InputError


@click.command()
@click.argument("version")
@click.option(
    "--files",
    "files_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The folder holding the release's files (referenced where they are, not copied).",
)
@click.option("--repo-id", help="The Hub repo, ORG/NAME (with --files).")
@click.option(
    "--from",
    "previous",
    help="Start from this earlier version's spec (e.g. v5): unchanged files are reused where they are.",
)
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The project folder (default: the nearest folder upward holding artifacts/, else the current one).",
)
@FORMAT
def init(
    version: str, files_dir: Path | None, repo_id: str | None, previous: str | None, root: Path | None, out: Output
) -> Initialized:
    """Write artifacts/VERSION/release.toml: from a folder of files (roles and kind detected), or from the previous
    version."""
    from release.init import init_from_files, init_from_previous
    from release.spec.project import project_root

    project = project_root(root)
    if (files_dir is None) == (previous is None):
        raise InputError("give either --files DIR --repo-id ORG/NAME, or --from VERSION", file="hf-release init")
    if previous is not None:
        return Initialized(init_from_previous(project, version, previous), version)
    if repo_id is None:
        raise InputError("--files needs --repo-id ORG/NAME (the Hub repo to publish to)", file="hf-release init")
    assert files_dir is not None, "one of --files and --from, and not --from"
    return Initialized(init_from_files(project, version, files_dir, repo_id), version)
