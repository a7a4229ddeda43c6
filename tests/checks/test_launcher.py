"""The serving launcher: real `bash -n`, the `vllm serve` flags, the speculative config, the launch order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from release.checks.launcher import load_launcher
from release.kinds.dflash2_drafter import launcher_problems
from tests.checks.helpers import LAUNCHER, REPO_ID, SPEC_CONFIG, check_problems, refusal_messages
from tests.helpers import EXAMPLE, edit

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the launcher check runs bash -n")

HEAD_LINE = '    serve 0 "$HEAD_ADDR" 2>&1 | tee "$LOG_DIR/head-rank0.log"\n'


@pytest.fixture
def launcher(tmp_path: Path) -> Path:
    path = tmp_path / LAUNCHER
    shutil.copy(EXAMPLE / LAUNCHER, path)
    return path


def launcher_problems_of(path: Path) -> list[str]:
    return refusal_messages(load_launcher, path, LAUNCHER)


def drafter_problems(path: Path, repo_id: str = REPO_ID) -> list[str]:
    """The drafter kind's launcher rules on a launcher that reads fine."""
    problems = launcher_problems(load_launcher(path, LAUNCHER), None, LAUNCHER, repo_id)
    assert all(p.file == LAUNCHER for p in problems), problems
    return [p.message for p in problems]


def test_example_launcher_passes() -> None:
    launcher = load_launcher(EXAMPLE / LAUNCHER, LAUNCHER)
    assert launcher.spec_config == {"method": "dflash", "model": REPO_ID, "num_speculative_tokens": 7}
    assert launcher.launch_order == ["worker 1", "worker 2", "worker 3", "head 0"]
    assert launcher.flags["--tensor-parallel-size"] == "4"
    assert launcher.flags["--enforce-eager"] is True
    assert launcher.flags["--max-num-batched-tokens"] == "7168"
    lines = (EXAMPLE / LAUNCHER).read_text().splitlines()
    assert "vllm serve" in lines[launcher.serve_line - 1]
    assert launcher.env["NCCL_IB_DISABLE"] == "0"


def test_bash_syntax_error(launcher: Path) -> None:
    edit(launcher, "  head)\n", "  head)\n    if then\n")
    [message] = launcher_problems_of(launcher)
    assert message.startswith(f"bash -n fails: {LAUNCHER}: line ")
    assert "syntax error" in message
    assert str(launcher) not in message  # the staging path is replaced by the file's name in the repo


def test_unclosed_quote(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text("#!/usr/bin/env bash\necho 'never closed\n")
    [message] = launcher_problems_of(path)
    assert message.startswith(f"bash -n fails: {LAUNCHER}: line ") and "unexpected EOF" in message


def test_spec_config_not_json(launcher: Path) -> None:
    edit(launcher, SPEC_CONFIG, "{method: dflash}")
    [message] = launcher_problems_of(launcher)
    assert message.startswith("line 82: --speculative-config is not a JSON object (Expecting property name")
    assert message.endswith(": {method: dflash}")


def test_spec_config_a_json_list(launcher: Path) -> None:
    edit(launcher, SPEC_CONFIG, '["dflash"]')
    assert launcher_problems_of(launcher) == [
        'line 82: --speculative-config is not a JSON object (not a JSON object): ["dflash"]'
    ]


def test_spec_config_nested_too_deeply(launcher: Path) -> None:
    edit(launcher, SPEC_CONFIG, "[" * 5000)
    [message] = launcher_problems_of(launcher)
    assert message.startswith("line 82: --speculative-config is not a JSON object (")


def test_method_not_dflash(example: Path, tmp_path: Path) -> None:
    """The drafter kind's rule: the launcher must serve it as DFlash."""
    edit(example.parent / LAUNCHER, '"method":"dflash"', '"method":"eagle3"')
    assert check_problems(example, tmp_path / "stage") == [
        f"{LAUNCHER}: --speculative-config method is 'eagle3'; expected 'dflash'"
    ]


def test_model_is_not_the_repo(launcher: Path) -> None:
    assert drafter_problems(launcher, repo_id="spark-lab/other") == [
        f"--speculative-config model is {REPO_ID!r}; expected this release's repo 'spark-lab/other'"
    ]


@pytest.mark.parametrize("value", ["0", '"7"', "7.0", "true", "null"])
def test_num_speculative_tokens_not_a_positive_integer(launcher: Path, value: str) -> None:
    edit(launcher, '"num_speculative_tokens":7', f'"num_speculative_tokens":{value}')
    [message] = drafter_problems(launcher)
    assert message.startswith("--speculative-config num_speculative_tokens is ") and message.endswith(
        "; expected a positive integer"
    )


def test_no_speculative_config(launcher: Path) -> None:
    """Any vLLM launcher reads without one; the drafter kind requires it."""
    edit(launcher, f"    --speculative-config '{SPEC_CONFIG}' \\\n", "")
    assert load_launcher(launcher, LAUNCHER).spec_config is None
    [message] = drafter_problems(launcher)
    assert message.startswith("line 82: `vllm serve` has no --speculative-config; ")


def test_head_started_before_workers(launcher: Path) -> None:
    edit(launcher, HEAD_LINE, "")
    edit(launcher, "    for rank in 1 2 3; do\n", HEAD_LINE + "    for rank in 1 2 3; do\n")
    assert launcher_problems_of(launcher) == [
        "line 111: the head starts before a worker; start workers first, the head last"
    ]


def test_two_heads(launcher: Path) -> None:
    edit(launcher, HEAD_LINE, HEAD_LINE + HEAD_LINE)
    messages = launcher_problems_of(launcher)
    assert messages == ["starts 2 heads (lines 119, 120); expected one"]


def test_direct_serve_lines_head_first(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    serve = f"vllm serve m --speculative-config '{SPEC_CONFIG}'"
    path.write_text(f"#!/usr/bin/env bash\n{serve} --node-rank 0 &\n{serve} --node-rank 1 --headless &\nwait\n")
    assert launcher_problems_of(path) == ["line 2: the head starts before a worker; start workers first, the head last"]


def test_different_speculative_configs(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    other = SPEC_CONFIG.replace(":7", ":5")
    path.write_text(
        "#!/usr/bin/env bash\n"
        f"vllm serve m --node-rank 1 --headless --speculative-config '{other}' &\n"
        f"vllm serve m --node-rank 0 --speculative-config '{SPEC_CONFIG}'\n"
    )
    assert launcher_problems_of(path) == ["line 3: --speculative-config differs from line 2"]


def test_no_vllm_serve(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text(
        "#!/usr/bin/env bash\n# vllm serve is mentioned only in a comment\npython -m sglang.launch_server\n"
    )
    assert launcher_problems_of(path) == ["runs no `vllm serve`; expected the vLLM launch command"]


def test_variables_are_resolved(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text(
        "#!/usr/bin/env bash\n"
        'PORT="${PORT:-8000}"\n'
        "export NCCL_DEBUG=WARN\n"
        f'vllm serve m --port "$PORT" --speculative-config \'{SPEC_CONFIG}\' --max-num-seqs "${{SEQS:-8}}"\n'
    )
    launcher = load_launcher(path, LAUNCHER)
    assert launcher.flags["--port"] == "8000"
    assert launcher.flags["--max-num-seqs"] == "8"
    assert launcher.env == {"NCCL_DEBUG": "WARN"}
    assert launcher.launch_order == ["head 0"]


def test_speculative_config_held_in_a_variable(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text(f"#!/usr/bin/env bash\nCFG='{SPEC_CONFIG}'\nvllm serve m --speculative-config \"$CFG\"\n")
    assert load_launcher(path, LAUNCHER).spec_config["num_speculative_tokens"] == 7


def test_unquoted_variable_adds_several_flags(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text(
        "#!/usr/bin/env bash\nEXTRA='--enforce-eager --block-size 2304'\n"
        f"vllm serve m $EXTRA --speculative-config '{SPEC_CONFIG}'\n"
    )
    flags = load_launcher(path, LAUNCHER).flags
    assert flags["--enforce-eager"] is True and flags["--block-size"] == "2304"


# The cross check with config.json runs in CheckLauncher.run, so it is tested through the check steps.


def test_num_speculative_tokens_must_be_block_size_minus_one(example: Path, tmp_path: Path) -> None:
    edit(example.parent / LAUNCHER, '"num_speculative_tokens":7', '"num_speculative_tokens":5')
    assert check_problems(example, tmp_path / "stage") == [
        f"{LAUNCHER}: num_speculative_tokens 5 must be config.json's dflash_config.block_size − 1 = 7"
    ]


def test_block_size_change_is_caught_from_the_config_side(example: Path, tmp_path: Path) -> None:
    edit(example.parent / "config.json", '"block_size": 8', '"block_size": 16')
    assert check_problems(example, tmp_path / "stage") == [
        f"{LAUNCHER}: num_speculative_tokens 7 must be config.json's dflash_config.block_size − 1 = 15"
    ]


def test_launcher_repo_id_through_the_checks(example: Path, tmp_path: Path) -> None:
    edit(example, 'repo_id = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"', 'repo_id = "spark-lab/renamed"')
    assert check_problems(example, tmp_path / "stage") == [
        f"{LAUNCHER}: --speculative-config model is {REPO_ID!r}; expected this release's repo 'spark-lab/renamed'"
    ]
