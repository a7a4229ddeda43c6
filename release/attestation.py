"""`hf-release verify --provenance BUNDLE`: the build provenance the release workflow attested, checked offline.

The publish job attests SHA256SUMS and release.json with actions/attest-build-provenance (docs/github-actions.md);
`gh attestation download` saves what GitHub stores as a JSON-lines file, one Sigstore bundle a line: a DSSE
envelope whose payload is an in-toto Statement (SLSA provenance v1) naming the attested files and their sha256,
signed with a short-lived certificate that names the workflow run's identity.

Each bundle goes through sigstore-python's own Verifier, offline, against a Sigstore trusted root (by default
the public-good root sigstore-python ships; `--trusted-root` gives another): the certificate chains to the root's
CA at the time the log recorded, its embedded SCT verifies against the root's CT log keys, the transparency log
entry's inclusion proof, signed checkpoint and inclusion promise verify against the root's log keys and match
the envelope, and the DSSE signature verifies with the certificate's key. On top, hf-release checks what
the release is: the certificate's identity (SAN URI) is the release workflow of the repository the spec's
[card.attestation] names at the version's tag, its issuer GitHub Actions' OIDC issuer, and the statement's
subjects are exactly SHA256SUMS and release.json with the staged files' sha256. Nothing is fetched: the trusted
root is not refreshed (a key Sigstore rotated in later needs `--trusted-root`), and a bundle without a
transparency log entry (a private repository's attestation, signed by GitHub's own Sigstore instance with
timestamps only) is refused rather than checked in part. tests/test_attestation.py makes such bundles offline:
a local CA, CT log and transparency log, and the trusted root naming them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from release.errors import InputError, Problem, VerifyFailed, first_line
from release.staged import StagedRelease
from release.staged.names import MANIFEST_NAME, SUMS_NAME
from release.util.jsonio import TooLarge, parse, read_bounded

if TYPE_CHECKING:
    from cryptography.x509 import Certificate
    from sigstore.models import Bundle, TrustedRoot

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
RELEASE_WORKFLOW = ".github/workflows/release.yml"
IN_TOTO = "application/vnd.in-toto+json"
STATEMENT_TYPES = ("https://in-toto.io/Statement/v1", "https://in-toto.io/Statement/v0.1")
SLSA_PROVENANCE = "https://slsa.dev/provenance/v1"
ATTESTED = (SUMS_NAME, MANIFEST_NAME)
MAX_BUNDLE_BYTES = 4 * 1024 * 1024  # a bundle is a few KiB; `gh attestation download` writes one per attestation
MAX_BUNDLES = 64
MAX_ROOT_BYTES = 4 * 1024 * 1024  # the public-good trusted root is ~10 KiB
OIDC_ISSUER_OIDS = ("1.3.6.1.4.1.57264.1.1", "1.3.6.1.4.1.57264.1.8")  # Fulcio's issuer extensions (v1: raw, v2: DER)
# the public-good Sigstore trusted root as sigstore-python ships it (the snapshot its TUF client starts from)
PUBLIC_GOOD_ROOT = ("https%3A%2F%2Ftuf-repo-cdn.sigstore.dev", "trusted_root.json")


@dataclass(frozen=True)
class ProvenanceChecked:
    """What `verify --provenance` proved: every bundle in the file attests these staged files, signed by
    `identity` (issuer `issuer`)."""

    bundle: Path
    attestations: int
    identity: str
    issuer: str
    subjects: dict[str, str]  # attested name -> sha256, equal to the staged files'


def workflow_identity(repository: str, version: str) -> str:
    """The certificate identity GitHub's OIDC token gives the release workflow run for the tag `version`."""
    return f"https://github.com/{repository}/{RELEASE_WORKFLOW}@refs/tags/{version}"


def verify_provenance(
    staged: StagedRelease, bundle_path: Path, *, repository: str, trusted_root: Path | None = None
) -> ProvenanceChecked:
    """Check every bundle in `bundle_path` against the staged release; raises InputError (a file that is not a
    bundle, an unreadable trusted root) or VerifyFailed (every problem found, each naming its file)."""
    root = _trusted_root(trusted_root)
    bundles = _read_bundles(bundle_path)
    identity = workflow_identity(repository, staged.manifest.version)
    expected = {
        name: hashlib.sha256(staged.bookkeeping[name]).hexdigest() for name in ATTESTED if name in staged.bookkeeping
    }
    problems: list[Problem] = []
    for where, bundle in bundles:
        problems += _bundle_problems(where, bundle, root, identity, expected)
    if problems:
        raise VerifyFailed(problems)
    return ProvenanceChecked(bundle_path, len(bundles), identity, GITHUB_ISSUER, expected)


def _trusted_root(path: Path | None) -> TrustedRoot:
    from sigstore.models import TrustedRoot
    from sigstore_models.trustroot.v1 import TrustedRoot as TrustedRootMessage

    where = str(path) if path is not None else "sigstore's public-good trusted root"
    try:
        if path is None:
            data = resources.files("sigstore._store").joinpath(*PUBLIC_GOOD_ROOT).read_bytes()
        else:
            data = read_bounded(path, MAX_ROOT_BYTES)
        return TrustedRoot(TrustedRootMessage.from_json(data))
    except FileNotFoundError:
        raise InputError("no such trusted root file", file=where) from None
    except TooLarge:
        raise InputError(
            f"over {MAX_ROOT_BYTES // 1024 // 1024} MiB: not a Sigstore trusted root", file=where
        ) from None
    except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        raise InputError(f"not a Sigstore trusted root (JSON): {first_line(exc)}", file=where) from None
    except Exception as exc:  # sigstore's own Error for an unknown media type  # noqa: BLE001
        raise InputError(f"not a Sigstore trusted root: {first_line(exc)}", file=where) from None


def _read_bundles(path: Path) -> list[tuple[str, Bundle]]:
    """The bundles of a `gh attestation download` file (JSON lines) or of a single bundle's JSON, each with
    where it is (`FILE`, or `FILE:LINE` when there are several)."""
    from sigstore.models import Bundle

    try:
        text = read_bounded(path, MAX_BUNDLE_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise InputError(
            "no such bundle file; `gh attestation download FILE --repo OWNER/REPO` saves one", file=str(path)
        ) from None
    except TooLarge:
        raise InputError(
            f"over {MAX_BUNDLE_BYTES // 1024 // 1024} MiB: not a Sigstore bundle file", file=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the bundle file: {first_line(exc)}", file=str(path)) from None
    try:
        documents = [(str(path), parse(text))]
    except ValueError:  # not one JSON document: JSON lines
        documents = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    documents.append((f"{path}:{number}", parse(line)))
                except ValueError as exc:
                    raise InputError(f"not JSON: {first_line(exc)}", file=f"{path}:{number}") from None
        if len(documents) == 1:
            documents = [(str(path), documents[0][1])]
    if not documents:
        raise InputError("holds no Sigstore bundle", file=str(path))
    if len(documents) > MAX_BUNDLES:
        raise InputError(
            f"holds {len(documents)} bundles, over {MAX_BUNDLES}: not one release's attestations", file=str(path)
        )
    bundles = []
    for where, document in documents:
        try:
            bundles.append((where, Bundle.from_json(_json_text(document))))
        except Exception as exc:  # sigstore raises InvalidBundle, pydantic ValidationError, ValueError  # noqa: BLE001
            raise InputError(f"not a Sigstore bundle: {first_line(exc)}", file=where) from None
    return bundles


def _json_text(document: Any) -> str:
    import json

    return json.dumps(document)


def _bundle_problems(
    where: str, bundle: Bundle, root: TrustedRoot, identity: str, expected: dict[str, str]
) -> list[Problem]:
    from sigstore.errors import Error as SigstoreError
    from sigstore.verify import Verifier
    from sigstore.verify.policy import Identity

    signer = _signer_problem(bundle.signing_certificate, identity)
    if signer is not None:
        return [Problem(where, signer)]
    try:
        payload_type, payload = Verifier(trusted_root=root).verify_dsse(
            bundle, Identity(identity=identity, issuer=GITHUB_ISSUER)
        )
    except SigstoreError as exc:
        return [Problem(where, f"does not verify against the trusted root: {first_line(exc)}")]
    except Exception as exc:  # a malformed part sigstore reaches only while verifying  # noqa: BLE001
        return [Problem(where, f"does not verify: {first_line(exc)}")]
    if payload_type != IN_TOTO:
        return [Problem(where, f"signs a {payload_type!r} payload, not an in-toto statement")]
    try:
        statement = parse(payload)
    except ValueError as exc:
        return [Problem(where, f"its statement is not JSON: {first_line(exc)}")]
    return _statement_problems(where, statement, expected)


def _signer_problem(certificate: Certificate, identity: str) -> str | None:
    """Why the certificate is not the release workflow's (its identity and issuer, as Fulcio writes them), or None.
    Sigstore's policy checks the same again; this says it in the release's terms."""
    from cryptography.x509 import ExtensionNotFound, ObjectIdentifier, SubjectAlternativeName, UniformResourceIdentifier

    try:
        names = certificate.extensions.get_extension_for_class(SubjectAlternativeName).value
        signed_by = names.get_values_for_type(UniformResourceIdentifier)
    except ExtensionNotFound:
        signed_by = []
    issuers = []
    for oid in OIDC_ISSUER_OIDS:
        try:
            raw = certificate.extensions.get_extension_for_oid(ObjectIdentifier(oid)).value.value  # type: ignore[attr-defined]
        except ExtensionNotFound:
            continue
        issuers.append((raw if oid.endswith(".1.1") else _der_string(raw)).decode("utf-8", "replace"))
    if identity in signed_by and GITHUB_ISSUER in issuers:
        return None
    return (
        f"signed by {', '.join(signed_by) or 'no URI identity'} (issuer {', '.join(issuers) or 'none'}), "
        f"not by the release workflow: expected {identity} (issuer {GITHUB_ISSUER}), from the spec's "
        f"[card.attestation] repository and the version's tag"
    )


def _der_string(der: bytes) -> bytes:
    """The content of a DER string (Fulcio's v2 extensions: a UTF8String)."""
    if len(der) < 2 or der[1] < 0x80:
        return der[2:]
    return der[2 + (der[1] & 0x7F) :]


def _statement_problems(where: str, statement: Any, expected: dict[str, str]) -> list[Problem]:
    if not isinstance(statement, dict) or statement.get("_type") not in STATEMENT_TYPES:
        return [Problem(where, "its payload is not an in-toto Statement")]
    if statement.get("predicateType") != SLSA_PROVENANCE:
        return [
            Problem(where, f"attests {statement.get('predicateType')!r}, not SLSA build provenance ({SLSA_PROVENANCE})")
        ]
    attested: dict[str, str] = {}
    for subject in statement.get("subject") or []:
        digest = subject.get("digest") if isinstance(subject, dict) else None
        if not isinstance(digest, dict) or not isinstance(subject.get("name"), str):
            return [Problem(where, "a subject of its statement has no name or digest")]
        attested[subject["name"]] = str(digest.get("sha256", ""))
    problems = []
    for name in ATTESTED:
        if name not in attested:
            problems.append(
                Problem(name, f"not attested by {where} (it attests: {', '.join(sorted(attested)) or 'nothing'})")
            )
        elif name not in expected:
            problems.append(Problem(name, f"attested by {where}, but not staged"))
        elif attested[name] != expected[name]:
            problems.append(
                Problem(
                    name,
                    f"differs from what {where} attests (sha256 {attested[name][:12]}…, "
                    f"staged {expected[name][:12]}…): the attestation is of another build",
                )
            )
    others = sorted(set(attested) - set(ATTESTED))
    if others:
        problems.append(
            Problem(
                where, f"also attests {', '.join(others)}: the release workflow attests {' and '.join(ATTESTED)} only"
            )
        )
    return problems
