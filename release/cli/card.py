"""`hf-release card`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli.options import DIST, SPEC, TEMPLATE, VERSION, examples, project_paths, spec_for
from release.cli.output import FORMAT, Output
from release.cli.results import CardRendered
from release.util.capped import read_capped

MAX_DIFF_BYTES = 16 * 1024 * 1024  # `card --diff FILE`: a card, not a data file (difflib is super-linear)


@click.command(
    epilog=examples(
        "hf-release card v5",
        "hf-release card v5 --dry-run",
        "hf-release card v5 --diff ./README.md",
    )
)
@VERSION
@SPEC
@TEMPLATE
@click.option(
    "--diff",
    "diff_against",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Show what changed against this card (e.g. the Hub's README.md); writes nothing.",
)
@click.option("--dry-run", is_flag=True, help="Render and lint, but write nothing.")
@DIST
@FORMAT
def card(
    version: str | None,
    spec: Path | None,
    template: Path | None,
    diff_against: Path | None,
    dry_run: bool,
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> CardRendered:
    """Re-render the model card (README.md and chart) into the staged release."""
    from release.card.staged import card_diff, render_card
    from release.staged.names import CARD_NAME

    project, dist = project_paths(root, dist)
    release_spec = spec_for(version, spec, project)
    staged = dist / release_spec.version
    # read with a cap before rendering, not by its stat: /dev/zero or a FIFO says 0 bytes and never ends
    old_card = (
        None
        if diff_against is None
        else read_capped(
            diff_against, MAX_DIFF_BYTES, what="model card", advice="--diff compares with a model card (a README.md)"
        )
    )
    result = render_card(release_spec, staged, template=template, write=not (diff_against or dry_run))
    if diff_against is None or old_card is None:
        return CardRendered(staged, staged / CARD_NAME, result)
    diff = card_diff(
        old_card.decode("utf-8", errors="replace"),
        result.text,
        old_label=str(diff_against),
        new_label=f"{release_spec.version}/{CARD_NAME} (rendered)",
    )
    return CardRendered(staged, staged / CARD_NAME, result, diff, diff_against)
