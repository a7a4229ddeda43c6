"""`hf-release sign` and signature verification, through OpenSSF model signing (a Sigstore bundle
holding an in-toto statement over per-file sha256 digests) rather than a home-made scheme.

Signing reuses the manifest's digests: model_signing's manifest is built from release.json instead
of hashing the files again. Verification hashes the files for real (that is its point), locally or
on a snapshot of the Hub at the tag. The card and release.json are inside what is signed.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypedDict, Unpack

from release.errors import InputError, Problem, PublishRefused, VerifyFailed, first_line
from release.staged import StagedRelease, changed_since_build, read_staged
from release.staged.locks import version_lock
from release.staged.manifest import Manifest
from release.staged.names import CARD_NAME, GITATTRIBUTES_NAME, MANIFEST_ROLE, SIGNATURE_NAME, SUMS_ROLE, bookkeeping

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from model_signing import hashing as ms_hashing
    from model_signing import manifest as ms_manifest

    from release.hub.client import HubClient

# model_signing 1.1.1 imports pyOpenSSL without declaring it; pyproject.toml declares it for us.


def _signing_manifest(staged: StagedRelease) -> ms_manifest.Manifest:
    from model_signing import manifest as ms_manifest
    from model_signing._hashing.hashing import Digest

    digests = {f.path_in_repo: f.sha256 for f in staged.manifest.files}
    for name in bookkeeping(
        MANIFEST_ROLE, SUMS_ROLE
    ):  # small bookkeeping files: hashed here (as read once), not in release.json
        digests[name] = hashlib.sha256(staged.bookkeeping[name]).hexdigest()
    items = [
        ms_manifest.FileManifestItem(path=PurePosixPath(path), digest=Digest("sha256", bytes.fromhex(sha)))
        for path, sha in sorted(digests.items())
    ]
    serialization = ms_manifest._FileSerialization("sha256", False, frozenset({Path(SIGNATURE_NAME)}))
    return ms_manifest.Manifest(staged.dist.name, items, serialization)


def sign_release(
    dist: Path,
    *,
    private_key: Path,
    password: str | None = None,
    certificate: Path | None = None,
    chain: tuple[Path, ...] = (),
    version: str | None = None,
) -> Path:
    """Sign the staged release with an offline EC key (or key + certificate chain); returns model.sig's path.
    `version`: the one the user named; the staged release must be that version's. Holds the version's lock
    (a build or push of it meanwhile is refused)."""
    if not dist.parent.is_dir():  # nothing staged: read_staged says so
        read_staged(dist, version=version)
    with version_lock(dist, f"hf-release sign {dist.name}"):
        return _sign(dist, private_key, password, certificate, chain, version)


def _sign(
    dist: Path,
    private_key: Path,
    password: str | None,
    certificate: Path | None,
    chain: tuple[Path, ...],
    version: str | None,
) -> Path:
    from model_signing._signing import sign_certificate, sign_ec_key, signing

    staged = read_staged(dist, version=version)
    for path in (private_key, certificate, *chain):
        if path is not None and not path.is_file():
            raise InputError("no such key or certificate file", file=str(path))
    _check_card_method(dist, "certificate" if certificate is not None else "key")
    # the signature vouches for the digests in release.json: they must still describe the files
    changed, _ = changed_since_build(staged)
    if changed:
        raise PublishRefused(changed)
    try:
        signer: sign_ec_key.Signer
        if certificate is not None:
            signer = sign_certificate.Signer(private_key, certificate, list(chain))
        else:
            # bytes, as cryptography's load_pem_private_key takes it: model_signing's annotation (str) is wrong
            password_bytes = password.encode() if password is not None else None
            signer = sign_ec_key.Signer(private_key, password_bytes)  # type: ignore[arg-type]
        signature = signer.sign(signing.Payload(_signing_manifest(staged)))
    except (ValueError, TypeError) as exc:
        raise InputError(f"cannot sign with this key: {exc}", file=str(private_key)) from None
    out = dist / SIGNATURE_NAME
    signature.write(out)
    return out


def _check_card_method(dist: Path, method: str) -> None:
    """The card's "Verify this release" command must work on this signature: same model_signing method."""
    from release.card.verify_commands import printed_method

    card = dist / CARD_NAME
    printed = printed_method(card.read_text("utf-8")) if card.is_file() else None
    if printed is None:  # signed all the same (the signature is sound), but readers are not told how to check it
        key = (
            'method = "key", public_key = "NAME.pub.pem"'
            if method == "key"
            else 'method = "key" or "sigstore": the card prints a check for those'
        )
        logger.warning(
            "warning: %s: the card does not tell readers how to check %s; add [card.signature] (%s) to the spec, "
            "rebuild and sign again (docs/card.md)",
            CARD_NAME,
            SIGNATURE_NAME,
            key,
        )
    elif printed != method:
        raise InputError(
            f"the card tells readers to run `model_signing verify {printed}`, but this signs with a {method}; "
            f"sign that way, or set [card.signature] method to match and rebuild",
            file=CARD_NAME,
        )


class SignatureKeys(TypedDict):
    """What a signature is checked against, as `verify_signature` takes it."""

    public_key: Path | None
    certificate_chain: tuple[Path, ...]
    identity: str | None
    oidc_issuer: str | None


def verify_signature(
    folder: Path,
    *,
    signature: Path,
    public_key: Path | None = None,
    certificate_chain: tuple[Path, ...] = (),
    identity: str | None = None,
    oidc_issuer: str | None = None,
) -> None:
    """Hash every file in `folder` and check it against the signed statement; raises VerifyFailed."""
    from model_signing import verifying

    if not signature.is_file():
        raise InputError("no such signature file; sign the release first (`hf-release sign`)", file=str(signature))
    keys = [p for p in (public_key, *certificate_chain) if p is not None and not p.is_file()]
    if keys:
        raise InputError([Problem(str(p), "no such key or certificate file") for p in keys])
    config = verifying.Config()
    try:
        if public_key is not None:
            config.use_elliptic_key_verifier(public_key=public_key)
        elif certificate_chain:
            config.use_certificate_verifier(certificate_chain=list(certificate_chain))
        elif identity and oidc_issuer:
            config.use_sigstore_verifier(identity=identity, oidc_issuer=oidc_issuer)
        else:
            raise InputError(
                "give --public-key, --certificate-chain, or --identity with --oidc-issuer", file=str(signature)
            )
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"cannot use this key or certificate: {first_line(exc)}", file=str(public_key or certificate_chain[0])
        ) from None
    config.set_hashing_config(_hashing_config())
    try:
        config.verify(folder, signature)
    except ValueError as exc:
        raise VerifyFailed(_signature_problems(folder, signature, exc)) from None
    except Exception as exc:  # the library raises bare Exceptions for a bad bundle or key  # noqa: BLE001
        raise VerifyFailed(Problem(str(signature), f"signature does not verify: {first_line(exc)}")) from None


def verify_remote_signature(
    hub: HubClient,
    manifest: Manifest,
    *,
    revision: str,
    signature_name: str = SIGNATURE_NAME,
    **keys: Unpack[SignatureKeys],
) -> None:
    """Download the release at the tag (into a temporary folder) and verify its signature there."""
    from huggingface_hub import snapshot_download

    from release.hub.client import remote_errors

    with tempfile.TemporaryDirectory() as tmp:
        with remote_errors(manifest.repo_id, f"downloading {revision}"):
            folder = Path(
                snapshot_download(
                    manifest.repo_id,
                    revision=revision,
                    endpoint=hub.endpoint,
                    token=hub.api.token,
                    local_dir=Path(tmp) / manifest.version,
                    cache_dir=Path(tmp) / "cache",
                )
            )
        for leftover in (folder / ".cache", folder / GITATTRIBUTES_NAME):
            _remove_tree(leftover)
        verify_signature(folder, signature=folder / signature_name, **keys)


def _hashing_config() -> ms_hashing.Config:
    from model_signing import hashing

    return hashing.Config().use_file_serialization(hashing_algorithm="sha256", ignore_paths=[Path(SIGNATURE_NAME)])


def _signature_problems(folder: Path, signature: Path, exc: ValueError) -> list[Problem]:
    """model_signing reports a mismatch as one long string; name each file instead."""
    text = str(exc)
    problems = [
        Problem(name, "differs from the signed content")
        for name in re.findall(r"Hash mismatch for \\?'([^'\\]+)\\?'", text)
    ]
    for kind, what in (
        ("Missing files", "is signed but missing"),
        ("Extra files found", "is not covered by the signature (extra file)"),
    ):
        found = re.search(rf"{kind} in model '[^']*': ([^\]\"]+)", text)
        if found:
            problems += [Problem(name.strip(" '"), what) for name in found.group(1).split(",")]
    return problems or [Problem(str(signature), f"signature does not verify: {first_line(exc)}")]


def _remove_tree(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
