"""`hf-release push`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli import calls
from release.cli.options import DIST, HUB_OPTIONS, VERSION, examples
from release.cli.output import FORMAT, Output
from release.cli.results import Pushed


@click.command(
    epilog=examples(
        "hf-release push v5 --dry-run",
        "hf-release push v5 --token-file ~/.hf-token",
        "hf-release push v5 --create-pr -m 'Release v5'",
    )
)
@VERSION
@HUB_OPTIONS
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (files added/changed/deleted/unchanged, tag action) and write nothing.",
)
@click.option(
    "--force-tag",
    is_flag=True,
    help="Move an existing version tag to this release (a published version is otherwise immutable).",
)
@click.option(
    "--keep-extra",
    is_flag=True,
    help="Keep files on main that are not part of this release (default: delete those an earlier release listed).",
)
@click.option(
    "--delete-extra",
    is_flag=True,
    help="Delete files on main that no earlier release listed (default: refuse, naming them).",
)
@click.option(
    "--create-pr",
    is_flag=True,
    help="Open a pull request instead of writing main; no tag is created until it is merged and pushed again.",
)
@click.option(
    "--private/--no-private",
    " /--public",
    default=None,
    help="Create the repo private (or not; --public is an alias of --no-private). Ignored if the repo exists.",
)
@click.option("--overwrite-card", is_flag=True, help="Replace a README.md that was edited by hand on the Hub.")
@click.option(
    "--allow-older", is_flag=True, help="Publish a version older than the one main holds (main goes back to it)."
)
@click.option("--allow-placeholder", is_flag=True, help="Publish a card that still holds init's placeholder summary.")
@click.option(
    "-m", "--message", help="Your words for the commit description and the tag message, before the list of changes."
)
@DIST
@FORMAT
def push(
    version: str | None,
    endpoint: str | None,
    token: str | None,
    dry_run: bool,
    force_tag: bool,
    keep_extra: bool,
    delete_extra: bool,
    create_pr: bool,
    private: bool | None,
    overwrite_card: bool,
    allow_older: bool,
    allow_placeholder: bool,
    message: str | None,
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> Pushed:
    """Publish the staged release: one atomic commit on main plus the version tag, then verify it remotely."""
    return calls.push(
        version,
        endpoint=endpoint,
        token=token,
        dry_run=dry_run,
        force_tag=force_tag,
        keep_extra=keep_extra,
        delete_extra=delete_extra,
        create_pr=create_pr,
        private=private,
        overwrite_card=overwrite_card,
        allow_older=allow_older,
        allow_placeholder=allow_placeholder,
        message=message,
        root=root,
        dist=dist,
        progress=out.progress,
    )
