"""release/formats/safetensors_header.py against the safetensors library (a dependency of hf-release): the same
tensors on every library-written fixture, and each damage the library refuses refused here too, in one line."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from huggingface_hub import split_state_dict_into_shards_factory
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from release.formats.safetensors_header import read_header, read_safetensors_header, read_weights
from tests.formats.helpers import FIXTURES, only_problem

ALL = sorted(FIXTURES.rglob("*.safetensors"))


@pytest.mark.parametrize("path", ALL, ids=[p.relative_to(FIXTURES).as_posix() for p in ALL])
def test_every_fixture_reads_as_the_safetensors_library_reads_it(path: Path) -> None:
    header, problems = read_safetensors_header(path, path.name)
    assert problems == [] and header is not None
    with safe_open(path, framework="np") as f:
        assert set(header.tensors) == set(f.keys())
        for name in f.keys():
            tensor = f.get_slice(name)
            assert (header.tensors[name].dtype, list(header.tensors[name].shape)) == (
                tensor.get_dtype(),
                tensor.get_shape(),
            )
        assert header.metadata == f.metadata()


@pytest.mark.parametrize("path", ALL, ids=[p.relative_to(FIXTURES).as_posix() for p in ALL])
def test_the_check_and_the_format_readers_read_one_header(path: Path) -> None:
    """check-weights (the library's words) and the format readers (their own) share one reader and one header type."""
    assert read_header(path, path.name, weights_format=None) == read_safetensors_header(path, path.name)[0]


def test_timm_writes_no_metadata_and_that_is_not_refused() -> None:
    header, problems = read_safetensors_header(FIXTURES / "timm" / "model.safetensors", "model.safetensors")
    assert problems == [] and header is not None and header.metadata is None
    assert header.parameter_count == 207_778


def write_safetensors(path: Path, header: dict[str, Any], data: bytes, *, length: int | None = None) -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)


GOOD = {
    "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    "b": {"dtype": "F16", "shape": [2], "data_offsets": [8, 12]},
}


@pytest.mark.parametrize(
    ("header", "data", "length", "fragment"),
    [
        (GOOD, b"\0" * 10, None, "is cut short: its tensors need 12 bytes of data but the file holds 10"),
        (GOOD, b"\0" * 12, 10**6, "is cut short: its header claims 1,000,000 bytes"),
        (GOOD, b"\0" * 12, 200_000_000, "above the library's limit of 100,000,000"),
        (GOOD, b"\0" * 14, None, "2 bytes after the last tensor are not covered"),
        (
            {**GOOD, "b": {**GOOD["b"], "data_offsets": [10, 14]}},
            b"\0" * 14,
            None,
            "tensor 'b' starts at 10, leaving a hole",
        ),
        (
            {**GOOD, "b": {**GOOD["b"], "data_offsets": [6, 10]}},
            b"\0" * 10,
            None,
            "tensor 'b' overlaps the tensor before it",
        ),
        (
            {**GOOD, "b": {**GOOD["b"], "shape": [3]}},
            b"\0" * 12,
            None,
            "tensor 'b' (F16 [3]) needs 6 bytes but its data_offsets span 4",
        ),
        (
            {**GOOD, "b": {**GOOD["b"], "dtype": "F12"}},
            b"\0" * 12,
            None,
            "dtype 'F12', which safetensors does not define",
        ),
        (
            {**GOOD, "b": {"dtype": "F16", "shape": [2]}},
            b"\0" * 12,
            None,
            "tensor 'b' is not {dtype, shape, data_offsets}",
        ),
        ({**GOOD, "b": {**GOOD["b"], "shape": [-2]}}, b"\0" * 12, None, "has shape [-2], not a list of sizes"),
        ({**GOOD, "__metadata__": {"format": 1}}, b"\0" * 12, None, "__metadata__ must map strings to strings"),
    ],
)
def test_each_damage_the_library_refuses_is_one_problem(
    tmp_path: Path, header: dict[str, Any], data: bytes, length: int | None, fragment: str
) -> None:
    path = tmp_path / "model.safetensors"
    write_safetensors(path, header, data, length=length)
    with pytest.raises(SafetensorError):
        with safe_open(path, framework="np") as f:
            list(f.keys())
    only_problem(read_safetensors_header(path, "model.safetensors")[1], "model.safetensors", fragment)


def test_an_extra_key_in_a_tensor_entry_is_accepted_as_the_library_accepts_it(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    write_safetensors(path, {**GOOD, "b": {**GOOD["b"], "extra": 1}}, b"\0" * 12)
    with safe_open(path, framework="np") as f:
        assert sorted(f.keys()) == ["a", "b"]
    header, problems = read_safetensors_header(path, "model.safetensors")
    assert problems == [] and header is not None and sorted(header.tensors) == ["a", "b"]


def test_duplicate_names_the_library_lets_through_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    raw = (
        b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
        b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}'
    )
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 4)
    with safe_open(path, framework="np") as f:
        assert list(f.keys()) == ["a"]  # the library keeps one, silently
    only_problem(read_safetensors_header(path, "model.safetensors")[1], "model.safetensors", "names 'a' twice")


def test_a_short_file_and_bad_json_are_one_problem_each(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\1\0\0")
    only_problem(read_safetensors_header(path, "w")[1], "w", "fewer than the 8-byte header length")
    path.write_bytes(struct.pack("<Q", 5) + b"{nope")
    only_problem(read_safetensors_header(path, "w")[1], "w", "its header is not JSON")
    path.write_bytes(struct.pack("<Q", 2) + b"\xff\xfe")
    only_problem(read_safetensors_header(path, "w")[1], "w", "its header is not UTF-8")


def sharded(folder: Path, stem: str = "model") -> dict[str, Path]:
    """Shards and index as huggingface_hub's save_torch_state_dict writes them (its splitter, safetensors' writer)."""
    state = {f"layers.{i}.weight": np.full((64, 64), i, dtype=np.float32) for i in range(6)}
    split = split_state_dict_into_shards_factory(
        state,
        get_storage_size=lambda t: t.nbytes,
        max_shard_size=40_000,
        filename_pattern=stem + "{suffix}.safetensors",
    )
    assert split.is_sharded
    folder.mkdir(parents=True, exist_ok=True)
    for filename, names in split.filename_to_tensors.items():
        save_file({n: state[n] for n in names}, str(folder / filename), metadata={"format": "pt"})
    index = {"metadata": split.metadata, "weight_map": split.tensor_to_filename}
    (folder / f"{stem}.safetensors.index.json").write_text(json.dumps(index))
    return {f"unet/{p.name}": p for p in folder.iterdir()}


def test_sharded_weights_are_read_as_one_set(tmp_path: Path) -> None:
    files = sharded(tmp_path / "unet", "diffusion_pytorch_model")
    weights, problems = read_weights(files, "unet", ("diffusion_pytorch_model", "model"))
    assert problems == [] and weights is not None
    assert weights.index == "unet/diffusion_pytorch_model.safetensors.index.json" and len(weights.files) == 3
    assert weights.parameter_count == 6 * 64 * 64 and weights.dtype == "F32"


def test_a_shard_missing_from_the_release_and_a_tensor_in_the_wrong_shard_are_named(tmp_path: Path) -> None:
    files = sharded(tmp_path / "unet")
    index_name = "unet/model.safetensors.index.json"
    gone = sorted(n for n in files if n.endswith(".safetensors"))[0]
    weights, problems = read_weights({n: p for n, p in files.items() if n != gone}, "unet")
    assert weights is None
    only_problem(problems, index_name, f"names shard '{gone.split('/')[1]}', which is not in the release")
    index = json.loads(files[index_name].read_text())
    index["weight_map"]["layers.0.weight"] = index["weight_map"]["layers.5.weight"]
    files[index_name].write_text(json.dumps(index))
    weights, problems = read_weights(files, "unet")
    assert weights is None and {p.file for p in problems} == {index_name}
    assert any("does not map 1 tensors" in p.message and "'layers.0.weight'" in p.message for p in problems)


def test_no_weights_is_no_problem_here_the_caller_words_it() -> None:
    assert read_weights({"unet/config.json": Path("x")}, "unet", ("diffusion_pytorch_model",)) == (None, [])
