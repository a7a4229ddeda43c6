"""`hf-release init`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli import calls
from release.cli.options import examples
from release.cli.output import FORMAT, Output
from release.cli.results import Initialized


@click.command(
    epilog=examples(
        "hf-release init v1 --files ./checkpoint --repo-id my-org/my-model",
        "hf-release init v1 --files ./checkpoint --repo-id my-org/my-model --exclude '*.pt'",
        "hf-release init v6 --from v5",
    )
)
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
    "--include",
    multiple=True,
    metavar="PATTERN",
    help="With --files: take only the files matching a pattern (as `hf upload --include`); what init leaves out by "
    "default (what a trainer leaves) only where the pattern writes out its name or folder (train.py, "
    "checkpoint-4/). Repeatable.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="PATTERN",
    help="With --files: leave out the files matching a pattern (as `hf upload --exclude`). Repeatable.",
)
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The project folder (default: the nearest folder upward holding artifacts/, else the current one).",
)
@FORMAT
def init(
    version: str,
    files_dir: Path | None,
    repo_id: str | None,
    previous: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    root: Path | None,
    out: Output,
) -> Initialized:
    """Write artifacts/VERSION/release.toml: from a folder of files (roles and kind detected), or from the previous
    version."""
    return calls.init(
        version, files=files_dir, repo_id=repo_id, previous=previous, root=root, include=include, exclude=exclude
    )
