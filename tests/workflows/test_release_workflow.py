"""The release workflow: its static wiring (permissions, pins, secrets, signing, the hash-pinned install),
and its `run:` steps executed locally, job after job, in order, as a tag push would run them, against a
local Hub."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import EXAMPLE, PACKAGE_SOURCES, REPO, ROOT, TOKEN, copy_sources, edit, fresh_venv, local_hub
from tests.workflows.linters import WORKFLOWS
from tests.workflows.local_runner import JobRun, load_workflow, process_env, run_job

RELEASE = WORKFLOWS / "release.yml"
CI = WORKFLOWS / "ci.yml"
ISSUER = "https://token.actions.githubusercontent.com"
pytestmark = pytest.mark.hub(per_module=True)  # one Hub for the module: `published` publishes to it once
PINNED = re.compile(r"^\s*-?\s*uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(\.\d+)*\s*$")


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    return load_workflow(RELEASE)


@pytest.fixture(scope="module")
def build_job(release: dict[str, Any]) -> dict[str, Any]:
    assert list(release["jobs"]) == ["build", "publish"]
    return release["jobs"]["build"]


@pytest.fixture(scope="module")
def job(release: dict[str, Any]) -> dict[str, Any]:
    """The publish job: the one that signs and pushes."""
    return release["jobs"]["publish"]


def steps_by_id(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in job["steps"] if "id" in s}


# --- static wiring --------------------------------------------------------------------------------


def test_runs_only_on_version_tags(release: dict[str, Any]) -> None:
    assert release["on"] == {"push": {"tags": ["v*", "[0-9]*"]}}


def test_least_privilege(release: dict[str, Any], build_job: dict[str, Any], job: dict[str, Any]) -> None:
    assert release["permissions"] == {}
    # The build job reads the artifacts and renders the card: it can mint no OIDC token and sees no secret.
    assert build_job["permissions"] == {"contents": "read"} and "environment" not in build_job
    assert "secrets." not in yaml_text(build_job)
    # id-token: write (and attestations: write, issue 40) go to the job that attests, signs and pushes, only after
    # the build succeeded
    assert job["permissions"] == {"contents": "read", "id-token": "write", "attestations": "write"}
    assert job["needs"] == "build"
    assert job["environment"]["name"] == "huggingface"
    assert "model_signing sign sigstore" in steps_by_id(job)["sign"]["run"]
    assert "hf-release push" in steps_by_id(job)["push"]["run"]


def yaml_text(value: Any) -> str:
    import yaml

    return yaml.safe_dump(value)


INSTALL = [
    "python -m pip install --no-cache-dir --require-hashes --no-deps -r requirements/release.txt",
    "python -m pip install --no-cache-dir --no-deps --no-build-isolation --no-index .",
]


def test_both_jobs_install_only_the_hash_pinned_lock(release: dict[str, Any]) -> None:
    for job_id, job in release["jobs"].items():
        installs = [s for s in job["steps"] if "pip install" in s.get("run", "")]
        assert [s["run"].strip() for s in installs] == INSTALL, job_id
        # the lock's download needs the index (skipped locally); hf-release's own install runs in the local test
        assert "NEEDS_GITHUB" in installs[0]["env"] and "env" not in installs[1], job_id
    code = [line for line in RELEASE.read_text().splitlines() if not line.lstrip().startswith("#")]
    assert sum("pip install" in line for line in code) == 4


LOCK = ROOT / "requirements" / "release.txt"


def test_the_lock_pins_every_dependency_with_hashes() -> None:
    """Every requirement of pyproject.toml (and the build backend) is in the lock at one version inside
    its range, and every locked package carries sha256 hashes: `--require-hashes` installs nothing else."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    entries = re.findall(
        r"^([A-Za-z0-9._-]+)==([^ \\]+)((?:\s*\\\n\s+--hash=sha256:[0-9a-f]{64})+)", LOCK.read_text(), re.M
    )
    locked = {canonicalize_name(name): version for name, version, _ in entries}
    requirement_lines = [line for line in LOCK.read_text().splitlines() if re.match(r"^[A-Za-z0-9]", line)]
    assert len(requirement_lines) == len(entries) > 20  # no line without == and hashes
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(r) for r in project["project"]["dependencies"] + project["build-system"]["requires"]]
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in {LOCK.name}: regenerate it (command in its header)"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"{LOCK.name} pins {name}=={locked[name]}, outside {requirement}"
        )


def test_dependabot_watches_the_actions_and_the_dependencies() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert config["version"] == 2
    assert {(u["package-ecosystem"], u["directory"]) for u in config["updates"]} == {
        ("github-actions", "/"),
        ("pip", "/"),
    }


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
    checkouts = [
        s for j in workflow["jobs"].values() for s in j["steps"] if s.get("uses", "").startswith("actions/checkout@")
    ]
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_no_expression_in_any_run_block(release: dict[str, Any]) -> None:
    for step in [s for job in release["jobs"].values() for s in job["steps"]]:
        assert "${{" not in step.get("run", ""), f"template in run: of {step.get('name')} (pass it through env:)"


def test_the_version_is_the_tag_passed_through_env(
    release: dict[str, Any], build_job: dict[str, Any], job: dict[str, Any]
) -> None:
    assert release["env"]["RELEASE_VERSION"] == "${{ github.ref_name }}"
    for step_id in ("build", "verify"):
        assert '"$RELEASE_VERSION"' in steps_by_id(build_job)[step_id]["run"]
    for step_id in ("check-handover", "push", "verify-remote"):
        assert '"$RELEASE_VERSION"' in steps_by_id(job)[step_id]["run"]


def test_the_token_reaches_the_push_step_only(release: dict[str, Any], job: dict[str, Any]) -> None:
    assert RELEASE.read_text().count("secrets.") == 1
    assert "env" not in release or "HF_TOKEN" not in release["env"]
    assert "HF_TOKEN" not in job.get("env", {})
    holders = [s["id"] for s in job["steps"] if "HF_TOKEN" in s.get("env", {})]
    assert holders == ["push"]
    assert steps_by_id(job)["push"]["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"


def test_trusted_publishing_is_documented_alike_in_the_workflow_and_the_readme() -> None:
    """The Hub matches a trusted publisher's claims exactly and a tag run is on no branch: the workflow and
    docs/github-actions.md both say to register repository + workflow and no branch/ref claim."""
    for text in (RELEASE.read_text(), (ROOT / "docs" / "github-actions.md").read_text()):
        flat = " ".join(text.replace("#", " ").split())
        assert "HF_OIDC_RESOURCE" in flat and "Trusted Publisher" in flat
        assert "workflow = release.yml" in flat and "NO branch/ref claim" in flat and "refs/tags/vN" in flat


def test_trusted_publishing_binds_the_publish_jobs_environment(job: dict[str, Any]) -> None:
    """Repository + workflow alone let anyone with push access run an edited release.yml on another branch,
    without the environment's rules, and mint a Hub write token: the advice binds the environment's `sub`
    (issue 38), the one the publish job runs in, and says why, in the workflow, the docs and the README."""
    sub = f"sub = repo:OWNER/REPO:environment:{job['environment']['name']}"
    for text in (
        RELEASE.read_text(),
        (ROOT / "docs" / "github-actions.md").read_text(),
        (ROOT / "README.md").read_text(),
    ):
        flat = " ".join(text.replace("#", " ").split())
        assert sub in flat and "another branch" in flat


def test_steps_run_in_release_order(build_job: dict[str, Any], job: dict[str, Any]) -> None:
    assert [s["id"] for s in build_job["steps"] if "id" in s] == [
        "install",
        "build",
        "verify",
        "handover",
        "build-summary",
    ]
    assert build_job["steps"][-1]["if"] == "${{ failure() }}"  # a failed build gets its summary too
    ids = [s.get("id") for s in job["steps"] if "id" in s]
    assert ids == [
        "install",
        "check-handover",
        "attest",  # issue 40: the build provenance of SHA256SUMS and release.json
        "sign",
        "push",
        "verify-remote",
        "verify-signature",
        "summary",
    ]
    assert job["steps"][-1]["if"] == "${{ !cancelled() }}"  # a failed release still gets its summary
    assert "--remote --download" in steps_by_id(job)["verify-remote"]["run"]  # every byte, not only the listing


def test_keyless_signing_step_uses_the_real_model_signing_flags(job: dict[str, Any]) -> None:
    from model_signing import _cli

    sign = steps_by_id(job)["sign"]
    assert "NEEDS_GITHUB" in sign["env"]
    run = " ".join(sign["run"].replace("\\\n", " ").split())
    assert (
        'model_signing sign sigstore "$STAGING/$RELEASE_VERSION" --signature "$STAGING/$RELEASE_VERSION/model.sig" '
        "--use_ambient_credentials" in run
    )
    command = _cli.main.commands["sign"].commands["sigstore"]
    flags = {opt for param in command.params for opt in param.opts}
    assert {"--signature", "--use_ambient_credentials"} <= flags


def test_signature_is_checked_against_this_workflows_identity(job: dict[str, Any]) -> None:
    from release.cli.verify import verify

    flags = {opt for param in verify.params for opt in param.opts}
    assert {"--signature", "--identity", "--oidc-issuer", "--remote"} <= flags
    for step_id in ("sign", "verify-signature"):
        step = steps_by_id(job)[step_id]
        assert '--identity "$GITHUB_SERVER_URL/$GITHUB_WORKFLOW_REF"' in step["run"]
        assert '--oidc-issuer "$OIDC_ISSUER"' in step["run"] and step["env"]["OIDC_ISSUER"] == ISSUER
        assert "NEEDS_GITHUB" in step["env"]
    # the identity a user verifies with, as documented at the top of the workflow
    assert "--identity https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/v5" in RELEASE.read_text()


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


def tag_push(
    workdir: Path,
    runner_temp: Path,
    hub_url: str,
    tag: str = "v5",
    handed_over: dict[str, str] | None = None,
    *,
    xet: bool = True,
) -> JobRun:
    """Run the build job, then (if it passed) the publish job, as a push of `tag` would, on one machine
    (the handover of a self-hosted runner; the artifact steps are actions, skipped here). "Install
    hf-release" runs into a fresh venv, the runner's Python, which sees this venv's packages in place of
    the lock's. With `handed_over` (an earlier build job's outputs, its staging in the workdir), only the
    publish job runs."""
    (runner_temp / "build").mkdir(parents=True, exist_ok=True)
    (runner_temp / "publish").mkdir(parents=True, exist_ok=True)
    runner_python = fresh_venv(runner_temp / "runner-python")
    github = {"ref_name": tag, "ref": f"refs/tags/{tag}", "repository": "spark-lab/hf-release"}
    base_env = process_env(
        {
            "PATH": f"{runner_python}:{process_env({}).get('PATH', '')}",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_REF_NAME": tag,
            "GITHUB_REF": f"refs/tags/{tag}",
            "GITHUB_REF_TYPE": "tag",
            "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "spark-lab/hf-release",
            "GITHUB_WORKFLOW_REF": f"spark-lab/hf-release/.github/workflows/release.yml@refs/tags/{tag}",
            "HF_ENDPOINT": hub_url,
            "HF_HOME": str(runner_temp / "hf-home"),
        }
    )
    # the lock installs hf_xet: the upload goes over Xet as on GitHub's runners, unless the test asks for LFS
    base_env.pop("HF_HUB_DISABLE_XET", None)
    if not xet:
        base_env["HF_HUB_DISABLE_XET"] = "1"
    build = (
        JobRun([], "", handed_over)
        if handed_over is not None
        else run_job(
            RELEASE,
            "build",
            workdir=workdir,
            runner_temp=runner_temp / "build",
            github=github,
            secrets={"HF_TOKEN": TOKEN},
            base_env=base_env,
        )
    )
    if not build.ok:  # GitHub skips a job whose needs failed
        return build
    publish = run_job(
        RELEASE,
        "publish",
        workdir=workdir,
        runner_temp=runner_temp / "publish",
        github=github,
        secrets={"HF_TOKEN": TOKEN},
        base_env=base_env,
        needs={"build": build.outputs},
    )
    return JobRun(build.steps + publish.steps, build.summary + publish.summary, publish.outputs, build.outputs)


@pytest.fixture(scope="module")
def published(module_hub: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[JobRun, Path]:
    """The release job run once for tag v5 against a fresh Hub."""
    workdir = project_copy(tmp_path_factory.mktemp("checkout"))
    return tag_push(workdir, tmp_path_factory.mktemp("runner-temp"), module_hub.url), workdir


def test_tag_push_runs_every_run_step_and_skips_what_needs_github(published: tuple[JobRun, Path]) -> None:
    run, _ = published
    assert run.ok, run.text()
    skipped = [(s.name, s.skipped) for s in run.steps if s.skipped]
    assert len(skipped) == 12, (
        skipped
    )  # checkout, setup-python, the lock install, artifact (×2 jobs); attest, sign, verify-signature; build-summary
    assert [s.id for s in run.steps if s.skipped and "NEEDS_GITHUB" in s.skipped] == [
        None,
        None,
        "sign",
        "verify-signature",
    ]
    assert sum("artifact@" in why for _, why in skipped) == 2
    ran = [s.id for s in run.steps if s.returncode is not None]
    assert ran == [
        "install",
        "build",
        "verify",
        "handover",
        "install",
        "check-handover",
        "push",
        "verify-remote",
        "summary",
    ]
    for install in (s for s in run.steps if s.id == "install"):  # into the fresh venv the later steps run from
        assert "Successfully installed hf-release" in install.stdout


def test_outputs_name_the_published_release(published: tuple[JobRun, Path], hub: Any) -> None:
    from huggingface_hub import HfApi

    run, workdir = published
    manifest = workdir / "dist" / "v5" / "release.json"
    assert run.step("handover").outputs["manifest_digest"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO)
    tag = next(t for t in refs.tags if t.name == "v5")
    assert run.outputs["repo"] == REPO
    assert run.outputs["tag"] == "v5"
    assert run.outputs["commit"] == tag.target_commit and re.fullmatch(r"[0-9a-f]{40}", tag.target_commit)
    assert run.outputs["manifest_digest"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert run.outputs["release_digest"] == json.loads(manifest.read_text())["release_digest"]
    assert run.outputs["url"] == f"{hub.url}/{REPO}"
    assert json.loads(run.step("push").stdout)["xet"] is True  # hf_xet from the lock, as on GitHub's runners
    assert run.step("summary").outputs["card_url"] == f"{hub.url}/{REPO}/blob/v5/README.md"


def test_summary_holds_the_release_table(published: tuple[JobRun, Path]) -> None:
    run, workdir = published
    summary = run.summary
    commit = run.outputs["commit"]
    assert summary.startswith(f"## Release v5 of {REPO}: published")
    assert f"`{commit}`" in summary and "`v5`" in summary
    assert f"`{run.outputs['manifest_digest']}`" in summary and f"`{run.outputs['release_digest']}`" in summary
    assert f"({run.outputs['url']}/blob/v5/README.md)" in summary  # link to the card
    manifest = json.loads((workdir / "dist" / "v5" / "release.json").read_text())
    for f in manifest["files"]:
        row = next(line for line in summary.splitlines() if line.startswith(f"| `{f['path_in_repo']}` |"))
        assert f"`{f['sha256']}`" in row and f"{f['size']:,}" in row and "| added |" in row
    for step in ("build", "verify (staged)", "push", "verify --remote"):
        assert f"| {step} | ✅" in summary
    remote = json.loads(run.step("verify-remote").stdout)["remote"]
    assert remote["checked"] == "bytes" and remote["bytes_downloaded"] > 0
    assert f"every file's bytes at tag `v5` match ({remote['bytes_downloaded']:,} bytes downloaded)" in summary


def test_the_token_reaches_only_the_push_step_and_is_never_printed(published: tuple[JobRun, Path]) -> None:
    run, _ = published
    assert [s.id for s in run.steps if TOKEN in s.env.values()] == ["push"]
    assert TOKEN not in run.text()


@pytest.mark.heavy  # the whole workflow run again, for a later push of a tag: make test-heavy
def test_a_rerun_of_the_tag_keeps_the_published_release(
    published: tuple[JobRun, Path], hub: Any, tmp_path: Path
) -> None:
    first, workdir = published
    again = tag_push(workdir, tmp_path / "runner-temp", hub.url)
    assert again.ok, again.text()
    assert json.loads(again.step("push").stdout)["plan"]["tag"] == "keep"
    assert again.outputs["commit"] == first.outputs["commit"]
    assert "already published" in again.summary


@pytest.mark.heavy  # the whole workflow run again, for a later push of a tag: make test-heavy
def test_a_tag_already_published_with_other_files_is_refused(
    published: tuple[JobRun, Path], hub: Any, tmp_path: Path
) -> None:
    workdir = project_copy(tmp_path / "checkout")
    edit(workdir / "artifacts" / "v5" / "results.tsv", "\n", "\n\n")
    run = tag_push(workdir, tmp_path / "runner-temp", hub.url)
    assert not run.ok
    push = run.step("push")
    assert push.returncode == 4, push.stderr
    assert json.loads(push.stdout)["error"] == "refused"
    assert [s.id for s in run.steps if s.returncode is not None] == [
        "install",
        "build",
        "verify",
        "handover",
        "install",
        "check-handover",
        "push",
        "summary",
    ]
    assert run.step("summary").returncode == 0
    assert ": failed at push" in run.summary.splitlines()[0]
    assert "already published" in run.summary and "### Problems" in run.summary
    assert "commit" not in run.outputs or run.outputs["commit"] == ""
    assert TOKEN not in run.text()


@pytest.mark.heavy  # the whole workflow run again, for a later push of a tag: make test-heavy
def test_the_next_version_in_a_fresh_checkout_compares_with_the_published_one(
    published: tuple[JobRun, Path], hub: Any, tmp_path: Path
) -> None:
    """v6 tagged in a fresh checkout (no dist/): the build job, which holds no token, reads v5 from the Hub
    anonymously, and the card, release.json and the commit description say what changed since v5."""
    from huggingface_hub import HfApi

    from release.init import init_from_previous

    workdir = project_copy(tmp_path / "checkout")
    (workdir / "artifacts" / "v6").mkdir()
    shutil.copy(workdir / "artifacts" / "v5" / "results.tsv", workdir / "artifacts" / "v6" / "results.tsv")
    with (workdir / "artifacts" / "v6" / "results.tsv").open("a") as f:
        f.write("0a1b2c3\t47.0\t3.10\t108.0\tdiscard\tK=8 drafts\n")
    init_from_previous(workdir, "v6", "v5")
    run = tag_push(workdir, tmp_path / "runner-temp", hub.url, tag="v6", xet=False)  # and over LFS
    assert run.ok, run.text()
    assert "HF_TOKEN" not in run.step("build").env
    assert json.loads(run.step("build").stdout)["manifest"]["changes"]["since"] == "hub:v5"
    card = (workdir / "dist" / "v6" / "README.md").read_text()
    assert "## Changes since v5\n" in card and "**Compared with:** hub:v5: 1 file" in card
    description = HfApi(endpoint=hub.url, token=TOKEN).list_repo_commits(REPO)[0].message
    assert description.startswith("Changes since hub:v5:\n- changed results.tsv (")
    assert json.loads(run.step("push").stdout)["xet"] is False  # HF_HUB_DISABLE_XET=1: over LFS


def test_a_tag_without_a_spec_fails_at_build(hub: Any, tmp_path: Path) -> None:
    run = tag_push(project_copy(tmp_path / "checkout"), tmp_path / "runner-temp", hub.url, tag="v6")
    build = run.step("build")
    assert build.returncode == 2, build.stderr
    assert "artifacts/v6/release.toml" in build.stderr
    assert run.summary.splitlines()[0] == "## Release v6: failed at build"
    assert [s.id for s in run.steps if s.returncode is not None] == [
        "install",
        "build",
        "build-summary",
    ]  # publish never starts


def test_the_signing_steps_bundle_layout_is_what_hf_release_verify_checks(
    published: tuple[JobRun, Path], tmp_path: Path
) -> None:
    """The sign step's model_signing command, with an offline key standing in for Sigstore (the only
    change), writes a bundle over dist/VERSION that `hf-release verify --signature` accepts."""
    import subprocess

    from release.sign import verify_signature

    sign = steps_by_id(load_workflow(RELEASE)["jobs"]["publish"])["sign"]
    command = sign["run"].replace("\\\n", " ").splitlines()[0]
    assert command.startswith("model_signing sign sigstore ") and command.endswith(" --use_ambient_credentials")
    private, public = tmp_path / "key.pem", tmp_path / "key.pub.pem"
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(private)], check=True)
    subprocess.run(
        ["openssl", "ec", "-in", str(private), "-pubout", "-out", str(public)], check=True, capture_output=True
    )
    command = command.replace(" sign sigstore ", " sign key ").replace(
        "--use_ambient_credentials", f"--private_key {private}"
    )
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(published[1] / "dist" / "v5", dist)  # the job's staged release, copied (never signed in place)
    env = process_env(
        {
            "PATH": f"{ROOT / '.venv' / 'bin'}:{process_env({}).get('PATH', '')}",
            "RELEASE_VERSION": "v5",
            "STAGING": "dist",
        }
    )
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    verify_signature(dist, signature=dist / "model.sig", public_key=public)


def test_a_release_changed_between_the_jobs_is_not_published(published: tuple[JobRun, Path], tmp_path: Path) -> None:
    """The publish job trusts nothing it is handed: release.json changed after the build job (a valid
    edit) fails the handover check before anything is signed or pushed. The build job is the published
    run's: its outputs handed over, its checkout and staging copied."""
    from huggingface_hub import HfApi

    first, checkout = published
    workdir = tmp_path / "checkout"
    shutil.copytree(checkout, workdir, symlinks=True)
    manifest = workdir / "dist" / "v5" / "release.json"
    data = json.loads(manifest.read_text())
    data["tool"]["version"] += "-edited"
    manifest.unlink()  # never edit a staged file in place
    manifest.write_text(json.dumps(data, indent=2))
    with local_hub(tmp_path / "hub") as fresh:
        run = tag_push(workdir, tmp_path / "runner-temp", fresh.url, handed_over=first.handed_over)
        handover = run.step("check-handover")
        assert (
            handover.returncode == 1
            and "release.json: sha256" in handover.stderr
            and "not publishing" in handover.stderr
        )
        assert [s.id for s in run.steps if s.returncode is not None] == ["install", "check-handover", "summary"]
        assert not HfApi(endpoint=fresh.url, token=TOKEN).repo_exists(REPO)
