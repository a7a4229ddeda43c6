"""Launchers written the other common ways read to the same serving facts as the example's own; pathological
launchers stop with one line naming where. Real `bash -n`, real tree-sitter-bash grammar, nothing executed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from release.checks.launcher import PER_NODE_FLAGS, Launcher, load_launcher
from release.errors import CheckFailed
from release.evidence.launcher import LauncherError, read_launcher
from tests.checks.helpers import LAUNCHER, SPEC_CONFIG
from tests.helpers import EXAMPLE, ROOT

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the launcher check runs bash -n")

TARGET = "zai-org/GLM-5.3-Flash"
# The example's shared flags in its order, written as a bash array the variants splice in.
FLAGS = """FLAGS=(
  --host 0.0.0.0 --port "${API_PORT:-8000}" --distributed-executor-backend mp --nnodes 4
  --master-addr "$HEAD_ADDR" --master-port "${MASTER_PORT:-29501}" --tensor-parallel-size 4 --enforce-eager
  --max-num-batched-tokens 7168 --max-num-seqs "${MAX_NUM_SEQS:-8}" --speculative-config "$SPEC_CONFIG"
  --kv-cache-dtype fp8_e4m3 --block-size 2304 --max-model-len 262144 --moe-backend marlin
  --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION:-0.85}"
)"""

# One skeleton, the example's structure: a head that ssh-starts workers 1-3 in a loop, then serves rank 0;
# a case on $1 picks the node's role; the spec config is built in a double-quoted variable.
SKELETON = """#!/usr/bin/env bash
set -euo pipefail
HEAD_ADDR="${HEAD_ADDR:-10.100.0.11}"
WORKERS=(10.100.0.12 10.100.0.13 10.100.0.14)
TARGET_MODEL="${TARGET_MODEL:-zai-org/GLM-5.3-Flash}"
DRAFT_MODEL="spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"
SPEC_CONFIG="{\\"method\\":\\"dflash\\",\\"model\\":\\"${DRAFT_MODEL}\\",\\"num_speculative_tokens\\":7}"
export NCCL_IB_DISABLE=0
%(flags)s

serve() {
  local rank="$1"
  shift
  %(serve)s
}

case "${1:-head}" in
  worker)
    serve "$2" --headless
    ;;
  head)
    for rank in 1 2 3; do
      ssh "${WORKERS[rank - 1]}" "nohup $0 worker $rank > /tmp/worker-$rank.log 2>&1 &"
    done
    sleep 60
    serve 0 2>&1 | tee /tmp/head.log
    ;;
  *)
    exit 2
    ;;
esac
"""

FORMS = {
    "docker": (
        FLAGS,
        "exec docker run --rm --gpus all --network host --ipc=host -e NCCL_IB_HCA=mlx5_0 "
        '-v "$HOME/.cache/huggingface:/root/.cache/huggingface" vllm/vllm-openai:v0.11.0 '
        '"$TARGET_MODEL" "${FLAGS[@]}" --node-rank "$rank" "$@"',
    ),
    "python -m": (
        FLAGS,
        'exec python3 -m vllm.entrypoints.openai.api_server --model "$TARGET_MODEL" "${FLAGS[@]}" --node-rank "$rank" '
        '"$@"',
    ),
    "--config": ("", 'exec vllm serve "$TARGET_MODEL" --config serve.yaml --node-rank "$rank" "$@"'),
}
SERVE_YAML = f"""\
host: 0.0.0.0
port: 8000
distributed-executor-backend: mp
nnodes: 4
master-addr: 10.100.0.11
master_port: 29501
tensor-parallel-size: 4
enforce-eager: true
max-num-batched-tokens: 7168
max-num-seqs: 8
speculative-config: {SPEC_CONFIG}
kv-cache-dtype: fp8_e4m3
block-size: 2304
max-model-len: 262144
moe-backend: marlin
gpu-memory-utilization: 0.85
"""


def shared(launcher: Launcher) -> list[tuple[str, str | bool]]:
    return [(k, v) for k, v in launcher.flags.items() if k not in PER_NODE_FLAGS]


@pytest.fixture(scope="module")
def example() -> Launcher:
    return load_launcher(EXAMPLE / LAUNCHER, LAUNCHER)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_reads_to_the_examples_serving_facts(form: str, example: Launcher, tmp_path: Path) -> None:
    flags, serve = FORMS[form]
    path = tmp_path / LAUNCHER
    path.write_text(SKELETON % {"flags": flags, "serve": serve})
    (tmp_path / "serve.yaml").write_text(SERVE_YAML)
    launcher = load_launcher(path, LAUNCHER)
    assert shared(launcher) == shared(example)  # same flags, same values, same order: the same serving table
    assert launcher.spec_config == example.spec_config
    assert launcher.launch_order == example.launch_order == ["worker 1", "worker 2", "worker 3", "head 0"]
    assert launcher.model == example.model == TARGET
    assert launcher.env["NCCL_IB_DISABLE"] == "0"


def test_docker_environment_and_form(tmp_path: Path) -> None:
    text = SKELETON % {"flags": FLAGS, "serve": FORMS["docker"][1]}
    facts = read_launcher(text)
    [serve] = facts.serves
    assert serve.form == "docker vllm/vllm-openai" and serve.env == {"NCCL_IB_HCA": "mlx5_0"}
    assert "--gpus" not in serve.flags and "-v" not in serve.flags  # docker's own options are not vLLM's


def test_a_config_file_that_is_not_shipped(tmp_path: Path) -> None:
    path = tmp_path / LAUNCHER
    path.write_text(SKELETON % {"flags": "", "serve": FORMS["--config"][1]})
    with pytest.raises(CheckFailed) as exc:
        load_launcher(path, LAUNCHER)
    line = path.read_text().splitlines().index("  " + FORMS["--config"][1]) + 1
    assert [str(p) for p in exc.value.problems] == [
        f"{LAUNCHER}: line {line}: --config serve.yaml: no such file next to the launcher; ship the YAML in the release"
    ]


def test_command_line_wins_over_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text("port: 9000\nenforce_eager: false\nmax-num-seqs: 4\n")
    facts = read_launcher("vllm serve m --config serve.yaml --port 8001\n", base_dir=tmp_path)
    assert facts.serves[0].flags == {"--port": "8001", "--max-num-seqs": "4"}


def test_if_and_case_take_the_branch_their_value_selects() -> None:
    text = textwrap.dedent("""\
        ROLE="${ROLE:-head}"
        if [ "$ROLE" = head ]; then RANK=0; EXTRA=""; else RANK=1; EXTRA=--headless; fi
        case "$(hostname)" in  # only known at run time: every branch is read, none ends the script
          spark-1) TP=4 ;;
          *) echo "unknown host" >&2; exit 1 ;;
        esac
        vllm serve m --node-rank "$RANK" --tensor-parallel-size "$TP" $EXTRA
        """)
    facts = read_launcher(text)
    assert facts.serves[0].flags == {"--node-rank": "0", "--tensor-parallel-size": "4"}
    assert [(s.role, s.rank, s.line) for s in facts.starts] == [("head", "0", 7)]


def test_values_only_known_at_run_time_stay_as_written() -> None:
    facts = read_launcher('vllm serve "$MODEL_DIR/glm" --served-model-name "$(hostname)-glm" --port ${PORT:-8000}\n')
    assert facts.serves[0].model == "$MODEL_DIR/glm"
    assert facts.serves[0].flags == {"--served-model-name": "$(hostname)-glm", "--port": "8000"}


# --- bounds: each stops with one line naming where, run in a subprocess under a memory limit -------------

PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from release.checks.launcher import load_launcher
from release.errors import CheckFailed
try:
    load_launcher(Path(sys.argv[1]), "launch.sh")
except CheckFailed as exc:
    print("\\n".join(str(p) for p in exc.problems))
"""


def probe(path: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0 and not result.stderr, result.stderr[-2000:]
    return result.stdout.splitlines()


def nested_loops(depth: int) -> str:
    heads = "".join(f"for i{n} in 0 1 2 3 4 5 6 7 8 9; do\n" for n in range(depth))
    return f"#!/usr/bin/env bash\n{heads}vllm serve m --port $i0\n" + "done\n" * depth


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "doubling",
            "#!/usr/bin/env bash\nA=x\n" + 'A="$A$A"\n' * 800 + "vllm serve m\n",
            ["launch.sh: line 18: a value grows beyond 32,768 characters; simplify the launcher"],
        ),
        (
            "loops",
            nested_loops(8),
            [
                "launch.sh: line 9: reading stops after 20,000 steps (loops or calls nested too deeply); simplify the "
                "launcher"
            ],
        ),
        (
            "recursion",
            "#!/usr/bin/env bash\nf() { f; }\nf\n",
            ["launch.sh: line 2: nested more than 60 levels deep (recursive calls?)"],
        ),
        (
            "nesting",
            "#!/usr/bin/env bash\n" + "{\n" * 100 + "vllm serve m\n" + "}\n" * 100,
            ["launch.sh: line 61: nested more than 60 levels deep; simplify the launcher"],
        ),
        (
            "array doubling",
            "#!/usr/bin/env bash\nA=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 40,
            ["launch.sh: line 15: a command grows beyond 4,096 words; simplify the launcher"],
        ),
    ],
)
def test_pathological_launchers_stop_with_one_line(name: str, text: str, expected: list[str], tmp_path: Path) -> None:
    path = tmp_path / "launch.sh"
    path.write_text(text)
    assert probe(path) == expected


def test_a_10_mb_launcher_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "launch.sh"
    path.write_text("#!/usr/bin/env bash\n" + "# padding\n" * 1_048_576)
    assert probe(path) == [
        f"launch.sh: is {path.stat().st_size:,} bytes; a launcher above 262,144 bytes is not read — ship the launch "
        "script itself"
    ]


def test_read_launcher_refuses_large_text_itself() -> None:
    with pytest.raises(LauncherError, match="above 262,144 bytes"):
        read_launcher("#" * 300_000)


def test_grammar_gaps_are_a_line_not_a_wrong_card(tmp_path: Path) -> None:
    with pytest.raises(LauncherError, match=r"^line 2: the bash grammar \(tree-sitter-bash\) cannot read this line"):
        read_launcher("vllm serve m\nif then\n")


def test_spec_config_json_survives_escapes() -> None:
    text = (
        'D=o/r\nC="{\\"method\\":\\"dflash\\",\\"model\\":\\"${D}\\",\\"num_speculative_tokens\\":7}"\n'
        'vllm serve m --speculative-config "$C"\n'
    )
    assert json.loads(str(read_launcher(text).serves[0].flags["--speculative-config"])) == {
        "method": "dflash",
        "model": "o/r",
        "num_speculative_tokens": 7,
    }


def test_c_style_loop_starting_workers_over_ssh() -> None:
    text = textwrap.dedent("""\
        NODES=3
        for ((i = 1; i <= NODES; i++)); do
          ssh "node$i" "vllm serve m --node-rank $i --headless --port 8000" &
        done
        for (( j = 0 ; j < $(nproc) ; ++j )); do echo "$j"; done
        vllm serve m --node-rank 0 --port 8000
        """)
    facts = read_launcher(text)
    assert [(s.role, s.rank, s.line) for s in facts.starts] == [
        ("worker", "1", 3),
        ("worker", "2", 3),
        ("worker", "3", 3),
        ("head", "0", 6),
    ]
    assert [s.flags["--node-rank"] for s in facts.serves] == ["1", "2", "3", "0"]


def test_quoting_as_bash_does() -> None:
    text = 'A=a\\ b\nB=\'$A\'\nC=$\'x\\ty\'\nvllm serve m --a "$A" --b "$B" --c "$C" --d $A\n'
    flags = read_launcher(text).serves[0].flags
    assert flags == {"--a": "a b", "--b": "$A", "--c": "x\ty", "--d": "a"}  # unquoted $A splits: b is a stray word


def test_case_picks_the_node_rank_from_a_known_value() -> None:
    text = textwrap.dedent("""\
        NODE="${NODE:-spark-2}"
        case "$NODE" in
          spark-1) RANK=0; ROLE_FLAGS=() ;;
          spark-[2-4]) RANK=$(( ${NODE#spark-} - 1 )); RANK=1; ROLE_FLAGS=(--headless) ;;
          *) echo "unknown node $NODE" >&2; exit 1 ;;
        esac
        vllm serve m --nnodes 4 --node-rank "$RANK" "${ROLE_FLAGS[@]}"
        """)
    facts = read_launcher(text)
    assert facts.serves[0].flags == {"--nnodes": "4", "--node-rank": "1", "--headless": True}
    assert [(s.role, s.rank) for s in facts.starts] == [("worker", "1")]


# --- a launcher run once per node with its rank: one path per `case` branch --------------------------

PER_RANK = Path(__file__).parent / "fixtures" / "launch-per-rank.sh"  # written the usual way, not for the reader


def test_a_launcher_taking_the_rank_as_argument_reads_every_rank() -> None:
    text = PER_RANK.read_text()
    docker_line = (
        text.splitlines().index("docker run -d --name vllm --gpus all --network host --ipc host --shm-size 16g \\") + 1
    )
    facts = read_launcher(text)
    assert [(s.flags["--node-rank"], "--headless" in s.flags, s.line) for s in facts.serves] == [
        ("0", False, docker_line),
        ("1", True, docker_line),
        ("2", True, docker_line),
        ("3", True, docker_line),
    ]
    assert [s.env["VLLM_HOST_IP"] for s in facts.serves] == ["10.100.0.11", "10.100.0.12", "10.100.0.13", "10.100.0.14"]
    # the launcher starts one node per run: the order is the documented one, workers by rank, then the head
    assert [(s.role, s.rank) for s in facts.starts] == [
        ("worker", "1"),
        ("worker", "2"),
        ("worker", "3"),
        ("head", "0"),
    ]
    assert json.loads(str(facts.serves[0].flags["--speculative-config"]))["num_speculative_tokens"] == 7


def test_without_the_catch_all_branch_the_ranks_still_read() -> None:
    text = PER_RANK.read_text().replace('  *) echo "rank must be 0-3" >&2; exit 2 ;;\n', "")
    facts = read_launcher(text)
    assert [s.flags["--node-rank"] for s in facts.serves] == ["0", "1", "2", "3"]  # "no branch matched" is no node
    assert [(s.role, s.rank) for s in facts.starts] == [
        ("worker", "1"),
        ("worker", "2"),
        ("worker", "3"),
        ("head", "0"),
    ]


def test_flags_that_differ_between_ranks_are_shown_as_such(tmp_path: Path) -> None:
    from release.card.evidence import Evidence, EvidenceMap
    from release.card.serving import serving_table
    from release.kinds import kind_named

    path = tmp_path / LAUNCHER
    path.write_text(PER_RANK.read_text())
    launcher = load_launcher(path, LAUNCHER)
    assert launcher.launch_order == ["worker 1", "worker 2", "worker 3", "head 0"]
    assert launcher.model == TARGET and launcher.spec_config is not None
    emap = EvidenceMap(current=None, launcher=LAUNCHER, kind=kind_named("dflash2-drafter"))
    problems: list = []
    table, order = serving_table(emap, Evidence(launchers={LAUNCHER: launcher}), problems)
    assert problems == [] and table is not None and order is not None
    rows = dict(table.rows)
    assert rows["`--port`"] == "rank 0: `8000`; ranks 1, 2, 3: not given"
    assert rows["`--served-model-name`"] == "rank 0: `glm-5.3-flash`; ranks 1, 2, 3: not given"
    assert rows["`--tensor-parallel-size`"] == "`4`" and "`--node-rank`" not in rows and "`--headless`" not in rows
    assert list(rows)[:3] == ["`--host`", "`--port`", "`--served-model-name`"]  # the launcher's order
    assert order.markdown() == "**Launch order:** workers first (ranks 1, 2, 3), head last (rank 0)"


def test_a_rank_known_only_at_run_time_is_one_line_naming_it() -> None:
    text = '#!/usr/bin/env bash\nRANK="$1"\nvllm serve m --nnodes 2 --node-rank "$RANK" --tensor-parallel-size 2\n'
    with pytest.raises(
        LauncherError, match=r"^line 3: --node-rank \$1 is only known at run time, so the nodes cannot be told apart; "
    ):
        read_launcher(text)


def test_paths_are_bounded() -> None:
    cases = "".join(f'case "$(hostname)" in a{n}) A{n}=1 ;; *) A{n}=2 ;; esac\n' for n in range(7))  # 2**7 paths
    with pytest.raises(LauncherError, match=r"^line 7: more than 64 paths through the script"):
        read_launcher(cases + "vllm serve m\n")
