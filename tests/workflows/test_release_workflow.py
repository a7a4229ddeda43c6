"""The release workflow: its static wiring (permissions, pins, secrets, signing), and its `run:` steps
executed locally, in order, as a tag push would run them, against a local Hub."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLE, PACKAGE_SOURCES, ROOT, copy_sources, edit, fresh_venv
from tests.workflows.linters import WORKFLOWS
from tests.workflows.local_runner import JobRun, load_workflow, process_env, run_job

RELEASE = WORKFLOWS / "release.yml"
CI = WORKFLOWS / "ci.yml"
TOKEN = "hf_wfTestToken_5eCr3t_9d1c"  # the local Hub's write token; must never be printed
REPO_ID = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"
ISSUER = "https://token.actions.githubusercontent.com"
PINNED = re.compile(r"^\s*-?\s*uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(\.\d+)*\s*$")


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    return load_workflow(RELEASE)


@pytest.fixture(scope="module")
def job(release: dict[str, Any]) -> dict[str, Any]:
    assert list(release["jobs"]) == ["release"]
    return release["jobs"]["release"]


def steps_by_id(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in job["steps"] if "id" in s}


# --- static wiring --------------------------------------------------------------------------------


def test_runs_only_on_version_tags(release: dict[str, Any]) -> None:
    assert release["on"] == {"push": {"tags": ["v*"]}}


def test_least_privilege(release: dict[str, Any], job: dict[str, Any]) -> None:
    assert release["permissions"] == {}
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    # id-token: write is there for the keyless signing step, which this job has
    assert "model_signing sign sigstore" in steps_by_id(job)["sign"]["run"]


def test_one_release_per_tag_at_a_time_never_cancelled(release: dict[str, Any]) -> None:
    assert release["concurrency"] == {"group": "release-${{ github.ref_name }}", "cancel-in-progress": False}


@pytest.mark.parametrize("path", [RELEASE, CI], ids=lambda p: p.name)
def test_actions_are_pinned_by_full_sha_with_a_version_comment(path: Path) -> None:
    uses = [line for line in path.read_text().splitlines() if re.match(r"^\s*-?\s*uses:", line)]
    assert uses, "no actions?"
    for line in uses:
        assert PINNED.match(line), f"not pinned by commit SHA with a `# vX.Y.Z` comment: {line.strip()}"


@pytest.mark.parametrize("path", [RELEASE, CI], ids=lambda p: p.name)
def test_checkout_does_not_persist_credentials(path: Path) -> None:
    workflow = load_workflow(path)
    checkouts = [s for j in workflow["jobs"].values() for s in j["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_no_expression_in_any_run_block(release: dict[str, Any]) -> None:
    for step in release["jobs"]["release"]["steps"]:
        assert "${{" not in step.get("run", ""), f"template in run: of {step.get('name')} (pass it through env:)"


def test_the_version_is_the_tag_passed_through_env(job: dict[str, Any]) -> None:
    assert job["env"]["RELEASE_VERSION"] == "${{ github.ref_name }}"
    for step_id in ("build", "verify", "push", "verify-remote"):
        assert '"$RELEASE_VERSION"' in steps_by_id(job)[step_id]["run"]


def test_the_token_reaches_the_push_step_only(release: dict[str, Any], job: dict[str, Any]) -> None:
    assert RELEASE.read_text().count("secrets.") == 1
    assert "env" not in release or "HF_TOKEN" not in release["env"]
    assert "HF_TOKEN" not in job["env"]
    holders = [s["id"] for s in job["steps"] if "HF_TOKEN" in s.get("env", {})]
    assert holders == ["push"]
    assert steps_by_id(job)["push"]["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"


def test_trusted_publishing_is_documented_as_the_tokenless_alternative() -> None:
    text = RELEASE.read_text()
    assert "HF_OIDC_RESOURCE" in text and "Trusted Publisher" in text


def test_steps_run_in_release_order(job: dict[str, Any]) -> None:
    ids = [s.get("id") for s in job["steps"] if "id" in s]
    assert ids == ["build", "verify", "sign", "push", "verify-remote", "verify-signature", "summary"]
    assert job["steps"][-1]["if"] == "${{ !cancelled() }}"  # a failed release still gets its summary


def test_keyless_signing_step_uses_the_real_model_signing_flags(job: dict[str, Any]) -> None:
    from model_signing import _cli

    sign = steps_by_id(job)["sign"]
    assert "NEEDS_GITHUB" in sign["env"]
    run = " ".join(sign["run"].replace("\\\n", " ").split())
    assert 'model_signing sign sigstore "dist/$RELEASE_VERSION" --signature "dist/$RELEASE_VERSION/model.sig" --use_ambient_credentials' in run
    command = _cli.main.commands["sign"].commands["sigstore"]
    flags = {opt for param in command.params for opt in param.opts}
    assert {"--signature", "--use_ambient_credentials"} <= flags


def test_signature_is_checked_against_this_workflows_identity(job: dict[str, Any]) -> None:
    from release.cli import verify

    flags = {opt for param in verify.params for opt in param.opts}
    assert {"--signature", "--identity", "--oidc-issuer", "--remote"} <= flags
    for step_id in ("sign", "verify-signature"):
        step = steps_by_id(job)[step_id]
        assert '--identity "$GITHUB_SERVER_URL/$GITHUB_WORKFLOW_REF"' in step["run"]
        assert '--oidc-issuer "$OIDC_ISSUER"' in step["run"] and step["env"]["OIDC_ISSUER"] == ISSUER
        assert "NEEDS_GITHUB" in step["env"]
    # the identity a user verifies with, as documented at the top of the workflow
    assert f"--identity https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/v5" in RELEASE.read_text()


def test_job_outputs(job: dict[str, Any]) -> None:
    for name in ("repo", "commit", "tag", "manifest_digest"):
        assert job["outputs"][name] == f"${{{{ steps.summary.outputs.{name} }}}}"


def test_ci_runs_the_test_suite_with_least_privilege() -> None:
    ci = load_workflow(CI)
    assert set(ci["on"]) == {"push", "pull_request"}
    assert ci["permissions"] == {}
    (test,) = ci["jobs"].values()
    assert test["permissions"] == {"contents": "read"}
    assert any("make test" in s.get("run", "") for s in test["steps"])


# --- the run: steps, executed against a local Hub -------------------------------------------------


def project_copy(root: Path) -> Path:
    """What the checkout holds that the run: steps read: the package sources, artifacts, scripts."""
    copy_sources(root, (*PACKAGE_SOURCES, "artifacts", "scripts"))
    assert (root / "artifacts" / EXAMPLE.name / "release.toml").exists()
    return root


def tag_push(workdir: Path, runner_temp: Path, hub_url: str, tag: str = "v5") -> JobRun:
    """Run the release job as a push of `tag` would, its install step into a fresh venv (the runner's
    Python); pip stays offline, building with the setuptools and dependencies this venv already has."""
    runner_temp.mkdir(parents=True, exist_ok=True)
    runner_python = fresh_venv(runner_temp / "runner-python")
    github = {"ref_name": tag, "ref": f"refs/tags/{tag}", "repository": "spark-lab/hf-release"}
    base_env = process_env({
        "PATH": f"{runner_python}:{process_env({}).get('PATH', '')}",
        "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push",
        "GITHUB_REF_NAME": tag, "GITHUB_REF": f"refs/tags/{tag}", "GITHUB_REF_TYPE": "tag",
        "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "spark-lab/hf-release",
        "GITHUB_WORKFLOW_REF": f"spark-lab/hf-release/.github/workflows/release.yml@refs/tags/{tag}",
        "HF_ENDPOINT": hub_url, "HF_HUB_DISABLE_XET": "1", "HF_HOME": str(runner_temp / "hf-home"),
    })
    return run_job(RELEASE, "release", workdir=workdir, runner_temp=runner_temp, github=github,
                   secrets={"HF_TOKEN": TOKEN}, base_env=base_env)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from release.hub import running_hub

    with running_hub(tmp_path_factory.mktemp("hub"), {TOKEN: "write"}) as local:
        yield local


@pytest.fixture(scope="module")
def published(hub: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[JobRun, Path]:
    """The release job run once for tag v5 against a fresh Hub."""
    workdir = project_copy(tmp_path_factory.mktemp("checkout"))
    return tag_push(workdir, tmp_path_factory.mktemp("runner-temp"), hub.url), workdir


def test_tag_push_runs_every_run_step_and_skips_what_needs_github(published: tuple[JobRun, Path]) -> None:
    run, _ = published
    assert run.ok, run.text()
    skipped = {s.name: s.skipped for s in run.steps if s.skipped}
    assert len(skipped) == 4, skipped
    assert [s.id for s in run.steps if s.skipped and "NEEDS_GITHUB" in s.skipped] == ["sign", "verify-signature"]
    ran = [s.name if s.id is None else s.id for s in run.steps if s.returncode is not None]
    assert ran == ["Install hf-release", "build", "verify", "push", "verify-remote", "summary"]
    install = next(s for s in run.steps if s.name == "Install hf-release")
    assert "Successfully installed hf-release" in install.stdout  # into the fresh venv the later steps run from


def test_outputs_name_the_published_release(published: tuple[JobRun, Path], hub: Any) -> None:
    from huggingface_hub import HfApi

    run, workdir = published
    manifest = workdir / "dist" / "v5" / "release.json"
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO_ID)
    tag = next(t for t in refs.tags if t.name == "v5")
    assert run.outputs["repo"] == REPO_ID
    assert run.outputs["tag"] == "v5"
    assert run.outputs["commit"] == tag.target_commit and re.fullmatch(r"[0-9a-f]{40}", tag.target_commit)
    assert run.outputs["manifest_digest"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert run.outputs["release_digest"] == json.loads(manifest.read_text())["release_digest"]
    assert run.outputs["url"] == f"{hub.url}/{REPO_ID}"
    assert run.step("summary").outputs["card_url"] == f"{hub.url}/{REPO_ID}/blob/v5/README.md"


def test_summary_holds_the_release_table(published: tuple[JobRun, Path]) -> None:
    run, workdir = published
    summary = run.summary
    commit = run.outputs["commit"]
    assert summary.startswith(f"## Release v5 of {REPO_ID}: published")
    assert f"`{commit}`" in summary and "`v5`" in summary
    assert f"`{run.outputs['manifest_digest']}`" in summary and f"`{run.outputs['release_digest']}`" in summary
    assert f"({run.outputs['url']}/blob/v5/README.md)" in summary  # link to the card
    manifest = json.loads((workdir / "dist" / "v5" / "release.json").read_text())
    for f in manifest["files"]:
        row = next(line for line in summary.splitlines() if line.startswith(f"| `{f['path_in_repo']}` |"))
        assert f"`{f['sha256']}`" in row and f"{f['size']:,}" in row and "| added |" in row
    for step in ("build", "verify (staged)", "push", "verify --remote"):
        assert f"| {step} | ✅" in summary


def test_the_token_reaches_only_the_push_step_and_is_never_printed(published: tuple[JobRun, Path]) -> None:
    run, _ = published
    assert [s.id for s in run.steps if TOKEN in s.env.values()] == ["push"]
    assert TOKEN not in run.text()


def test_a_rerun_of_the_tag_keeps_the_published_release(published: tuple[JobRun, Path], hub: Any,
                                                        tmp_path: Path) -> None:
    first, workdir = published
    again = tag_push(workdir, tmp_path / "runner-temp", hub.url)
    assert again.ok, again.text()
    assert json.loads(again.step("push").stdout)["plan"]["tag"] == "keep"
    assert again.outputs["commit"] == first.outputs["commit"]
    assert "already published" in again.summary


def test_a_tag_already_published_with_other_files_is_refused(published: tuple[JobRun, Path], hub: Any,
                                                             tmp_path: Path) -> None:
    workdir = project_copy(tmp_path / "checkout")
    edit(workdir / "artifacts" / "v5" / "results.tsv", "\n", "\n\n")
    run = tag_push(workdir, tmp_path / "runner-temp", hub.url)
    assert not run.ok
    push = run.step("push")
    assert push.returncode == 4, push.stderr
    assert json.loads(push.stdout)["error"] == "refused"
    assert [s.id for s in run.steps if s.returncode is not None] == [None, "build", "verify", "push", "summary"]
    assert run.step("summary").returncode == 0
    assert ": failed at push" in run.summary.splitlines()[0]
    assert "already published" in run.summary and "### Problems" in run.summary
    assert "commit" not in run.outputs or run.outputs["commit"] == ""
    assert TOKEN not in run.text()


def test_a_tag_without_a_spec_fails_at_build(hub: Any, tmp_path: Path) -> None:
    run = tag_push(project_copy(tmp_path / "checkout"), tmp_path / "runner-temp", hub.url, tag="v6")
    build = run.step("build")
    assert build.returncode == 2, build.stderr
    assert "artifacts/v6/release.toml" in build.stderr
    assert run.summary.splitlines()[0] == "## Release v6: failed at build"
    assert [s.id for s in run.steps if s.returncode is not None] == [None, "build", "summary"]


def test_the_signing_steps_bundle_layout_is_what_hf_release_verify_checks(published: tuple[JobRun, Path],
                                                                        tmp_path: Path) -> None:
    """The sign step's model_signing command, with an offline key standing in for Sigstore (the only
    change), writes a bundle over dist/VERSION that `hf-release verify --signature` accepts."""
    import subprocess

    from release.sign import verify_signature

    sign = steps_by_id(load_workflow(RELEASE)["jobs"]["release"])["sign"]
    command = sign["run"].replace("\\\n", " ").splitlines()[0]
    assert command.startswith("model_signing sign sigstore ") and command.endswith(" --use_ambient_credentials")
    private, public = tmp_path / "key.pem", tmp_path / "key.pub.pem"
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private)], check=True)
    subprocess.run(["openssl", "ec", "-in", str(private), "-pubout", "-out", str(public)], check=True, capture_output=True)
    command = command.replace(" sign sigstore ", " sign key ").replace("--use_ambient_credentials", f"--private_key {private}")
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(published[1] / "dist" / "v5", dist)  # the job's staged release, copied (never signed in place)
    env = process_env({"PATH": f"{ROOT / '.venv' / 'bin'}:{process_env({}).get('PATH', '')}", "RELEASE_VERSION": "v5"})
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    verify_signature(dist, signature=dist / "model.sig", public_key=public)
