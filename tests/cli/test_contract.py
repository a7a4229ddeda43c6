"""The CLI's contract with scripts and CI: `--format json` prints exactly one JSON document on stdout
(human lines otherwise), every exit code of the documented table is reachable and right, no run
prints a traceback, and no token is ever printed, on success or on any error path.

Each command runs as a real `hf-release` process (as CI runs it), against a local Hub on loopback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from release.errors import EXIT_CODES
from tests.helpers import READ_TOKEN, REPO, ROOT, TOKEN, free_port, local_hub

HF_RELEASE = str(Path(sys.executable).parent / "hf-release")
WRONG_TOKEN = "hf_cliWrongToken_T0k3nNotKnown"
TOKENS = (TOKEN, READ_TOKEN, WRONG_TOKEN)
SHA256 = re.compile(r"[0-9a-f]{64}")
COMMIT = re.compile(r"[0-9a-f]{40}")
pytestmark = pytest.mark.hub(per_module=True)  # one Hub for the module: `pushed` publishes to it once


@dataclass
class Run:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.out)


def hf_release(*args: str, cwd: Path, env: dict[str, str] | None = None, process: bool = False) -> Run:
    """Run the CLI; check what holds for every run: no traceback, no token, the output format.

    In this process by default (the same `main`, a fresh environment, redactions and working
    directory; an exception escaping `main` counts as a traceback), or as a real `hf-release`
    process with `process=True`.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC"))}
    base.update({"HF_HUB_DISABLE_XET": "1", "NO_COLOR": "1"}, **(env or {}))
    run = _in_a_process(args, cwd, base) if process else _in_this_process(args, cwd, base)
    for stream in (run.out, run.err):
        assert "Traceback" not in stream, f"{args}: traceback:\n{stream}"
        for token in TOKENS:
            assert token not in stream, f"{args}: printed a token:\n{stream}"
    assert run.code in EXIT_CODES, f"{args}: exit {run.code} is not in the documented table"
    if "--format=json" in args or any(a == "--format" and b == "json" for a, b in zip(args, args[1:], strict=False)):
        doc = json.loads(run.out)  # exactly one document: json.loads refuses trailing text
        assert isinstance(doc, dict) and doc["ok"] is (run.code == 0), run
        if run.code:
            assert doc["exit_code"] == run.code and doc["problems"], run
            assert all(set(p) == {"file", "message"} for p in doc["problems"])
            assert run.err.strip(), "the problems also go to stderr, one line each"
    else:
        with pytest.raises(ValueError):
            json.loads(run.out or "not json")
        if run.code:
            assert run.out == "", f"{args}: errors go to stderr only in human mode"
    return run


def _in_a_process(args: tuple[str, ...], cwd: Path, env: dict[str, str]) -> Run:
    env = {**env, "HF_HOME": str(cwd / ".hf-home")}  # no login cache: only the token a test gives
    done = subprocess.run(
        [HF_RELEASE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    return Run(args, done.returncode, done.stdout, done.stderr)


def _in_this_process(args: tuple[str, ...], cwd: Path, env: dict[str, str]) -> Run:
    from release import cli, errors

    saved_env, saved_cwd, saved_secrets = dict(os.environ), Path.cwd(), set(errors._SECRETS)
    errors._SECRETS.clear()  # no redaction learnt by an earlier run may hide a leak in this one
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # what a real process would print as a traceback
                err.write(traceback.format_exc())
                code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        errors._SECRETS.clear()
        errors._SECRETS.update(saved_secrets)
    return Run(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for name in ("artifacts", "templates"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def built(project: Path) -> Run:
    return hf_release("build", "v5", "--format", "json", cwd=project, process=True)


@pytest.fixture(scope="module")
def dry_run(built: Run, project: Path, module_hub: Any) -> Run:
    url = module_hub.url
    return hf_release(
        "push", "v5", "--dry-run", "--endpoint", url, "--format", "json", cwd=project, env={"HF_TOKEN": TOKEN}
    )


@pytest.fixture(scope="module")
def pushed(dry_run: Run, project: Path, module_hub: Any) -> Run:
    url = module_hub.url
    return hf_release(
        "push", "v5", "--endpoint", url, "--format", "json", cwd=project, env={"HF_TOKEN": TOKEN}, process=True
    )  # a token on a command line shows in `ps`


# --- one JSON document per command ----------------------------------------------------------------


def test_build_json_lists_files_and_digests(built: Run, project: Path) -> None:
    assert built.code == 0, built.err
    doc = built.doc
    assert doc["command"] == "build" and doc["dist"] == "dist/v5"
    manifest = doc["manifest"]
    assert manifest["repo_id"] == REPO and manifest["version"] == "v5"
    assert SHA256.fullmatch(manifest["release_digest"])
    on_disk = json.loads((project / "dist" / "v5" / "release.json").read_text())
    assert manifest == on_disk
    assert {f["path_in_repo"] for f in manifest["files"]} >= {"model.safetensors", "config.json", "README.md"}
    for f in manifest["files"]:
        assert SHA256.fullmatch(f["sha256"]) and f["size"] > 0 and f["role"]


def test_build_human_output_is_lines(built: Run, project: Path, tmp_path: Path) -> None:
    run = hf_release("build", "v5", "--dist", str(tmp_path / "dist"), cwd=project)
    assert run.code == 0
    # each count says what it counts: release.json's files, those from the spec, and what a push sends
    assert re.search(
        rf"^built {REPO}@v5 in .* — 16 files in release.json \(13 from the spec \+ assets/bench.png \+ "
        r"assets/honest-note.png \+ README.md; 18 to push with release.json and SHA256SUMS\), release digest "
        rf"[0-9a-f]{{12}}$",
        run.out,
        re.M,
    ), run.out


def test_verify_json(built: Run, project: Path) -> None:
    run = hf_release("verify", "v5", "--format", "json", cwd=project)
    assert run.code == 0, run.err
    doc = run.doc
    assert doc["command"] == "verify"
    assert doc["release_digest"] == built.doc["manifest"]["release_digest"]
    assert doc["files"] == len(built.doc["manifest"]["files"])
    assert doc["bytes"] == sum(f["size"] for f in built.doc["manifest"]["files"])
    assert "remote" not in doc


def test_verify_human(built: Run, project: Path) -> None:
    run = hf_release("verify", "v5", cwd=project)
    assert run.code == 0 and run.out.startswith(f"verified {REPO}@v5: ")


def test_push_dry_run_json_is_the_plan(dry_run: Run, built: Run) -> None:
    assert dry_run.code == 0, dry_run.err
    doc = dry_run.doc
    assert doc["command"] == "push" and doc["dry_run"] is True
    assert doc["commit"] is None and doc["tag"] is None and doc["bytes_sent"] == 0
    plan = doc["plan"]
    assert plan["tag"] == "create" and plan["repo_exists"] is False
    files = {f["path_in_repo"] for f in built.doc["manifest"]["files"]}
    assert {a["path"] for a in plan["add"]} == files | {"release.json", "SHA256SUMS"}


def test_push_json_names_commit_and_tag(pushed: Run, dry_run: Run, hub: Any) -> None:
    from huggingface_hub import HfApi

    assert pushed.code == 0, pushed.err
    doc = pushed.doc
    assert doc["url"] == f"{hub.url}/{REPO}" and doc["tag"] == "v5" and doc["verified"] is True
    assert COMMIT.fullmatch(doc["commit"])
    assert doc["plan"]["add"] == dry_run.doc["plan"]["add"]  # the dry run showed exactly what was done
    assert doc["bytes_sent"] == doc["plan"]["bytes_to_send"] > 0
    tags = {t.name: t.target_commit for t in HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO).tags}
    assert tags == {"v5": doc["commit"]}


def test_verify_remote_json(pushed: Run, project: Path, hub: Any) -> None:
    run = hf_release("verify", "v5", "--remote", "--endpoint", hub.url, "--format", "json", cwd=project)
    assert run.code == 0, run.err
    assert run.doc["remote"] == {
        "url": f"{hub.url}/{REPO}",
        "tag": "v5",
        "commit": pushed.doc["commit"],
        "checked": "listing",
        "bytes_downloaded": 0,
    }


def test_push_again_is_a_no_op_keeping_the_tag(pushed: Run, project: Path, hub: Any) -> None:
    run = hf_release("push", "v5", "--endpoint", hub.url, "--format", "json", cwd=project, env={"HF_TOKEN": TOKEN})
    assert run.code == 0, run.err
    assert run.doc["plan"]["tag"] == "keep" and run.doc["commit"] == pushed.doc["commit"] and run.doc["bytes_sent"] == 0


def test_push_human_output(pushed: Run, project: Path, hub: Any) -> None:
    run = hf_release("push", "v5", "--dry-run", "--endpoint", hub.url, "--token", TOKEN, cwd=project)
    assert run.code == 0
    assert run.out.startswith("v5 is already published at tag v5 (commit ")
    assert f"of {hub.url}/{REPO} with exactly these files: a push would send nothing" in run.out


def test_hash_json(project: Path) -> None:
    run = hf_release("hash", "artifacts/v5/config.json", "--format", "json", cwd=project)
    assert run.code == 0
    (line,) = run.doc["lines"]
    assert re.fullmatch(r"[0-9a-f]{64}  artifacts/v5/config\.json", line)


# --- the exit-code table --------------------------------------------------------------------------


def test_help_documents_the_exit_code_table(project: Path) -> None:
    run = hf_release("--help", cwd=project)
    assert run.code == 0
    for code, meaning in EXIT_CODES.items():
        assert re.search(rf"^\s*{code}\s+{re.escape(meaning)}$", run.out, re.M), (code, run.out)


def test_exit_1_verify_failed_names_the_file(built: Run, project: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    shutil.copytree(project / "dist" / "v5", dist / "v5")  # a real copy: the staging hard-links sources
    config = dist / "v5" / "config.json"
    config.write_bytes(config.read_bytes().replace(b"{", b"[", 1))
    run = hf_release("verify", "v5", "--dist", str(dist), "--format", "json", cwd=project)
    assert run.code == 1
    assert run.doc["error"] == "verify-failed"
    assert {p["file"] for p in run.doc["problems"]} == {"config.json"}
    human = hf_release("verify", "v5", "--dist", str(dist), cwd=project)
    assert human.code == 1 and human.err.startswith("config.json: sha256 is ")


def test_exit_1_check_failed(project: Path, tmp_path: Path) -> None:
    spec_dir = tmp_path / "artifacts" / "v5"
    shutil.copytree(project / "artifacts" / "v5", spec_dir)
    (spec_dir / "config.json").write_text("{ not json")
    run = hf_release("build", "v5", "--format", "json", cwd=tmp_path)
    assert run.code == 1 and run.doc["error"] == "check-failed"
    assert any(p["file"].endswith("config.json") for p in run.doc["problems"]), run.doc
    assert not (tmp_path / "dist" / "v5").exists()  # all or nothing


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (("build", "v9"), "input-error"),  # no spec for that version
        (("verify", "v9"), "input-error"),  # nothing staged for it
        (("push", "v5", "--no-such-option"), "usage"),
        (("verify", "v5", "--format", "yaml"), "usage"),
        (("frobnicate",), "usage"),
    ],
    ids=["no-spec", "not-staged", "unknown-option", "bad-format-value", "unknown-command"],
)
def test_exit_2_usage_or_input_error(built: Run, project: Path, args: tuple[str, ...], kind: str) -> None:
    human = hf_release(*args, cwd=project)
    assert human.code == 2, human
    if "yaml" in args:
        return  # `--format yaml` itself is the error: there is no JSON form to ask for
    run = hf_release(*args, "--format", "json", cwd=project)
    assert run.code == 2 and run.doc["error"] == kind, run


def test_exit_2_push_without_a_token(built: Run, project: Path, hub: Any) -> None:
    run = hf_release("push", "v5", "--endpoint", hub.url, "--format", "json", cwd=project)
    assert run.code == 2 and run.doc["problems"][0]["file"] == "token"


def test_exit_3_endpoint_refusing_connections(built: Run, project: Path) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    run = hf_release("push", "v5", "--endpoint", endpoint, "--token", TOKEN, "--format", "json", cwd=project)
    assert run.code == 3 and run.doc["error"] == "remote-error"
    assert "cannot reach the Hub" in run.doc["problems"][0]["message"]
    human = hf_release(
        "verify", "v5", "--remote", "--endpoint", endpoint, cwd=project, env={"HF_TOKEN": TOKEN}, process=True
    )
    assert human.code == 3 and "cannot reach the Hub" in human.err


def test_exit_3_wrong_token_is_a_401_and_never_printed(built: Run, project: Path, hub: Any) -> None:
    for how in (("--token", WRONG_TOKEN), ()):
        env = {} if how else {"HF_TOKEN": WRONG_TOKEN}
        run = hf_release(
            "push", "v5", "--endpoint", hub.url, *how, "--format", "json", cwd=project, env=env, process=not how
        )
        assert run.code == 3, run
        assert "401" in run.doc["problems"][0]["message"]


def test_exit_4_tag_published_with_other_files(built: Run, project: Path, tmp_path: Path) -> None:
    from huggingface_hub import HfApi

    with local_hub(tmp_path / "hub") as other:
        api = HfApi(endpoint=other.url, token=TOKEN)
        api.create_repo(REPO)
        api.create_tag(REPO, tag="v5")  # v5 taken by a commit without this release
        run = hf_release(
            "push", "v5", "--endpoint", other.url, "--format", "json", cwd=project, env={"HF_TOKEN": TOKEN}
        )
        assert run.code == 4 and run.doc["error"] == "refused"
        assert any("already published" in p["message"] for p in run.doc["problems"]), run.doc
        human = hf_release("push", "v5", "--dry-run", "--endpoint", other.url, "--token", TOKEN, cwd=project)
        assert human.code == 4 and "--force-tag" in human.err  # the dry run refuses exactly as the push would
        assert {t.name: t.target_commit for t in api.list_repo_refs(REPO).tags}["v5"] != run.doc.get("commit")


def test_exit_3_read_only_token(built: Run, project: Path, hub: Any) -> None:
    run = hf_release("push", "v5", "--endpoint", hub.url, "--token", READ_TOKEN, "--format=json", cwd=project)
    assert run.code == 3 and any("read-only" in p["message"] for p in run.doc["problems"]), run.doc


def test_trusted_publishing_misconfigured_is_a_clean_error(built: Run, project: Path, hub: Any) -> None:
    run = hf_release(
        "push",
        "v5",
        "--dry-run",
        "--endpoint",
        hub.url,
        "--format",
        "json",
        cwd=project,
        env={"HF_OIDC_RESOURCE": REPO},
    )
    assert run.code in (2, 3) and "HF_OIDC" in run.doc["problems"][0]["message"]
