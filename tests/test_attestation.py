"""`hf-release verify --provenance` (issue 40) on Sigstore bundles made offline, as actions/attest-build-provenance
makes them on GitHub: a local CA (Fulcio's part), CT log (the certificate's SCT) and transparency log (Rekor's
entry, inclusion proof, signed checkpoint and inclusion promise), and the trusted root that names their keys —
so sigstore-python's own verifier runs every check, offline, against the staged release."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from release.attestation import GITHUB_ISSUER, IN_TOTO, SLSA_PROVENANCE, workflow_identity
from tests.helpers import cli, edit

REPOSITORY = "spark-lab/releases"
IDENTITY = workflow_identity(REPOSITORY, "v5")
ISSUER_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")  # Fulcio's OIDC issuer extension
SCT_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")  # RFC 6962's embedded SCT list
Key = ec.EllipticCurvePrivateKey


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: Key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _sign(key: Key, data: bytes) -> bytes:
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


class LocalSigstore:
    """A CA, a CT log and a transparency log of its own keys; `bundle` signs a statement as a workflow run would."""

    def __init__(self) -> None:
        self.now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.ca_key, self.ct_key, self.log_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hf-release test CA")])
        self.ca = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - dt.timedelta(days=1))
            .not_valid_after(self.now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.ca_key.public_key()), critical=False)
            .sign(self.ca_key, hashes.SHA256())
        )

    def trusted_root(self, path: Path) -> Path:
        """The trusted root (Sigstore's JSON format) naming this CA and these logs."""
        start = {"start": (self.now - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}

        def log(key: Key, url: str) -> dict[str, Any]:
            details = {"rawBytes": _b64(_spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": start}
            return {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": details,
                "logId": {"keyId": _b64(self._id(key))},
            }

        ca = {
            "subject": {"organization": "hf-release", "commonName": "test"},
            "uri": "https://fulcio.invalid",
            "certChain": {"certificates": [{"rawBytes": _b64(self.ca.public_bytes(serialization.Encoding.DER))}]},
            "validFor": start,
        }
        root = {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key, "https://rekor.invalid")],
            "certificateAuthorities": [ca],
            "ctlogs": [log(self.ct_key, "https://ctfe.invalid")],
            "timestampAuthorities": [],
        }
        path.write_text(json.dumps(root))
        return path

    @staticmethod
    def _id(key: Key) -> bytes:
        return hashlib.sha256(_spki(key)).digest()

    def certificate(self, key: Key, identity: str, issuer: str) -> x509.Certificate:
        """A Fulcio-like leaf: code signing, the identity as SAN URI, the issuer extension, and an embedded SCT
        the CT log signed over the precertificate (the same certificate without the SCT list)."""
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.now - dt.timedelta(minutes=1))
            .not_valid_after(self.now + dt.timedelta(minutes=10))
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(identity)]), critical=True)
            .add_extension(x509.UnrecognizedExtension(ISSUER_OID, issuer.encode()), critical=False)
        )
        tbs = builder.sign(self.ca_key, hashes.SHA256()).tbs_certificate_bytes
        ms = int(self.now.timestamp() * 1000)
        # RFC 6962 §3.2: version, certificate_timestamp, timestamp, precert_entry, issuer key hash, TBS, no extensions
        signed = struct.pack("!BBQH", 0, 0, ms, 1) + self._id(self.ca_key) + len(tbs).to_bytes(3, "big") + tbs + b"\0\0"
        signature = _sign(self.ct_key, signed)
        sct = (
            b"\0" + self._id(self.ct_key) + struct.pack("!QH", ms, 0) + b"\x04\x03" + struct.pack("!H", len(signature))
        )
        sct += signature
        sct_list = struct.pack("!HH", len(sct) + 2, len(sct)) + sct
        octets = b"\x04" + bytes([len(sct_list)]) + sct_list  # extnValue holds an OCTET STRING (< 128 bytes)
        cert = builder.add_extension(x509.UnrecognizedExtension(SCT_OID, octets), critical=False)
        signed_cert = cert.sign(self.ca_key, hashes.SHA256())
        assert signed_cert.tbs_precertificate_bytes == tbs
        return signed_cert

    def bundle(self, statement: dict[str, Any], identity: str = IDENTITY, issuer: str = GITHUB_ISSUER) -> str:
        """A v0.3 Sigstore bundle (one line, as `gh attestation download` writes it): the DSSE envelope, the
        certificate, and a dsse/0.0.1 log entry alone in a one-leaf tree."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = self.certificate(key, identity, issuer)
        payload = json.dumps(statement).encode()
        signature = _sign(key, f"DSSEv1 {len(IN_TOTO)} {IN_TOTO} {len(payload)} ".encode() + payload)
        envelope = {"payload": _b64(payload), "payloadType": IN_TOTO, "signatures": [{"sig": _b64(signature)}]}
        verifier = _b64(cert.public_bytes(serialization.Encoding.PEM))
        spec = {
            "envelopeHash": {"algorithm": "sha256", "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [{"signature": _b64(signature), "verifier": verifier}],
        }
        body = json.dumps({"apiVersion": "0.0.1", "kind": "dsse", "spec": spec}).encode()
        log_id, root_hash, when = (
            self._id(self.log_key),
            hashlib.sha256(b"\0" + body).digest(),
            int(self.now.timestamp()),
        )
        note = f"rekor.invalid - 1\n1\n{_b64(root_hash)}\n"
        checkpoint = f"{note}\n\u2014 rekor.invalid {_b64(log_id[:4] + _sign(self.log_key, note.encode()))}\n"
        promised = rfc8785.dumps({"body": _b64(body), "integratedTime": when, "logID": log_id.hex(), "logIndex": 0})
        entry = {
            "logIndex": "0",
            "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(when),
            "inclusionPromise": {"signedEntryTimestamp": _b64(_sign(self.log_key, promised))},
            "inclusionProof": {
                "logIndex": "0",
                "rootHash": _b64(root_hash),
                "treeSize": "1",
                "hashes": [],
                "checkpoint": {"envelope": checkpoint},
            },
            "canonicalizedBody": _b64(body),
        }
        material = {
            "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))},
            "tlogEntries": [entry],
            "timestampVerificationData": {},
        }
        return json.dumps(
            {
                "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
                "verificationMaterial": material,
                "dsseEnvelope": envelope,
            }
        )


def provenance(dist: Path, **digests: str) -> dict[str, Any]:
    """The statement actions/attest-build-provenance writes for SHA256SUMS and release.json of `dist`
    (`digests`: other sha256 for some of them, by name with _ for .)."""
    subjects = []
    for name in ("SHA256SUMS", "release.json"):
        sha = digests.get(name.replace(".", "_"), hashlib.sha256((dist / name).read_bytes()).hexdigest())
        subjects.append({"name": name, "digest": {"sha256": sha}})
    predicate = {"buildDefinition": {"buildType": "https://actions.github.io/buildtypes/workflow/v1"}, "runDetails": {}}
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects,
        "predicateType": SLSA_PROVENANCE,
        "predicate": predicate,
    }


@pytest.fixture
def attested(
    example: Path, build_example: Callable[..., Path], tmp_path: Path
) -> tuple[Path, LocalSigstore, list[str | Path]]:
    """The example built with [card.attestation]; returns the staged release, the local Sigstore and the
    arguments `verify` takes to check against it (`--root`, `--dist`, `--trusted-root`)."""
    edit(example, "[card.license]", f'[card.attestation]\nrepository = "{REPOSITORY}"\n\n[card.license]')
    dist = build_example()
    sigstore = LocalSigstore()
    root = sigstore.trusted_root(tmp_path / "trusted_root.json")
    return dist, sigstore, ["--root", tmp_path, "--dist", dist.parent, "--trusted-root", root]


def _bundle_file(path: Path, *bundles: str) -> Path:
    path.write_text("".join(f"{b}\n" for b in bundles))
    return path


def test_a_bundle_of_the_staged_release_passes(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "sha256:sums.jsonl", sigstore.bundle(provenance(dist)))
    code, out, err = cli(capsys, "verify", "v5", *args, "--provenance", bundle)
    assert (code, err) == (0, "")
    assert f"provenance {bundle}: 1 attestation of SHA256SUMS and release.json as staged, signed by {IDENTITY}" in out
    document = json.loads(cli(capsys, "verify", "v5", *args, "--provenance", bundle, "--format", "json").out)
    assert document["provenance"]["identity"] == IDENTITY
    assert (
        document["provenance"]["subjects"]["release.json"]
        == hashlib.sha256((dist / "release.json").read_bytes()).hexdigest()
    )


def test_every_bundle_of_a_download_is_checked(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist, sigstore, args = attested
    good = sigstore.bundle(provenance(dist))
    assert cli(capsys, "verify", "v5", *args, "--provenance", _bundle_file(tmp_path / "b", good, good)).code == 0
    other = sigstore.bundle(provenance(dist, SHA256SUMS="0" * 64))
    code, _, err = cli(capsys, "verify", "v5", *args, "--provenance", _bundle_file(tmp_path / "b", good, other))
    assert code == 1 and err.startswith(f"SHA256SUMS: differs from what {tmp_path / 'b'}:2 attests"), err


def test_a_bundle_for_other_bytes_of_release_json_fails_naming_it(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist, sigstore, args = attested
    other = hashlib.sha256((dist / "release.json").read_bytes() + b" ").hexdigest()
    bundle = _bundle_file(tmp_path / "b.jsonl", sigstore.bundle(provenance(dist, release_json=other)))
    code, out, err = cli(capsys, "verify", "v5", *args, "--provenance", bundle)
    assert code == 1 and out == ""
    assert err.splitlines()[0] == (
        f"release.json: differs from what {bundle} attests (sha256 {other[:12]}…, staged "
        f"{hashlib.sha256((dist / 'release.json').read_bytes()).hexdigest()[:12]}…): "
        "the attestation is of another build"
    )


def test_a_bundle_of_an_earlier_build_fails_once_the_release_is_rebuilt(
    example: Path,
    attested: tuple[Path, LocalSigstore, list[str | Path]],
    build_example: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "b.jsonl", sigstore.bundle(provenance(dist)))
    edit(example, 'summary = """', 'summary = """Rebuilt. ')  # the card changes: so do SHA256SUMS and release.json
    build_example()
    code, _, err = cli(capsys, "verify", "v5", *args, "--provenance", bundle)
    assert code == 1
    assert [line.split(":", 1)[0] for line in err.splitlines()[:2]] == ["SHA256SUMS", "release.json"], err


def test_tampered_bytes_under_a_valid_signature_fail(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The statement swapped for one of the staged release after signing: sigstore's checks refuse it."""
    dist, sigstore, args = attested
    bundle = json.loads(sigstore.bundle(provenance(dist, release_json="1" * 64)))
    bundle["dsseEnvelope"]["payload"] = _b64(json.dumps(provenance(dist)).encode())
    code, _, err = cli(capsys, "verify", "v5", *args, "--provenance", _bundle_file(tmp_path / "b", json.dumps(bundle)))
    assert code == 1 and "does not verify against the trusted root" in err, err


@pytest.mark.parametrize(
    ("identity", "issuer"),
    [
        (workflow_identity("someone/else", "v5"), GITHUB_ISSUER),  # another repository's workflow
        (workflow_identity(REPOSITORY, "v4"), GITHUB_ISSUER),  # the run of another tag
        (IDENTITY, "https://accounts.example.com"),  # the same name from another issuer
    ],
)
def test_a_wrong_identity_or_issuer_fails(
    attested: tuple[Path, LocalSigstore, list[str | Path]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    identity: str,
    issuer: str,
) -> None:
    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "b", sigstore.bundle(provenance(dist), identity=identity, issuer=issuer))
    code, _, err = cli(capsys, "verify", "v5", *args, "--provenance", bundle)
    assert code == 1
    assert err.startswith(
        f"{bundle}: signed by {identity} (issuer {issuer}), not by the release workflow: expected {IDENTITY}"
    )


def test_another_trusted_root_fails(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle of a CA and logs the trusted root does not name (here: the public-good root, the default)."""
    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "b", sigstore.bundle(provenance(dist)))
    code, _, err = cli(capsys, "verify", "v5", *args[:4], "--provenance", bundle)
    assert code == 1 and err.startswith(f"{bundle}: does not verify against the trusted root"), err


def test_the_default_trusted_root_is_sigstores_public_good_root() -> None:
    from release.attestation import _trusted_root

    assert any("sigstore" in str(c.subject) for c in _trusted_root(None).get_fulcio_certs())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such bundle file"),
        ("", "holds no Sigstore bundle"),
        ("{not json\n", "not JSON"),
        ('{"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"}\n', "not a Sigstore bundle"),
        ("x" * (4 * 1024 * 1024 + 1), "over 4 MiB"),
    ],
)
def test_a_file_that_is_not_a_bundle_is_an_input_error(
    attested: tuple[Path, LocalSigstore, list[str | Path]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    message: str,
) -> None:
    _, _, args = attested
    bundle = tmp_path / "b.jsonl"
    if content is not None:
        bundle.write_text(content)
    code, _, err = cli(capsys, "verify", "v5", *args, "--provenance", bundle)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_a_spec_without_attestation_is_an_input_error(
    build_example: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist = build_example()
    sigstore = LocalSigstore()
    bundle = _bundle_file(tmp_path / "b", sigstore.bundle(provenance(dist)))
    root = sigstore.trusted_root(tmp_path / "root.json")
    code, _, err = cli(
        capsys,
        "verify",
        "v5",
        "--root",
        tmp_path,
        "--dist",
        dist.parent,
        "--provenance",
        bundle,
        "--trusted-root",
        root,
    )
    assert code == 2 and "the spec declares no [card.attestation] repository" in err, err


def test_a_bad_trusted_root_or_one_without_a_bundle_is_an_input_error(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "b", sigstore.bundle(provenance(dist)))
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    code, _, err = cli(capsys, "verify", "v5", *args[:4], "--provenance", bundle, "--trusted-root", bad)
    assert code == 2 and err.startswith(f"{bad}: not a Sigstore trusted root"), err
    code, _, err = cli(capsys, "verify", "v5", *args[:4], "--trusted-root", bad)
    assert code == 2 and "--trusted-root is what --provenance is checked against" in err, err


def test_the_python_api_checks_provenance(
    attested: tuple[Path, LocalSigstore, list[str | Path]], tmp_path: Path
) -> None:
    import hf_release

    dist, sigstore, args = attested
    bundle = _bundle_file(tmp_path / "b", sigstore.bundle(provenance(dist)))
    verified = hf_release.verify("v5", root=args[1], dist=args[3], trusted_root=args[5], provenance=bundle)
    assert verified.provenance is not None and verified.provenance.attestations == 1
    with pytest.raises(hf_release.VerifyFailed):
        hf_release.verify(
            "v5",
            root=args[1],
            dist=args[3],
            trusted_root=args[5],
            provenance=_bundle_file(
                tmp_path / "c", sigstore.bundle(provenance(dist), identity=workflow_identity("a/b", "v5"))
            ),
        )


def test_the_docs_give_the_command_and_the_identity_it_checks() -> None:
    from tests.helpers import ROOT

    text = " ".join((ROOT / "docs" / "github-actions.md").read_text().split())
    assert "`hf-release verify v5 --provenance sha256:DIGEST.jsonl`" in text
    assert f"`{workflow_identity('OWNER/REPO', 'v5')}`" in text and f"`{GITHUB_ISSUER}`" in text
