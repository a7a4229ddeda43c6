"""What `init --files` leaves out (issue 38): hf-release's own output, what transformers' Trainer leaves beside the
model (tests/fixtures/libraries/trainer-run/, written by a real Trainer run), and the `--include`/`--exclude`
patterns as `hf upload` has them — never the code an auto_map names."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from release.builder import build
from release.init import init_from_files
from release.init.leave_out import ARGS, CHECKPOINT, LOGS, METRICS, NOT_INCLUDED, OWN, SCRIPT, STATE
from release.spec import load_spec
from tests.helpers import EXAMPLE, ROOT, cli, edit_config, transformers_folder

TRAINER_RUN = ROOT / "tests" / "fixtures" / "libraries" / "trainer-run"
MODEL = {"config.json", "configuration_tinycode.py", "modeling_tinycode.py", "model.safetensors", "LICENSE"}


def trainer_output(folder: Path) -> Path:
    """The Trainer's output folder with the license the author puts beside it."""
    shutil.copytree(TRAINER_RUN, folder)
    shutil.copy(EXAMPLE / "LICENSE", folder / "LICENSE")
    return folder


def sources(spec: Path) -> set[str]:
    return {Path(f["source"]).name for f in tomllib.loads(spec.read_text())["files"]}


def test_a_trainers_output_gives_the_model_and_says_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = trainer_output(tmp_path / "out")
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "init", "v1", "--files", run_dir, "--repo-id", "acme/tiny")
    assert run.code == 0, run.err
    spec = tmp_path / "artifacts" / "v1" / "release.toml"
    assert sources(spec) == MODEL  # the auto_map's code stays: transformers loads it
    left = [line.strip() for line in run.out.splitlines() if line.strip().startswith("left out:")]
    assert left == [
        f"left out: 2 files (all_results.json, train_results.json): {METRICS}",
        f"left out: 9 files (checkpoint-4/): {CHECKPOINT}",
        f"left out: 1 file (runs/): {LOGS}",
        f"left out: 1 file (train.py): {SCRIPT}",
        f"left out: 1 file (trainer_state.json): {STATE}",
        f"left out: 1 file (training_args.bin): {ARGS}",
    ]
    assert "--include PATTERN" in run.out and "add a [[files]] entry" in run.out  # how to take one in
    assert f"# Left out: 9 files (checkpoint-4/): {CHECKPOINT}" in spec.read_text()  # said in the spec too
    staged = build(load_spec(spec), tmp_path / "dist").dist
    assert {p.name for p in staged.iterdir()} == MODEL | {"README.md", "release.json", "SHA256SUMS"}


def test_states_beside_the_model_and_code_an_auto_map_names(tmp_path: Path) -> None:
    """A state file at the top is left out; a file named like a training script that the auto_map names is the
    model's code and stays."""
    run_dir = trainer_output(tmp_path / "out")
    shutil.copy(run_dir / "checkpoint-4" / "optimizer.pt", run_dir / "optimizer.pt")
    shutil.copy(run_dir / "checkpoint-4" / "trainer_state.json", run_dir / "trainer_state.json")
    (run_dir / "modeling_tinycode.py").rename(run_dir / "train_model.py")
    edit_config(
        run_dir,
        auto_map={
            "AutoConfig": "configuration_tinycode.TinyCodeConfig",
            "AutoModelForCausalLM": "train_model.TinyCodeForCausalLM",
        },
    )
    result = init_from_files(tmp_path, "v1", run_dir, "acme/tiny")
    assert {d.path.name: d.role for d in result.files}["train_model.py"] == "code"
    reasons = {x.path: x.reason for x in result.left_out or []}
    assert reasons["optimizer.pt"] == STATE and reasons["trainer_state.json"] == STATE
    assert reasons["train.py"] == SCRIPT and "train_model.py" not in reasons
    assert reasons["all_results.json"] == METRICS and reasons["train_results.json"] == METRICS


def test_an_eval_results_file_of_another_shape_is_kept(tmp_path: Path) -> None:
    """Only what Trainer.save_metrics writes (an object of numbers) is the run's metrics: an eval_results.json of
    another shape is the author's, taken in as any file."""
    run_dir = trainer_output(tmp_path / "out")
    (run_dir / "eval_results.json").write_text('{"mmlu": {"acc": 0.61, "n": 14042}}')
    result = init_from_files(tmp_path, "v1", run_dir, "acme/tiny")
    assert "eval_results.json" in sources(result.spec)
    assert "eval_results.json" not in {x.path for x in result.left_out or []}


def test_include_and_exclude_as_hf_upload_has_them(tmp_path: Path) -> None:
    run_dir = trainer_output(tmp_path / "out")
    only = init_from_files(tmp_path, "v1", run_dir, "acme/tiny", include=["*.safetensors", "*.json", "LICENSE"])
    assert sources(only.spec) == {"config.json", "model.safetensors", "LICENSE"}  # only what the patterns name
    assert {x.reason for x in only.left_out or [] if x.path == "modeling_tinycode.py"} == {NOT_INCLUDED}
    # "*.json" matches checkpoint-4/config.json and the run's metrics and state, as in hf upload, but names none of
    # them: they stay out
    assert {x.reason for x in only.left_out or [] if x.path.endswith(".json")} == {CHECKPOINT, METRICS, STATE}
    # a pattern that names a left-out file or its folder takes it in; a folder pattern ends in '/', as in hf upload
    wanted = ["*", "checkpoint-4/", "training_args.bin", "train.py"]
    asked = init_from_files(tmp_path, "v2", run_dir, "acme/tiny", include=wanted, exclude=["runs/"])
    named = {Path(f["source"]).relative_to(run_dir).as_posix() for f in tomllib.loads(asked.spec.read_text())["files"]}
    assert "checkpoint-4/optimizer.pt" in named and "training_args.bin" in named and "train.py" in named
    assert not any(n.startswith("runs/") for n in named)
    # what no pattern writes out stays out: the run's metrics and trainer_state.json at the top
    assert {x.reason for x in asked.left_out or []} == {"--exclude runs/", METRICS, STATE}
    dropped = init_from_files(tmp_path, "v3", run_dir, "acme/tiny", exclude=["*.py"])
    assert "modeling_tinycode.py" not in sources(dropped.spec)  # an explicit pattern wins, code or not


def test_the_project_folder_leaves_out_what_hf_release_wrote(tmp_path: Path) -> None:
    """init on the project itself after a build: dist/v1/ and artifacts/v1/ are hf-release's, never sources; a
    staged release moved elsewhere (another staging folder) is recognised by its release.json and SHA256SUMS."""
    project = transformers_folder(tmp_path / "project")
    build(load_spec(init_from_files(project, "v1", project, "acme/llama-mini").spec), project / "dist")
    shutil.copytree(project / "dist" / "v1", project / "staging" / "v1")
    result = init_from_files(project, "v2", project, "acme/llama-mini")
    named = {Path(f["source"]).as_posix() for f in tomllib.loads(result.spec.read_text())["files"]}
    assert not [n for n in named if "/dist/" in n or "/artifacts/" in n or "/staging/" in n]
    assert len(named) == 12  # the model's own files, as for v1
    own = {x.path.split("/")[0] for x in result.left_out or [] if x.reason == OWN}
    assert own == {"dist", "artifacts", "staging"}
    build(load_spec(result.spec), project / "dist")
