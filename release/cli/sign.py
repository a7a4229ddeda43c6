"""`hf-release sign`."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli import calls
from release.cli.options import DIST, VERSION, examples, read_secret_lines, secret, warn_on_command_line
from release.cli.output import FORMAT, Output
from release.cli.results import Signed
from release.errors import InputError


@click.command(
    epilog=examples(
        "hf-release sign v5 --private-key key.pem",
        "hf-release sign v5 --private-key key.pem --password-file key.pass",
    )
)
@VERSION
@click.option(
    "--private-key",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="PEM elliptic-curve private key (offline signing).",
)
@click.option(
    "--password",
    default=None,
    callback=secret,
    help="Password of an encrypted private key (visible in ps: prefer --password-file).",
)
@click.option(
    "--password-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="File whose first line is the private key's password.",
)
@click.option(
    "--certificate",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Signing certificate for the key (certificate signing).",
)
@click.option(
    "--certificate-chain",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Further certificates of the chain; repeatable.",
)
@DIST
@FORMAT
def sign(
    version: str | None,
    private_key: Path,
    password: str | None,
    password_file: Path | None,
    certificate: Path | None,
    certificate_chain: tuple[Path, ...],
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> Signed:
    """Sign the staged release (OpenSSF model signing); model.sig is pushed with it."""
    if password and password_file:
        raise InputError("give the password one way, not --password and --password-file", file="password")
    if password:
        warn_on_command_line("--password", "password", "--password-file")
    if password_file:
        password = read_secret_lines(password_file, False, str(password_file))[0]

    return calls.sign(
        version,
        private_key=private_key,
        password=password,
        certificate=certificate,
        certificate_chain=certificate_chain,
        root=root,
        dist=dist,
    )
