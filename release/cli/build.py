"""`hf-release build`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from release.cli import calls
from release.cli.options import DIST, HUB_OPTIONS, SPEC, TEMPLATE, VERSION, examples
from release.cli.output import FORMAT, Output, stopped
from release.cli.results import Built


@click.command(
    epilog=examples(
        "hf-release build v5",
        "hf-release build v5 -v --dist /tmp/dist",
        "hf-release build v5 --prove-with .venv-libs/bin/python --format json",
    )
)
@VERSION
@SPEC
@TEMPLATE
@click.option(
    "--since",
    help="Compare with this version: staged (v5), on the Hub (hub:v5), or its spec's files (spec:v5, offline). "
    "Default: the previous version of this repo, staged, else published on the Hub, else its spec's files.",
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
@click.option(
    "-v", "--verbose", is_flag=True, help="Each skipped step on its own line, with why (--format json always says)."
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
    verbose: bool,
    endpoint: str | None,
    token: str | None,
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> Built:
    """Stage, check, hash and describe a release into DIST/VERSION."""
    try:
        built = calls.build(
            version,
            spec=spec,
            template=template,
            since=since,
            endpoint=endpoint,
            token=token,
            root=root,
            dist=dist,
            progress=out.progress,
            prove_with=prove_with,
            trust_remote_code=trust_remote_code,
        )
    except BaseException as exc:  # failed or interrupted: what ran is shown, then main prints why
        stopped(exc, out.fmt, verbose)
        raise
    return dataclasses.replace(built, verbose=verbose)
