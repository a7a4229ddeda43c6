"""`hf-release verify`: the staged release, its peers, its signature, its build provenance, the Hub's copy."""

from __future__ import annotations

from pathlib import Path

import click

from release.cli import calls
from release.cli.options import DIST, HUB_OPTIONS, VERSION, examples
from release.cli.output import FORMAT, Output
from release.cli.results import Verified


@click.command(
    epilog=examples(
        "hf-release verify v5",
        "hf-release verify v5 --remote --download",
        "hf-release verify v5 --peer node-b.txt --allow-partial",
    )
)
@VERSION
@click.option(
    "--remote",
    is_flag=True,
    help="Also check the Hub's listing at the version's tag: paths, sizes and the "
    "hashes the Hub records (LFS sha256, git blob id). Reads no file's bytes.",
)
@click.option(
    "--download",
    is_flag=True,
    help="With --remote: also stream every file at the tag from the Hub and hash "
    "its bytes (nothing is written to disk).",
)
@click.option(
    "--revision", help="With --remote: check this revision (branch, tag or commit) instead of the version's tag."
)
@HUB_OPTIONS
@click.option(
    "--signature",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Check this model-signing bundle (e.g. DIST/VERSION/model.sig) over the files.",
)
@click.option(
    "--public-key", type=click.Path(path_type=Path, dir_okay=False), help="PEM public key the release was signed with."
)
@click.option(
    "--certificate-chain",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="PEM certificate chain (key + certificate signing); repeatable.",
)
@click.option("--identity", help="Keyless (Sigstore) signatures: the signer identity, e.g. the workflow's URL.")
@click.option("--oidc-issuer", help="Keyless (Sigstore) signatures: the identity's OIDC issuer.")
@click.option(
    "--peer",
    "peers",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A digest list from another node (`hf-release hash` output); repeatable. "
    "It must cover every file but the card and chart.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="With --peer: accept a digest list that leaves files out (they are named, not compared).",
)
@click.option(
    "--provenance",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Check this build-provenance bundle file (`gh attestation download` output: Sigstore bundles, one a line) "
    "offline: each must attest exactly SHA256SUMS and release.json as staged, signed by the release workflow of "
    "the repository [card.attestation] names at the version's tag (issuer GitHub Actions). Sigstore's checks run "
    "offline: certificate chain, SCT, transparency log inclusion proof and checkpoint, DSSE signature; the trusted "
    "root is not refreshed.",
)
@click.option(
    "--trusted-root",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --provenance: the Sigstore trusted root (JSON) to check against; default: the public-good root "
    "sigstore-python ships (a snapshot: a key rotated in since needs a newer root).",
)
@DIST
@FORMAT
def verify(
    version: str | None,
    remote: bool,
    download: bool,
    revision: str | None,
    endpoint: str | None,
    token: str | None,
    signature: Path | None,
    public_key: Path | None,
    certificate_chain: tuple[Path, ...],
    identity: str | None,
    oidc_issuer: str | None,
    peers: tuple[Path, ...],
    allow_partial: bool,
    provenance: Path | None,
    trusted_root: Path | None,
    root: Path | None,
    dist: Path | None,
    out: Output,
) -> Verified:
    """Prove the staged release matches its manifest, byte for byte; --remote checks the Hub's listing at the
    tag, --remote --download every byte the Hub serves."""
    return calls.verify(
        version,
        remote=remote,
        download=download,
        revision=revision,
        endpoint=endpoint,
        token=token,
        signature=signature,
        public_key=public_key,
        certificate_chain=certificate_chain,
        identity=identity,
        oidc_issuer=oidc_issuer,
        peers=peers,
        allow_partial=allow_partial,
        provenance=provenance,
        trusted_root=trusted_root,
        root=root,
        dist=dist,
        progress=out.progress,
    )
