"""`hf-release hash`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli.options import examples
from release.cli.output import FORMAT, Output
from release.cli.results import Digests


@click.command(
    "hash",
    epilog=examples(
        "hf-release hash dist/v5/model.safetensors",
        "hf-release hash dist/v5/*.json --md5 > node-b.txt",
        "hf-release verify v5 --peer node-b.txt",
    ),
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--md5", is_flag=True, help="Also print md5sum-format lines.")
@FORMAT
def hash_command(paths: tuple[Path, ...], md5: bool, out: Output) -> Digests:
    """Print the digest lines this node sees (compare them elsewhere with `verify --peer`)."""
    from release.verify import digest_lines

    return Digests(digest_lines(list(paths), md5=md5))
