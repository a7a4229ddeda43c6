"""A corpus of bad inputs, each run end to end through `hf-release build` on a private copy of the example.

Every case must give the documented exit code (1: a check failed, 2: the spec or a path is wrong), one
stderr line per problem naming the file and the reason, no traceback, and no write outside dist/ —
where a failed build leaves no dist/v5 behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.checks.helpers import LAUNCHER, SPEC_CONFIG, safetensors_bytes, valid_header
from tests.helpers import cli, edit, problem_lines

WEIGHTS = "model.safetensors"
CHAMPION = "glm53-v5-champion.json"
LAST_FILE = 'source = "LICENSE"\nrole = "license"\n'
HEAD_LINE = '    serve 0 "$HEAD_ADDR" 2>&1 | tee "$LOG_DIR/head-rank0.log"\n'


# --- what a case does to the copy, and what it must produce ---------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    mutate: Callable[[Path], None]  # gets the copy's spec folder (tmp/artifacts/v5)
    exit_code: int
    lines: list[tuple[str, str]]  # one (file, reason) per expected stderr line
    argv: list[str] = field(default_factory=lambda: ["build", "v5"])


def add_file(root: Path, entry: str) -> None:
    """Append a [[files]] entry after the example's last one (before the [card] section)."""
    edit(root / "release.toml", LAST_FILE, LAST_FILE + "\n[[files]]\n" + entry.strip() + "\n")


def replace_weights(content: bytes) -> Callable[[Path], None]:
    return lambda root: (root / WEIGHTS).write_bytes(content)


def rewrite_weights(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        path = root / WEIGHTS
        path.write_bytes(change(path.read_bytes()))

    return mutate


def with_header_length(length: int) -> Callable[[bytes], bytes]:
    return lambda raw: struct.pack("<Q", length) + raw[8:]


def two_tensors(b_offsets: list[int], data: int) -> bytes:
    header, _ = valid_header(a=("BF16", [4]), b=("BF16", [4]))
    header["b"]["data_offsets"] = b_offsets
    return safetensors_bytes(header, data)


def tensor_with(**changes: Any) -> bytes:
    header, size = valid_header(a=("BF16", [4]))
    header["a"].update(changes)
    return safetensors_bytes(header, size)


def metadata(meta: dict[str, Any] | None) -> bytes:
    header, size = valid_header(a=("BF16", [4]))
    if meta is None:
        del header["__metadata__"]
    else:
        header["__metadata__"] = meta
    return safetensors_bytes(header, size)


def replace_in(name: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda root: edit(root / name, old, new)


def overwrite(name: str, content: str | bytes) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        path = root / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    return mutate


def change_json(name: str, change: Callable[[Any], None]) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        data = json.loads((root / name).read_text())
        change(data)
        (root / name).write_text(json.dumps(data, indent=2))

    return mutate


def both(*mutations: Callable[[Path], None]) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        for m in mutations:
            m(root)

    return mutate


def symlink(name: str, target: Callable[[Path], Path]) -> Callable[[Path], None]:
    return lambda root: (root / name).symlink_to(target(root))


def outside_file(root: Path) -> Path:
    path = root.parent.parent / "outside.txt"  # tmp/outside.txt, beside artifacts/
    path.write_text("not part of the release\n")
    return path


SPEC = "release.toml"
DUP = '{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}'

CASES = [
    # --- safetensors (exit 1) ---------------------------------------------------------------------------
    Case("weights-truncated", rewrite_weights(lambda raw: raw[:-100]), 1, [(WEIGHTS, "file not fully covered")]),
    Case("weights-empty", replace_weights(b""), 1, [(WEIGHTS, "header too small")]),
    Case("weights-shorter-than-prefix", replace_weights(b"\x08\x00\x00\x00"), 1, [(WEIGHTS, "header too small")]),
    Case(
        "weights-header-length-past-end",
        rewrite_weights(lambda raw: with_header_length(len(raw) + 4096)(raw)),
        1,
        [(WEIGHTS, "invalid header length")],
    ),
    Case(
        "weights-header-over-100MB",
        rewrite_weights(with_header_length(100_000_008)),
        1,
        [(WEIGHTS, "header too large")],
    ),
    Case(
        "weights-overlapping-offsets",
        replace_weights(two_tensors([4, 12], 12)),
        1,
        [(WEIGHTS, "invalid offset for tensor `b`")],
    ),
    Case(
        "weights-hole-in-offsets",
        replace_weights(two_tensors([16, 24], 24)),
        1,
        [(WEIGHTS, "invalid offset for tensor `b`")],
    ),
    Case(
        "weights-size-not-shape",
        replace_weights(tensor_with(shape=[5])),
        1,
        [(WEIGHTS, "invalid shape, data type, or offset")],
    ),
    Case("weights-unknown-dtype", replace_weights(tensor_with(dtype="BF15")), 1, [(WEIGHTS, "unknown variant `BF15`")]),
    Case(
        "weights-non-utf8-header",
        replace_weights(safetensors_bytes(b'{"a\xc3\x28":{}}')),
        1,
        [(WEIGHTS, "invalid UTF-8 in header")],
    ),
    Case(
        "weights-header-not-json",
        replace_weights(safetensors_bytes(b"{'a': 1}")),
        1,
        [(WEIGHTS, "invalid JSON in header")],
    ),
    Case(
        "weights-duplicate-tensor-names",
        replace_weights(safetensors_bytes(f'{{"__metadata__":{{"format":"pt"}},"a":{DUP},"a":{DUP}}}'.encode(), 8)),
        1,
        [(WEIGHTS, "tensor name 'a' appears twice in the header")],
    ),
    Case(
        "weights-non-string-metadata",
        replace_weights(metadata({"format": "pt", "epoch": 3})),
        1,
        [(WEIGHTS, "expected a string")],
    ),
    Case(
        "weights-no-format-metadata",
        replace_weights(metadata(None)),
        1,
        [(WEIGHTS, "__metadata__.format is None; transformers expects 'pt'")],
    ),
    Case(
        "weights-wrong-inventory",
        replace_weights(metadata({"format": "pt"})),
        1,
        [(WEIGHTS, "has 1 tensors, config.json implies 81: missing 81 (")],
    ),
    Case(
        "weights-wrong-dtype",
        replace_weights(safetensors_bytes(*valid_header(a=("F16", [4])))),
        1,
        [
            (WEIGHTS, "missing 81 (candidate_selector.hidden_projection.weight, "),
            (WEIGHTS, "1 tensors are not BF16 as config.json says (a)"),
        ],
    ),
    # --- config.json (exit 1) ---------------------------------------------------------------------------
    Case(
        "config-not-json",
        overwrite("config.json", '{"architectures": ["DFlash2DraftModel"],'),
        1,
        [("config.json", "is not valid JSON: ")],
    ),
    Case(
        "config-not-utf8",
        overwrite("config.json", b'{"model_type": "\xe9"}'),
        1,
        [("config.json", "is not UTF-8 text")],
    ),
    Case(
        "config-wrong-type",
        replace_in("config.json", '"hidden_size": 4096', '"hidden_size": "4096"'),
        1,
        [("config.json", "hidden_size: '4096' is not of type 'integer'")],
    ),
    Case(
        "config-missing-key",
        change_json("config.json", lambda c: c.pop("num_target_layers")),
        1,
        [("config.json", "'num_target_layers' is a required property")],
    ),
    Case(
        "config-layer-types-length",
        change_json("config.json", lambda c: c["layer_types"].pop()),
        1,
        [("config.json", "layer_types has 4 entries but num_hidden_layers is 5; they must match")],
    ),
    Case(
        "config-target-layer-out-of-range",
        change_json("config.json", lambda c: c["dflash_config"].update(target_layer_ids=[5, 47])),
        1,
        [("config.json", "target_layer_ids [47] are not below num_target_layers 47")],
    ),
    Case(
        "config-mask-token-out-of-vocab",
        change_json("config.json", lambda c: c["dflash_config"].update(mask_token_id=200_000)),
        1,
        [("config.json", "mask_token_id 200000 is not below vocab_size 154880")],
    ),
    Case(
        "config-nan",
        replace_in("config.json", '"initializer_range": 0.02', '"initializer_range": NaN'),
        1,
        [("config.json", "holds NaN, which is not a JSON number")],
    ),
    # --- results.tsv (exit 1) ---------------------------------------------------------------------------
    Case(
        "ledger-column-count",
        replace_in("results.tsv", "47.5\t3.17\t108.9\tdiscard", "47.5\t3.17\tdiscard"),
        1,
        [("results.tsv:3", "has 5 tab-separated columns, the header has 6")],
    ),
    Case(
        "ledger-unknown-status",
        replace_in("results.tsv", "108.5\tdiscard", "108.5\tpending"),
        1,
        [("results.tsv:4", "status 'pending' is not one of keep, discard, crash")],
    ),
    Case(
        "ledger-non-numeric-metric",
        replace_in("results.tsv", "47.0\t3.38", "47.0\t3.38x"),
        1,
        [("results.tsv:5", "accept_len '3.38x' is not a number, unlike the column's other values")],
    ),
    Case(
        "ledger-nan-metric",
        replace_in("results.tsv", "47.6\t3.17", "nan\t3.17"),
        1,
        [("results.tsv:6", "tok_s 'nan' is not a finite number")],
    ),
    Case(
        "ledger-empty",
        overwrite("results.tsv", ""),
        1,
        [("results.tsv", "is empty; it needs a header row and a baseline row")],
    ),
    Case(
        "ledger-missing-header-column",
        replace_in("results.tsv", "memory_gb\tstatus", "memory_gb\tstate"),
        1,
        [("results.tsv", "missing column(s) status")],
    ),
    Case(
        "ledger-no-kept-row",
        replace_in("results.tsv", "\tkeep\t", "\tdiscard\t"),
        1,
        [("results.tsv", "has no row with status 'keep'; the first kept row is the baseline")],
    ),
    # --- bench JSON (exit 1) ----------------------------------------------------------------------------
    Case(
        "bench-missing-metric",
        change_json(CHAMPION, lambda b: b["results"][0].pop("ttft_avg")),
        1,
        [(CHAMPION, "results[0]: 'ttft_avg' is a required property")],
    ),
    Case(
        "bench-nan",
        replace_in(CHAMPION, '"aggregate_tps": 51.09', '"aggregate_tps": NaN'),
        1,
        [(CHAMPION, "holds NaN")],
    ),
    Case(
        "bench-infinity",
        replace_in(CHAMPION, '"ttft_p99": 0.187', '"ttft_p99": Infinity'),
        1,
        [(CHAMPION, "holds Infinity")],
    ),
    Case(
        "bench-negative-infinity",
        replace_in(CHAMPION, '"ttft_p99": 0.187', '"ttft_p99": -Infinity'),
        1,
        [(CHAMPION, "holds -Infinity")],
    ),
    Case(
        "bench-wrong-type",
        change_json(CHAMPION, lambda b: b["results"][1].update(concurrency="1")),
        1,
        [(CHAMPION, "results[1].concurrency: '1' is not of type 'integer'")],
    ),
    Case(
        "bench-completed-over-requested",
        change_json(CHAMPION, lambda b: b["results"][0].update(completed_request_count=4)),
        1,
        [(CHAMPION, "results[0]: completed_request_count exceeds request_count")],
    ),
    Case(
        "bench-duplicate-key",
        replace_in(CHAMPION, '"engine": "vllm",', '"engine": "vllm", "engine": "vllm",'),
        1,
        [(CHAMPION, "key 'engine' appears twice")],
    ),
    # --- launcher (exit 1) ------------------------------------------------------------------------------
    Case("launcher-syntax-error", replace_in(LAUNCHER, "esac\n", "esca\n"), 1, [(LAUNCHER, "bash -n fails: ")]),
    Case(
        "launcher-spec-config-not-json",
        replace_in(LAUNCHER, SPEC_CONFIG, SPEC_CONFIG[:-1]),
        1,
        [(LAUNCHER, "line 82: --speculative-config is not a JSON object")],
    ),
    Case(
        "launcher-method-not-dflash",
        replace_in(LAUNCHER, '"method":"dflash"', '"method":"ngram"'),
        1,
        [(LAUNCHER, "method is 'ngram'; expected 'dflash'")],
    ),
    Case(
        "launcher-k-not-block-size-minus-one",
        replace_in(LAUNCHER, '"num_speculative_tokens":7', '"num_speculative_tokens":6'),
        1,
        [(LAUNCHER, "num_speculative_tokens 6 must be config.json's dflash_config.block_size − 1 = 7")],
    ),
    Case(
        "launcher-head-before-workers",
        both(
            replace_in(LAUNCHER, HEAD_LINE, ""),
            replace_in(LAUNCHER, "    for rank in 1 2 3; do\n", HEAD_LINE + "    for rank in 1 2 3; do\n"),
        ),
        1,
        [(LAUNCHER, "the head starts before a worker; start workers first, the head last")],
    ),
    Case(
        "launcher-no-vllm-serve",
        overwrite(LAUNCHER, "#!/usr/bin/env bash\necho 'serving elsewhere'\n"),
        1,
        [(LAUNCHER, "runs no `vllm serve`")],
    ),
    # --- expected digests (exit 1) ----------------------------------------------------------------------
    Case(
        "expect-sha256-mismatch",
        replace_in(SPEC, 'digests = ["md5"]\n', 'digests = ["md5"]\nexpect = { sha256 = "abcdef0123" }\n'),
        1,
        [(WEIGHTS, "the spec expects abcdef0123…; the file is not the one the spec names")],
    ),
    Case(
        "expect-md5-mismatch",
        replace_in(SPEC, 'digests = ["md5"]\n', 'digests = ["md5"]\nexpect = { md5 = "4a4fa6163e3f" }\n'),
        1,
        [(WEIGHTS, "the spec expects 4a4fa6163e3f…")],
    ),
    Case(
        "expect-md5-not-computed",
        replace_in(SPEC, 'digests = ["md5"]\n', 'expect = { md5 = "4a4fa6163e3f" }\n'),
        1,
        [(WEIGHTS, "expect.md5 is set but md5 was not computed; add 'md5' to digests")],
    ),
    # --- the spec and its paths (exit 2) ----------------------------------------------------------------
    Case(
        "spec-not-found",
        lambda root: None,
        2,
        [("artifacts/v6/release.toml", "release spec not found")],
        argv=["build", "v6"],
    ),
    Case("spec-not-toml", replace_in(SPEC, "[release]", "[release"), 2, [(SPEC, "not valid TOML")]),
    Case(
        "spec-not-utf8",
        lambda root: (root / SPEC).write_bytes((root / SPEC).read_bytes() + b"\n# \xff\n"),
        2,
        [(SPEC, "not UTF-8 text")],
    ),
    Case(
        "spec-integer-too-long",
        replace_in(SPEC, 'version = "v5"\n', 'version = "v5"\nbuild = ' + "9" * 5000 + "\n"),
        2,
        [
            (
                SPEC,
                "not valid TOML: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 "
                "digits; shorten",
            )
        ],
    ),
    Case(
        "spec-unknown-key",
        replace_in(SPEC, "check_shapes = false\n", "check_shapes = false\nchecksum = true\n"),
        2,
        [(f"{SPEC}:", "unknown key(s) checksum")],
    ),
    Case(
        "spec-missing-repo-id",
        replace_in(SPEC, 'repo_id = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"\n', ""),
        2,
        [(SPEC, "'repo_id' is required")],
    ),
    Case(
        "spec-bad-role",
        replace_in(SPEC, 'role = "ledger"', 'role = "ledgers"'),
        2,
        [(f"{SPEC}:", "'ledgers' is not one of")],
    ),
    Case(
        "spec-missing-file",
        lambda root: add_file(root, 'source = "NOTICE"\nrole = "extra"'),
        2,
        [("release.toml files[6] (NOTICE)", "no such file")],
    ),
    Case(
        "spec-source-escapes-root",
        lambda root: (outside_file(root), add_file(root, 'source = "../../outside.txt"\nrole = "extra"')),
        2,
        [("release.toml files[6] (../../outside.txt)", "escapes the spec's folder ('..')")],
    ),
    Case(
        "spec-glob-escapes-root",
        lambda root: (
            outside_file(root),
            add_file(root, 'source = "../../*.txt"\nrole = "extra"\npath_in_repo = "x/"'),
        ),
        2,
        [("release.toml files[6] (../../*.txt)", "escapes the spec's folder ('..')")],
    ),
    Case(
        "spec-symlink-outside",
        both(symlink("notes.txt", outside_file), lambda root: add_file(root, 'source = "notes.txt"\nrole = "extra"')),
        2,
        [("release.toml files[6] (notes.txt)", "outside the spec's folder")],
    ),
    Case(
        "spec-dangling-symlink",
        both(
            symlink("notes.txt", lambda root: root / "gone.txt"),
            lambda root: add_file(root, 'source = "notes.txt"\nrole = "extra"'),
        ),
        2,
        [("release.toml files[6] (notes.txt)", "is a dangling symlink")],
    ),
    Case(
        "spec-symlink-loop",
        both(
            symlink("notes.txt", lambda root: root / "notes.txt"),
            lambda root: add_file(root, 'source = "notes.txt"\nrole = "extra"'),
        ),
        2,
        [("release.toml files[6] (notes.txt)", "is a symlink loop")],
    ),
    Case(
        "spec-folder-named-like-the-manifest",
        lambda root: add_file(root, 'source = "LICENSE"\nrole = "extra"\npath_in_repo = "Release.JSON/LICENSE"'),
        2,
        [("release.toml files[6] (LICENSE)", "lies in a folder 'Release.JSON', named like release.json")],
    ),
    Case(
        "spec-path-too-long",
        lambda root: add_file(root, f'source = "LICENSE"\nrole = "extra"\npath_in_repo = "{"d/" * 750}LICENSE"'),
        2,
        [("release.toml files[6] (LICENSE)", "the Hub refuses long paths at commit")],
    ),
    Case(
        "spec-folder-as-source",
        lambda root: ((root / "extras").mkdir(), add_file(root, 'source = "extras"\nrole = "extra"')),
        2,
        [("release.toml files[6] (extras)", "is a folder")],
    ),
    Case(
        "spec-same-path-in-repo",
        lambda root: add_file(root, 'source = "LICENSE"\nrole = "extra"\npath_in_repo = "config.json"'),
        2,
        [("release.toml files[6] (LICENSE)", "path_in_repo 'config.json' is also given to")],
    ),
    Case(
        "spec-absolute-path-in-repo",
        replace_in(SPEC, 'source = "LICENSE"\n', 'source = "LICENSE"\npath_in_repo = "/LICENSE"\n'),
        2,
        [("release.toml files[5] (LICENSE)", "path_in_repo '/LICENSE' is absolute")],
    ),
    Case(
        "spec-dotdot-path-in-repo",
        replace_in(SPEC, 'source = "LICENSE"\n', 'source = "LICENSE"\npath_in_repo = "docs/../../LICENSE"\n'),
        2,
        [("release.toml files[5] (LICENSE)", "contains '..' or '.'")],
    ),
    Case(
        "spec-reserved-path-in-repo",
        replace_in(SPEC, 'source = "LICENSE"\n', 'source = "LICENSE"\npath_in_repo = "README.md"\n'),
        2,
        [("release.toml files[5] (LICENSE)", "is written by hf-release itself")],
    ),
    Case(
        "spec-glob-path-in-repo-not-a-folder",
        replace_in(SPEC, 'source = "glm53-v*.json"\n', 'source = "glm53-v*.json"\npath_in_repo = "bench"\n'),
        2,
        [("release.toml files[4] (glm53-v*.json)", "must be a folder ending in '/'")],
    ),
    Case(
        "spec-file-and-folder-one-name",
        lambda root: add_file(root, 'source = "LICENSE"\nrole = "extra"\npath_in_repo = "config.json/LICENSE"'),
        2,
        [("release.toml files[6] (LICENSE)", "needs 'config.json' to be a folder")],
    ),
]


# --- running a case -------------------------------------------------------------------------------------


def folder_state(top: Path) -> dict[str, Any]:
    """Every entry under `top` except dist/: kind, mode, size, mtime and content digest (ctime moves
    with hard links)."""
    state: dict[str, Any] = {}
    for folder, dirs, files in os.walk(top):
        rel = Path(folder).relative_to(top)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d != "dist"]
        for name in dirs + files:
            path = Path(folder) / name
            st = path.lstat()
            if path.is_symlink():
                state[str(rel / name)] = ("link", os.readlink(path))
            elif path.is_dir():
                state[str(rel / name)] = ("dir", st.st_mode)
            else:
                state[str(rel / name)] = (
                    "file",
                    st.st_mode,
                    st.st_size,
                    st.st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
    return state


def assert_problem_lines(err: str, expected: list[tuple[str, str]]) -> None:
    lines = problem_lines(err)
    assert len(lines) == len(expected), f"want {len(expected)} problem line(s), got:\n{err}"
    unmatched = list(lines)
    for file, reason in expected:
        hit = next(
            (
                line
                for line in unmatched
                if ": " in line and file in line.split(": ", 1)[0] and reason in line.split(": ", 1)[1]
            ),
            None,
        )
        assert hit is not None, f"no line names {file!r} with {reason!r}:\n{err}"
        unmatched.remove(hit)


@pytest.fixture
def workspace(example: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/ holding artifacts/v5 (the example) as the working directory; returns the spec folder."""
    monkeypatch.chdir(example.parent.parent.parent)
    return example.parent


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = workspace.parent.parent
    case.mutate(workspace)
    before = folder_state(top)

    code, out, err = cli(capsys, *case.argv)

    assert code == case.exit_code, err
    assert "Traceback" not in out + err
    assert out == ""
    assert_problem_lines(err, case.lines)
    assert folder_state(top) == before, "the build wrote outside dist/"
    assert not (top / "dist" / "v5").exists()
    assert not (top / "dist").exists() or list((top / "dist").iterdir()) == [], "a failed build left staging behind"


def test_corpus_is_large_and_covers_both_exit_codes() -> None:
    assert len(CASES) >= 30
    assert {c.exit_code for c in CASES} == {1, 2}
    assert len({c.id for c in CASES}) == len(CASES)


def test_the_unchanged_example_builds(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The harness itself: with no mutation the same run succeeds, so the failures above are the inputs'."""
    top = workspace.parent.parent
    before = folder_state(top)
    code, out, err = cli(capsys, "build", "v5")
    assert code == 0, err
    assert "Traceback" not in out + err
    assert "built spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark@v5" in out
    assert (top / "dist" / "v5" / "release.json").is_file()
    assert folder_state(top) == before


def test_many_problems_in_different_files_are_reported_in_one_run(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rewrite_weights(lambda raw: raw[:-1])(workspace)
    replace_in("results.tsv", "108.5\tdiscard", "108.5\tpending")(workspace)
    replace_in(CHAMPION, '"aggregate_tps": 51.09', '"aggregate_tps": NaN')(workspace)
    replace_in(LAUNCHER, "esac\n", "esca\n")(workspace)
    change_json("config.json", lambda c: c["layer_types"].pop())(workspace)
    change_json("glm53-v5-recheck-3-stock.json", lambda b: b["metadata"].pop("engine"))(workspace)

    code, out, err = cli(capsys, "build", "v5")

    assert code == 1
    assert "Traceback" not in out + err
    assert_problem_lines(
        err,
        [
            (WEIGHTS, "file not fully covered"),
            ("results.tsv:4", "status 'pending'"),
            (CHAMPION, "holds NaN"),
            (LAUNCHER, "bash -n fails"),
            ("config.json", "layer_types has 4 entries"),
            ("glm53-v5-recheck-3-stock.json", "metadata: 'engine' is a required property"),
        ],
    )


def test_every_spec_path_problem_is_reported_in_one_run(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    add_file(workspace, 'source = "NOTICE"\nrole = "extra"')
    add_file(workspace, 'source = "LICENSE"\nrole = "extra"\npath_in_repo = "../LICENSE"')
    add_file(workspace, 'source = "config.json"\nrole = "extra"\npath_in_repo = "release.json"')
    code, out, err = cli(capsys, "build", "v5")
    assert code == 2
    assert "Traceback" not in out + err
    assert_problem_lines(
        err,
        [
            ("release.toml files[6] (config.json)", "is written by hf-release itself"),
            ("release.toml files[7] (LICENSE)", "contains '..' or '.'"),
            ("release.toml files[8] (NOTICE)", "no such file"),
        ],
    )


def test_json_format_reports_the_same_problems(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replace_in("results.tsv", "108.5\tdiscard", "108.5\tpending")(workspace)
    replace_in(CHAMPION, '"aggregate_tps": 51.09', '"aggregate_tps": NaN')(workspace)
    code, out, err = cli(capsys, "build", "v5", "--format", "json")
    assert code == 1
    document = json.loads(out)
    assert document["ok"] is False and document["exit_code"] == 1 and document["error"] == "check-failed"
    assert [f"{p['file']}: {p['message']}" for p in document["problems"]] == err.splitlines()
    assert len(document["problems"]) == 2


def test_failed_build_removes_an_earlier_staging(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    top = workspace.parent.parent
    assert cli(capsys, "build", "v5")[0] == 0
    assert (top / "dist" / "v5").is_dir()
    replace_in("results.tsv", "108.5\tdiscard", "108.5\tpending")(workspace)
    code, _, err = cli(capsys, "build", "v5")
    assert code == 1, err
    assert not (top / "dist" / "v5").exists()
    assert not [p for p in (top / "dist").iterdir() if p.name.startswith(".v5.") and p.is_dir()], "staging left behind"
