"""OpenSSF model signing: sign → push → verify round-trips; tampering and a wrong key fail clearly."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from release.errors import VerifyFailed
from release.hub.client import connect
from release.publish.push import PushOptions, push
from release.sign import sign_release, verify_remote_signature, verify_signature
from release.staged.manifest import Manifest
from tests.helpers import TOKEN, local_hub


def ec_key_pair(folder: Path, name: str) -> tuple[Path, Path]:
    private, public = folder / f"{name}.pem", folder / f"{name}.pub.pem"
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private)], check=True)
    subprocess.run(
        ["openssl", "ec", "-in", str(private), "-pubout", "-out", str(public)], check=True, capture_output=True
    )
    return private, public


@pytest.fixture
def signed(build_example: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path]:
    dist = build_example()
    private, public = ec_key_pair(tmp_path, "release")
    assert sign_release(dist, private_key=private) == dist / "model.sig"
    return dist, public


def _replace(path: Path, data: bytes) -> None:
    path.unlink()  # staged files are hard links to the example: never write through them
    path.write_bytes(data)


def test_signature_verifies_over_every_staged_file(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    verify_signature(dist, signature=dist / "model.sig", public_key=public)


@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "release.json", "results.tsv"])
def test_a_changed_byte_fails_naming_the_file(signed: tuple[Path, Path], name: str) -> None:
    dist, public = signed
    data = (dist / name).read_bytes()
    _replace(dist / name, data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(VerifyFailed) as exc:
        verify_signature(dist, signature=dist / "model.sig", public_key=public)
    assert [str(p) for p in exc.value.problems] == [f"{name}: differs from the signed content"]


def test_an_edited_card_fails(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    card = dist / "README.md"
    _replace(
        card, card.read_bytes().replace(b"did not show a served acceptance gain", b"showed a served acceptance gain")
    )
    with pytest.raises(VerifyFailed, match="README.md: differs from the signed content"):
        verify_signature(dist, signature=dist / "model.sig", public_key=public)


def test_a_missing_file_fails(signed: tuple[Path, Path]) -> None:
    dist, public = signed
    (dist / "results.tsv").unlink()
    with pytest.raises(VerifyFailed, match="results.tsv: is signed but missing"):
        verify_signature(dist, signature=dist / "model.sig", public_key=public)


def test_a_wrong_key_fails(signed: tuple[Path, Path], tmp_path: Path) -> None:
    dist, _ = signed
    _, other = ec_key_pair(tmp_path, "other")
    with pytest.raises(VerifyFailed, match="signature does not verify: Key mismatch"):
        verify_signature(dist, signature=dist / "model.sig", public_key=other)


def test_sign_push_verify_round_trip_on_the_local_hub(signed: tuple[Path, Path], tmp_path: Path) -> None:
    dist, public = signed
    with local_hub(tmp_path / "hub") as hub:
        result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
        assert result.verified and ("model.sig", (dist / "model.sig").stat().st_size) in result.plan.add
        manifest = Manifest.load(dist / "release.json")
        verify_remote_signature(connect(hub.url, TOKEN), manifest, revision="v5", public_key=public)


def test_signing_a_release_changed_since_build_is_refused(build_example: Callable[..., Path], tmp_path: Path) -> None:
    from release.errors import PublishRefused

    dist = build_example()
    private, _ = ec_key_pair(tmp_path, "release")
    _replace(dist / "LICENSE", b"edited after build\n")
    with pytest.raises(PublishRefused) as exc:
        sign_release(dist, private_key=private)
    assert [p.file for p in exc.value.problems] == ["LICENSE"] and not (dist / "model.sig").exists()


def test_a_missing_public_key_is_an_input_error(signed: tuple[Path, Path], tmp_path: Path) -> None:
    from release.errors import InputError

    dist, _ = signed
    with pytest.raises(InputError, match="no such key"):
        verify_signature(dist, signature=dist / "model.sig", public_key=tmp_path / "absent.pem")


def test_an_encrypted_key_with_its_password_from_a_file(
    build_example: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The password never needs the command line (ps); given there, it is warned about and never echoed."""
    from tests.helpers import cli

    dist = build_example()
    private, public = ec_key_pair(tmp_path, "release")
    secret = "pw-" + "7" * 20
    encrypted = tmp_path / "encrypted.pem"
    subprocess.run(
        ["openssl", "pkcs8", "-topk8", "-in", str(private), "-out", str(encrypted), "-passout", f"pass:{secret}"],
        check=True,
    )
    (tmp_path / "pw").write_text(secret + "\n")
    run = cli(
        capsys, "sign", "v5", "--dist", dist.parent, "--private-key", encrypted, "--password-file", tmp_path / "pw"
    )
    assert run.code == 0, run
    verify_signature(dist, signature=dist / "model.sig", public_key=public)
    wrong = cli(capsys, "sign", "v5", "--dist", dist.parent, "--private-key", encrypted, "--password", secret + "x")
    assert wrong.code == 2 and "process list" in wrong.err and secret not in wrong.err + wrong.out


def test_signing_without_card_signature_warns_what_to_add(
    build_example: Callable[..., Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The example's spec declares no [card.signature]: its card tells readers no way to check model.sig, so
    signing says what to add (issue 38, new user's list)."""
    dist = build_example()
    private, _ = ec_key_pair(tmp_path, "release")
    sign_release(dist, private_key=private)
    assert (
        'README.md: the card does not tell readers how to check model.sig; add [card.signature] (method = "key", '
        'public_key = "NAME.pub.pem") to the spec' in caplog.text
    )


def test_re_pushing_a_re_signed_published_version_names_model_sig(signed: tuple[Path, Path], tmp_path: Path) -> None:
    """Each signing is new: a version signed again after publishing differs in model.sig alone, and the refusal
    says so, where it said "different files" naming none (issue 38, new user's list)."""
    from release.errors import PublishRefused

    dist, _ = signed
    private, _ = ec_key_pair(tmp_path, "again")
    with local_hub(tmp_path / "hub") as hub:
        push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
        (dist / "model.sig").unlink()
        sign_release(dist, private_key=private)
        with pytest.raises(PublishRefused) as exc:
            push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
    (problem,) = [p for p in exc.value.problems if "already published" in p.message]
    assert "with different files: model.sig (differs); publish a new version" in problem.message, problem
