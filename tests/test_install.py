"""hf-release installed like any tool: the wheel built from this repo, installed into a fresh venv,
runs from a folder outside the checkout, with its default card templates inside the package."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.helpers import (
    EXAMPLE,
    ROOT,
    copy_sources,
    free_port,
    fresh_venv,
    made_once,
    transformers_folder,
    write_summary,
)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built offline from a copy of the sources (a build never writes into the checkout), once per
    session (pytest-xdist's workers share it)."""

    def build_wheel(out: Path) -> None:
        sources = copy_sources(out / "sources")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--wheel-dir",
                str(out),
                str(sources),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )

    (built,) = made_once(tmp_path_factory, "wheel", build_wheel).glob("hf_release-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel (its dependencies seen from this venv), once per session; returns its
    bin folder. Tests only run it: none installs into it or changes it."""

    def install(folder: Path) -> None:
        bin_dir = fresh_venv(folder / "venv")
        subprocess.run(
            [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
            check=True,
            capture_output=True,
            timeout=300,
        )

    return made_once(tmp_path_factory, "installed", install) / "venv" / "bin"


def run_installed(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "PYTHONPATH"))}
    return subprocess.run(
        [str(bin_dir / "hf-release"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_holds_the_default_templates_and_schemas(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").glob("*.j2"):
        assert f"release/templates/{template.name}" in names
    assert "release/schemas/spec.schema.json" in names


def test_every_package_folder_is_in_the_wheel(wheel: Path) -> None:
    packaged = {
        str(Path(name).parent).replace("/", ".") for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".py")
    }
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "release").rglob("*.py")}
    assert folders <= packaged, (
        f"the wheel lacks {sorted(folders - packaged)}: see [tool.hatch.build] in pyproject.toml"
    )


def test_installed_tool_builds_a_release_outside_the_checkout_from_a_subfolder(installed: Path, tmp_path: Path) -> None:
    project = tmp_path / "my-release"
    shutil.copytree(EXAMPLE, project / "artifacts" / "v5")
    done = run_installed(
        installed, "build", "v5", "--format", "json", cwd=project / "artifacts" / "v5"
    )  # root found upward
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["ok"] and Path(document["dist"]).resolve() == (project / "dist" / "v5").resolve()
    card = (project / "dist" / "v5" / "README.md").read_text()
    assert card.startswith("---\n") and "release_digest=" in card
    where = subprocess.run(
        [str(installed / "python"), "-c", "import release; print(release.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where).resolve().is_relative_to((installed.parent).resolve())  # the wheel, not the checkout


def test_a_missing_template_is_an_input_error_with_a_fix(installed: Path, tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "artifacts" / "v5")
    done = run_installed(installed, "build", "v5", "--template", "nowhere.md.j2", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == "nowhere.md.j2: card template not found; check the --template path"
    assert not (tmp_path / "dist" / "v5").exists()


def test_root_option_and_no_project_here(installed: Path, tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "proj" / "artifacts" / "v5")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    missing = run_installed(installed, "build", "v5", cwd=elsewhere)
    assert missing.returncode == 2 and "release spec not found" in missing.stderr and "Traceback" not in missing.stderr
    done = run_installed(installed, "build", "v5", "--root", str(tmp_path / "proj"), cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "proj" / "dist" / "v5" / "release.json").is_file()


def test_installed_tool_runs_the_whole_workflow_in_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    """init → build → verify → push (to `hf-release hub serve`) → status, then the next version, all
    with the installed tool, in a folder that starts empty, on a generated multi-shard model whose
    files stay on the "node's disk"."""
    import time
    import urllib.request

    token, port = "hf_installWriteToken_7f3a9c", free_port()
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / ".agent_harnesses.json").write_text('{"standardEnvVars": [], "harnesses": {}}')
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "PYTHONPATH"))},
        "HF_TOKEN": token,
        "HF_ENDPOINT": f"http://127.0.0.1:{port}",
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_XET": "1",
    }
    server = subprocess.Popen(
        [str(installed / "hf-release"), "hub", "serve", "--root", str(tmp_path / "hub"), "--port", str(port)],
        env=env,  # accepts $HF_TOKEN, for writing
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/whoami-v2", timeout=1)
            except urllib.error.HTTPError as answer:
                answer.close()
                break  # it answers (401 without a token)
            except OSError:
                time.sleep(0.1)
        node_disk = transformers_folder(tmp_path / "node-disk")  # 3 shards + index, tokenizer, LICENSE, eval
        project = tmp_path / "empty"
        project.mkdir()

        def hf(*args: str) -> dict:
            done = subprocess.run(
                [str(installed / "hf-release"), *args, "--json"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, (args, done.stderr)
            assert token not in done.stdout + done.stderr
            return json.loads(done.stdout)

        started = hf("init", "v1", "--files", str(node_disk), "--repo-id", "acme/llama-mini")
        assert started["kind"] == "transformers"
        written = tomllib.loads((project / "artifacts" / "v1" / "release.toml").read_text())["files"]
        assert {Path(f["source"]) for f in written} == set(
            node_disk.iterdir()
        )  # outside the project: absolute, in place
        assert sum(f["role"] == "weights" for f in written) == 3
        write_summary(project / "artifacts" / "v1" / "release.toml")  # push refuses init's placeholder summary
        hf("build", "v1")
        hf("verify", "v1")
        assert hf("push", "v1")["tag"] == "v1"
        (project / "artifacts" / "v2").mkdir()  # v2: a new generation config, everything else unchanged
        (project / "artifacts" / "v2" / "generation_config.json").write_text('{"do_sample": true}')
        hf("init", "v2", "--from", "v1")
        built = hf("build", "v2")
        assert [f["path"] for f in built["manifest"]["changes"]["files"]] == ["generation_config.json"]
        hf("push", "v2", "--message", "Sampling on by default.")
        status = hf("status")
        assert [(v["version"], v["staged"], v["hub"], v["hub_matches"]) for v in status["versions"]] == [
            ("v1", "verified", "published", True),
            ("v2", "verified", "published", True),
        ]
    finally:
        server.terminate()
        server.wait(timeout=30)


API_PROBE = """
import json, sys
from pathlib import Path
import hf_release

built = hf_release.build("v5", root=Path(sys.argv[1]))
verified = hf_release.verify("v5", root=sys.argv[1])
try:
    hf_release.build("v9", root=sys.argv[1])
except hf_release.InputError as exc:
    refused = exc.exit_code
print(json.dumps({"module": hf_release.__file__, "built": type(built).__name__, "files": verified.verify.files,
                  "digest": built.build.manifest.release_digest == verified.document()["release_digest"],
                  "refused": refused}))
"""


def test_installed_wheel_imports_hf_release_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    """`import hf_release` in a venv holding only the wheel, from a folder outside the checkout: the Python API
    builds and verifies, and raises the typed error of exit code 2."""
    shutil.copytree(EXAMPLE, tmp_path / "proj" / "artifacts" / "v5")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "PYTHONPATH"))}
    done = subprocess.run(
        [str(installed / "python"), "-c", API_PROBE, str(tmp_path / "proj")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["module"]).resolve().is_relative_to(installed.parent.resolve())  # the wheel's, not the checkout's
    assert Path(found["module"]).parent.name == "hf_release"
    assert (found["built"], found["digest"], found["refused"]) == ("Built", True, 2) and found["files"] > 0
