"""Property tests: whatever bytes, JSON or text a parser is given, it returns or raises a ReleaseError.

A ReleaseError is what the CLI turns into one line per problem and an exit code; anything else escaping
a parser is a traceback in front of the user.
"""

from __future__ import annotations

import copy
import json
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from release.checks.bench import load_bench
from release.checks.launcher import load_launcher
from release.checks.ledger import load_ledger
from release.errors import InputError, ReleaseError
from release.formats.safetensors_header import read_header
from release.spec import load_spec
from release.staged.manifest import Manifest, ManifestFile
from tests.checks.helpers import LAUNCHER, REPO_ID, load_config, safetensors_bytes, valid_header
from tests.helpers import EXAMPLE, write_file

SETTINGS = settings(deadline=None, max_examples=60, database=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(SETTINGS, max_examples=30)  # bash -n is a subprocess per example


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One folder reused by every example (function-scoped tmp_path does not mix with @given)."""
    folder = tmp_path_factory.mktemp("properties")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def returns_or_release_error(call: Any, *args: Any) -> Any:
    """Run a parser; a ReleaseError must carry problems that each name a file and say something."""
    try:
        return call(*args)
    except ReleaseError as exc:
        assert exc.problems, "a ReleaseError without problems prints nothing"
        for problem in exc.problems:
            assert problem.file and problem.message and "\n" not in problem.file
        return exc


# --- strategies -----------------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """`document` with one to three values replaced by random JSON or deleted, at any depth."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        node = document
        while isinstance(node, (dict, list)) and node:
            key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
            child = node[key]
            if isinstance(child, (dict, list)) and child and draw(st.booleans()):
                node = child
                continue
            if draw(st.booleans()):
                node[key] = draw(json_values)
            else:
                del node[key]
            break
    return document


def json_texts(document: Any) -> st.SearchStrategy[str]:
    """JSON text: a mutated real document, random JSON, the document with a non-JSON token, or any text."""
    base = json.dumps(document)
    spliced = st.tuples(
        st.integers(0, len(base)), st.sampled_from(["NaN", "Infinity", "-Infinity", ",", '"a": 1,', "}", "[" * 50])
    ).map(lambda cut: base[: cut[0]] + cut[1] + base[cut[0] :])
    return st.one_of(mutated(document).map(json.dumps), json_values.map(json.dumps), spliced, st.text(max_size=60))


# --- safetensors ----------------------------------------------------------------------------------------

HEADER, DATA = valid_header(a=("BF16", [2, 3]), b=("F32", [4]))
dtypes = st.sampled_from(["BF16", "F16", "F32", "F64", "I8", "U8", "BOOL", "F8_E4M3", "F4", "Q4", ""])


@st.composite
def safetensors_files(draw: st.DrawFn) -> bytes:
    """Files near the format: a valid header with mutated fields, a wrong length prefix, missing or extra data."""
    header = draw(mutated(HEADER)) if draw(st.booleans()) else copy.deepcopy(HEADER)
    if isinstance(header, dict) and draw(st.booleans()):
        name = draw(st.sampled_from(["a", "b", "c"]))
        header[name] = {
            "dtype": draw(dtypes),
            "shape": draw(st.lists(st.integers(-1, 2**33), max_size=3)),
            "data_offsets": draw(st.lists(st.integers(-1, 2**65), min_size=0, max_size=3)),
        }
    raw = json.dumps(header).encode()
    data = DATA + draw(st.integers(-DATA, 16))
    length = draw(st.one_of(st.none(), st.integers(0, 2**64 - 1), st.integers(0, len(raw) + 16)))
    return safetensors_bytes(raw, data, length=length)


@SETTINGS
@given(content=st.one_of(st.binary(max_size=300), safetensors_files()))
@example(content=b"")
@example(content=safetensors_bytes(HEADER, DATA))
def test_read_header_never_raises_raw(scratch: Path, content: bytes) -> None:
    result = returns_or_release_error(read_header, write_file(scratch / "w.safetensors", content), "w.safetensors")
    if not isinstance(result, ReleaseError):
        tensors, metadata = result.tensors, result.metadata
        assert metadata.get("format") == "pt"
        assert all(isinstance(t.shape, tuple) for t in tensors.values())


# --- JSON artifacts -------------------------------------------------------------------------------------

CONFIG = json.loads((EXAMPLE / "config.json").read_text())
BENCH = json.loads((EXAMPLE / "glm53-v5-recheck-1-adapter.json").read_text())


@SETTINGS
@given(text=json_texts(CONFIG))
@example(text=json.dumps(CONFIG))
@example(text="[" * 3000)
def test_load_config_never_raises_raw(scratch: Path, text: str) -> None:
    result = returns_or_release_error(load_config, write_file(scratch / "config.json", text), "config.json")
    if not isinstance(result, ReleaseError):
        assert len(result.data["layer_types"]) == result.data["num_hidden_layers"]


@SETTINGS
@given(text=json_texts(BENCH))
@example(text=json.dumps(BENCH))
@example(text='{"results": ' + "{" * 3000)
def test_load_bench_never_raises_raw(scratch: Path, text: str) -> None:
    result = returns_or_release_error(load_bench, write_file(scratch / "bench.json", text), "bench.json")
    if not isinstance(result, ReleaseError):
        assert all(c["completed_request_count"] <= c["request_count"] for c in result.cells)


@SETTINGS
@given(content=st.binary(max_size=200))
def test_json_loaders_on_random_bytes(scratch: Path, content: bytes) -> None:
    path = write_file(scratch / "any.json", content)
    returns_or_release_error(load_config, path, "any.json")
    returns_or_release_error(load_bench, path, "any.json")


# --- the ledger -----------------------------------------------------------------------------------------

LEDGER_LINES = (EXAMPLE / "results.tsv").read_text().splitlines()
cells = st.one_of(
    st.sampled_from(
        ["keep", "discard", "crash", "baseline", "v5 baseline", "nan", "inf", "-1e3", "47.9", "ecfd8ea", "", " ", '"']
    ),
    st.text(max_size=8),
)
rows = st.one_of(st.lists(cells, min_size=6, max_size=6), st.lists(cells, max_size=8)).map("\t".join)


@st.composite
def edited_rows(draw: st.DrawFn) -> str:
    """A real ledger row with one or two cells replaced: it keeps the column count, so the cells get parsed."""
    row = draw(st.sampled_from(LEDGER_LINES[1:])).split("\t")
    for _ in range(draw(st.integers(1, 2))):
        row[draw(st.integers(0, len(row) - 1))] = draw(cells)
    return "\t".join(row)


@SETTINGS
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(rows, max_size=6).map(lambda rs: "\n".join([LEDGER_LINES[0], *rs])),
        st.lists(st.sampled_from(LEDGER_LINES) | rows, max_size=8).map("\n".join),
        st.lists(edited_rows(), min_size=1, max_size=4).map(lambda rs: "\n".join(LEDGER_LINES[:2] + rs)),
    )
)
@example(text="\n".join(LEDGER_LINES))
@example(text="\n".join([*LEDGER_LINES[:2], "x" * 140_000]))
def test_load_ledger_never_raises_raw(scratch: Path, text: str) -> None:
    result = returns_or_release_error(load_ledger, write_file(scratch / "results.tsv", text), "results.tsv")
    if not isinstance(result, ReleaseError):
        assert result.baseline is result.rows[0] and result.baseline.status == "keep"


@SETTINGS
@given(content=st.binary(max_size=200))
def test_load_ledger_on_random_bytes(scratch: Path, content: bytes) -> None:
    returns_or_release_error(load_ledger, write_file(scratch / "results.tsv", content), "results.tsv")


# --- the launcher ---------------------------------------------------------------------------------------

LAUNCHER_LINES = (EXAMPLE / LAUNCHER).read_text().splitlines()
shell_fragments = st.sampled_from(
    [
        "vllm serve m",
        "vllm serve m --headless --node-rank 1",
        "--speculative-config",
        '\'{"method":"dflash"}\'',
        f'--speculative-config \'{{"method":"dflash","model":"{REPO_ID}","num_speculative_tokens":7}}\'',
        "for r in 1 2; do",
        "done",
        'ssh h "x worker $r"',
        "serve() {",
        "}",
        "serve 0",
        "X=${Y:-1}",
        "export A=b",
        '"',
        "'",
        "\\",
        "$(",
        "&",
        "|",
        "#",
        "exec",
        "if true; then",
        "fi",
        "\t",
        "--speculative-config '{method: dflash}'",
        "--speculative-config '[1]'",
        "--speculative-config '" + "[" * 3000 + "'",
        '--speculative-config \'{"method":"dflash","num_speculative_tokens":NaN}\'',
    ]
)


SPEC_CONFIG_DICT = {"method": "dflash", "model": REPO_ID, "num_speculative_tokens": 7}
spec_configs = st.one_of(
    st.sampled_from(["{method: dflash}", "[1]", "[" * 3000, '{"method":"dflash","num_speculative_tokens":NaN}', ""]),
    json_values.map(json.dumps),
    mutated(SPEC_CONFIG_DICT).map(json.dumps),
).map(lambda text: text.replace("'", ""))  # keep the shell quoting balanced so bash -n passes and the reader runs


@FEW
@given(
    text=st.one_of(
        st.builds(
            "#!/usr/bin/env bash\nvllm serve m --speculative-config '{}' {}".format, spec_configs, shell_fragments
        ),
        st.text(max_size=80),
        st.lists(st.lists(shell_fragments, max_size=5).map(" ".join), max_size=6).map("\n".join),
        st.lists(st.sampled_from(LAUNCHER_LINES), max_size=40).map("\n".join),
    )
)
@example(text="\n".join(LAUNCHER_LINES))
@example(text="vllm serve m --speculative-config '" + "[" * 3000 + "'")
@example(text="vllm serve m --speculative-config '{method: dflash}'")
def test_load_launcher_never_raises_raw(scratch: Path, text: str) -> None:
    result = returns_or_release_error(load_launcher, write_file(scratch / LAUNCHER, text), LAUNCHER)
    if not isinstance(result, ReleaseError):
        # what a kind requires of the speculative config is the kind's rule (CheckLauncher); read, it is the flag's
        # JSON object
        raw = result.flags.get("--speculative-config")
        assert result.spec_config == (json.loads(raw) if raw is not None else None)


# --- the spec -------------------------------------------------------------------------------------------

SPEC_LINES = (EXAMPLE / "release.toml").read_text().splitlines()
toml_fragments = st.sampled_from(
    [
        "[release]",
        "[[files]]",
        "[card]",
        'repo_id = "a/b"',
        'version = "v1"',
        'source = "x"',
        'role = "weights"',
        "digests = []",
        'expect = { md5 = "abc" }',
        "check_shapes = 1",
        "x = [[[[1]]]]",
        "a.b.c = 1",
        "= 1",
        '"',
        "[",
        "y = 99999999999999999999999999",
        "z = 1979-05-27T07:32:00Z",
        "n = " + "9" * 4400,
        "deep = " + "[" * 3000,
        "d = 2026-02-30",
        "t = 25:61:00",
    ]
)


@st.composite
def edited_spec(draw: st.DrawFn) -> str:
    """The example spec with a few lines deleted, duplicated or replaced."""
    lines = list(SPEC_LINES)
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "replace"]))
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        else:
            lines[index] = draw(toml_fragments | st.text(max_size=20))
    return "\n".join(lines)


@SETTINGS
@given(
    content=st.one_of(
        st.binary(max_size=100),
        st.text(max_size=100),
        st.lists(toml_fragments, max_size=10).map("\n".join),
        edited_spec(),
    )
)
@example(content="\n".join(SPEC_LINES))
@example(content="deep = " + "[" * 3000)
@example(content="n = " + "9" * 4400)
def test_load_spec_never_raises_raw(scratch: Path, content: str | bytes) -> None:
    result = returns_or_release_error(load_spec, write_file(scratch / "release.toml", content))
    if isinstance(result, ReleaseError):
        assert isinstance(result, InputError)  # a bad spec is always exit 2
    else:
        assert result.files and result.repo_id and result.version.startswith("v")


# --- the manifest ---------------------------------------------------------------------------------------

MANIFEST = Manifest(
    repo_id=REPO_ID,
    version="v5",
    spec_sha256="0" * 64,
    files=(
        ManifestFile("model.safetensors", 47176, "a" * 64, "weights", md5="b" * 32),
        ManifestFile("README.md", 10, "c" * 64, "card", generated=True),
    ),
).as_dict()


@SETTINGS
@given(
    text=st.one_of(
        mutated(MANIFEST).map(json.dumps),
        st.dictionaries(st.text(max_size=8), json_values, max_size=5).map(json.dumps),
        st.binary(max_size=100),
    )
)
@example(text=json.dumps(MANIFEST))
def test_manifest_load_never_raises_raw(scratch: Path, text: str | bytes) -> None:
    result = returns_or_release_error(Manifest.load, write_file(scratch / "release.json", text))
    if not isinstance(result, ReleaseError):
        assert result.as_dict()["release_digest"] == result.release_digest


def _manifest_with(**file_changes: Any) -> str:
    manifest = copy.deepcopy(MANIFEST)
    next(f for f in manifest["files"] if f["path_in_repo"] == "model.safetensors").update(file_changes)
    return json.dumps(manifest)


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "null",
        '"release"',
        _manifest_with(size=float("inf")),
        _manifest_with(path_in_repo="\ud800"),
        "[" * 100_000,
        _manifest_with(path_in_repo="x\n" + "0" * 64 + "  model.safetensors"),
    ],
    ids=[
        "json-list",
        "json-null",
        "json-string",
        "size-infinity",
        "lone-surrogate",
        "nested-too-deeply",
        "newline-forges-sums",
    ],
)
def test_manifest_load_refuses_damaged_manifests(scratch: Path, text: str) -> None:
    result = returns_or_release_error(Manifest.load, write_file(scratch / "release.json", text))
    assert isinstance(result, InputError), f"a damaged manifest was accepted: {result!r}"
    assert all("release.json" in p.file for p in result.problems)


def test_manifest_load_on_a_folder(scratch: Path) -> None:
    result = returns_or_release_error(Manifest.load, scratch)
    assert isinstance(result, InputError), f"a folder was accepted as a manifest: {result!r}"


def test_strategies_reach_the_success_paths(scratch: Path) -> None:
    """The real files pass every parser, so the properties above also test the code after validation."""
    assert not isinstance(
        returns_or_release_error(
            read_header, write_file(scratch / "ok.safetensors", safetensors_bytes(HEADER, DATA)), "w"
        ),
        ReleaseError,
    )
    assert not isinstance(
        returns_or_release_error(load_config, write_file(scratch / "ok.json", json.dumps(CONFIG)), "c"), ReleaseError
    )
    assert not isinstance(
        returns_or_release_error(load_bench, write_file(scratch / "ok.json", json.dumps(BENCH)), "b"), ReleaseError
    )
    assert not isinstance(
        returns_or_release_error(Manifest.load, write_file(scratch / "ok.json", json.dumps(MANIFEST))), ReleaseError
    )
    assert struct.unpack("<Q", safetensors_bytes(HEADER, DATA)[:8])[0] % 8 == 0
