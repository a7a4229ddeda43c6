"""The Python API (release/api, installed as `hf_release`): each command called from code returns the result its
`--json` output serializes, and each exit code of the table is a typed error raised, never an exit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import release.api as hf_release
from release.cli.results import Built, Initialized, Pushed, Signed, StatusReport, Verified
from release.errors import CheckFailed, InputError, PublishRefused, RemoteError, VerifyFailed
from release.localhub import LocalHub
from tests.helpers import EXAMPLE, TOKEN, cli, edit, transformers_folder
from tests.test_sign import ec_key_pair


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example as a project (artifacts/v5), the current folder."""
    shutil.copytree(EXAMPLE, tmp_path / "artifacts" / "v5")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_api_names_every_command_and_its_errors() -> None:
    assert {"build", "verify", "push", "status", "init", "sign"} <= set(hf_release.__all__)
    assert {name for name in hf_release.__all__ if not hasattr(hf_release, name)} == set()
    assert hf_release.Built is Built and hf_release.InputError is InputError  # one definition for API and CLI


def test_build_and_verify_return_what_the_json_output_prints(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    built = hf_release.build("v5", root=str(project))
    assert isinstance(built, Built) and built.ok
    assert Path(built.document()["dist"]).resolve() == (project / "dist" / "v5").resolve()
    verified = hf_release.verify("v5", root=project)
    assert isinstance(verified, Verified) and verified.verify.files == len(built.build.manifest.files)
    code, out, _ = cli(capsys, "verify", "v5", "--json")
    assert code == 0
    assert json.loads(out) == json.loads(json.dumps({"command": "verify", "ok": True, **verified.document()}))


def test_init_from_files_and_from_the_previous_version(tmp_path: Path) -> None:
    files = transformers_folder(tmp_path / "node-disk")
    first = hf_release.init("v1", files=files, repo_id="acme/llama-mini", root=tmp_path)
    assert isinstance(first, Initialized) and first.init.kind == "transformers"
    assert first.init.spec == tmp_path / "artifacts" / "v1" / "release.toml" and first.init.spec.is_file()
    second = hf_release.init("v2", previous="v1", root=tmp_path)
    assert second.init.previous == "v1" and (tmp_path / "artifacts" / "v2" / "release.toml").is_file()


def test_sign_then_verify_the_signature(project: Path) -> None:
    hf_release.build("v5", root=project)
    private, public = ec_key_pair(project, "release")
    signed = hf_release.sign("v5", private_key=private, root=project)
    assert isinstance(signed, Signed) and signed.signature.resolve() == project / "dist" / "v5" / "model.sig"
    checked = hf_release.verify("v5", root=project, signature=signed.signature, public_key=public)
    assert checked.signature == signed.signature


def test_push_then_status_and_remote_verify(project: Path, hub: LocalHub) -> None:
    hf_release.build("v5", root=project)
    planned = hf_release.push("v5", endpoint=hub.url, token=TOKEN, root=project, dry_run=True)
    assert isinstance(planned, Pushed) and planned.document()["dry_run"] and planned.push.commit is None
    pushed = hf_release.push("v5", endpoint=hub.url, token=TOKEN, root=project)
    assert pushed.push.tag == "v5" and pushed.push.verified
    report = hf_release.status(endpoint=hub.url, token=TOKEN, root=project)
    assert isinstance(report, StatusReport) and report.ok
    assert [(v.version, v.staged, v.hub, v.hub_matches) for v in report.versions] == [
        ("v5", "verified", "published", True)
    ]
    remote = hf_release.verify("v5", root=project, remote=True, endpoint=hub.url, token=TOKEN)
    assert remote.remote is not None and remote.remote.commit == pushed.push.commit
    assert [v.hub_matches for v in hf_release.status(local=True, root=project).versions] == [None]


# Each exit code of the table (release/errors.py EXIT_CODES) but Ctrl-C's, as the error the API raises.


def test_exit_2_input_error(project: Path) -> None:
    with pytest.raises(InputError) as raised:
        hf_release.build("v9", root=project)
    assert raised.value.exit_code == 2 and "release spec not found" in str(raised.value)
    with pytest.raises(InputError, match="--download checks the Hub's copy"):
        hf_release.verify("v5", root=project, download=True)
    with pytest.raises(InputError, match="give either --files"):
        hf_release.init("v6", root=project)


def test_exit_1_check_failed_and_verify_failed(project: Path) -> None:
    hf_release.build("v5", root=project)
    staged = project / "dist" / "v5" / "results.tsv"
    data = staged.read_bytes()
    staged.unlink()  # a hard link to the example's file: never written through
    staged.write_bytes(data + b"\n")
    with pytest.raises(VerifyFailed) as raised:
        hf_release.verify("v5", root=project)
    assert raised.value.exit_code == 1 and raised.value.problems[0].file == "results.tsv"
    edit(project / "artifacts" / "v5" / "results.tsv", "\tdiscard\t", "\tmaybe\t")
    with pytest.raises(CheckFailed) as failed:
        hf_release.build("v5", root=project)
    assert failed.value.exit_code == 1


def test_exit_3_remote_error(project: Path) -> None:
    hf_release.build("v5", root=project)
    with pytest.raises(RemoteError) as raised:
        hf_release.push("v5", endpoint="http://127.0.0.1:9", token=TOKEN, root=project)
    assert raised.value.exit_code == 3 and TOKEN not in str(raised.value)


def test_exit_4_publish_refused(project: Path, hub: LocalHub) -> None:
    hf_release.build("v5", root=project)
    hf_release.push("v5", endpoint=hub.url, token=TOKEN, root=project)
    results = project / "artifacts" / "v5" / "results.tsv"
    edit(results, "max-num-batched-tokens 8192", "max-num-batched-tokens 8192 (rerun)")
    hf_release.build("v5", root=project)
    with pytest.raises(PublishRefused) as raised:
        hf_release.push("v5", endpoint=hub.url, token=TOKEN, root=project)
    assert raised.value.exit_code == 4
    assert any("already published" in p.message for p in raised.value.problems)


def test_a_library_exception_is_raised_as_its_typed_error(project: Path) -> None:
    """An OSError from underneath (a folder where the spec should be a file) becomes the InputError the command
    line reports for it, with the OS's exception as its cause."""
    (project / "artifacts" / "v6").mkdir()
    (project / "artifacts" / "v6" / "release.toml").mkdir()
    with pytest.raises(InputError) as raised:
        hf_release.build("v6", root=project)
    assert raised.value.exit_code == 2
