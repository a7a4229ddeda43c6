"""The safetensors check: layout validated by the library, plus what it lets through (duplicates, metadata)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from release.errors import CheckFailed
from release.formats.safetensors_header import TensorInfo, read_header
from release.formats.safetensors_layout import MAX_HEADER_BYTES as MAX_HEADER
from release.kinds.dflash2_drafter.inventory import expected_tensors, write_drafter
from tests.checks.helpers import refusal_messages, safetensors_bytes, tiny_config, valid_header
from tests.helpers import EXAMPLE

LABEL = "model.safetensors"


def header_problems_of(tmp_path: Path, content: bytes) -> list[str]:
    path = tmp_path / "w.safetensors"
    path.write_bytes(content)
    return refusal_messages(read_header, path, LABEL)


def test_example_weights_pass() -> None:
    header = read_header(EXAMPLE / "model.safetensors", LABEL)
    tensors, metadata = header.tensors, header.metadata
    assert metadata == {"format": "pt"}
    assert len(tensors) == 81
    assert set(tensors) == set(expected_tensors(json.loads((EXAMPLE / "config.json").read_text())))
    assert all(t.dtype == "BF16" for t in tensors.values())


def test_write_drafter_output_passes(tmp_path: Path) -> None:
    config = tiny_config()
    path = tmp_path / "model.safetensors"
    write_drafter(path, config, data="random", seed=3)
    tensors = read_header(path, LABEL).tensors
    want = expected_tensors(config)
    assert tensors == {name: TensorInfo(dtype, shape) for name, (shape, dtype) in want.items()}


def test_hand_built_valid_file_passes(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [2, 3]), b=("BF16", [4]))
    path = tmp_path / "w.safetensors"
    path.write_bytes(safetensors_bytes(header, size))
    tensors = read_header(path, LABEL).tensors
    assert tensors == {"a": TensorInfo("F32", (2, 3)), "b": TensorInfo("BF16", (4,))}


def test_empty_file(tmp_path: Path) -> None:
    [message] = header_problems_of(tmp_path, b"")
    assert message.startswith("is not a valid safetensors file") and "header too small" in message
    assert message.endswith("; re-save it with safetensors, or copy it again if it was cut short")


def test_shorter_than_the_length_prefix(tmp_path: Path) -> None:
    [message] = header_problems_of(tmp_path, b"\x10\x00\x00")
    assert "is not a valid safetensors file" in message and "header too small" in message


def test_truncated_data(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [4]))
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, size - 3))
    assert "is not a valid safetensors file" in message and "file not fully covered" in message


def test_truncated_example(tmp_path: Path) -> None:
    content = (EXAMPLE / "model.safetensors").read_bytes()
    [message] = header_problems_of(tmp_path, content[:-100])
    assert "file not fully covered" in message


def test_trailing_bytes_after_data(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [4]))
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, size + 8))
    assert "is not a valid safetensors file" in message and "not fully covered" in message


def test_header_length_past_end_of_file(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [4]))
    raw = safetensors_bytes(header, size)
    [message] = header_problems_of(tmp_path, struct.pack("<Q", len(raw) + 1000) + raw[8:])
    assert "invalid header length" in message


def test_header_claiming_more_than_100_mb(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [4]))
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, size, length=MAX_HEADER + 8))
    assert "header too large" in message


def test_overlapping_offsets(tmp_path: Path) -> None:
    header, _ = valid_header(a=("F32", [2]), b=("F32", [2]))
    header["b"]["data_offsets"] = [4, 12]  # a is [0, 8]
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, 12))
    assert "invalid offset for tensor `b`" in message


def test_hole_between_tensors(tmp_path: Path) -> None:
    header, _ = valid_header(a=("F32", [2]), b=("F32", [2]))
    header["b"]["data_offsets"] = [12, 20]  # a ends at 8: bytes 8..12 belong to nothing
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, 20))
    assert "invalid offset for tensor `b`" in message


def test_offsets_disagree_with_shape(tmp_path: Path) -> None:
    header, _ = valid_header(a=("F32", [2]))
    header["a"]["shape"] = [3]
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, 8))
    assert "invalid shape, data type, or offset for tensor" in message


def test_unknown_dtype(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [2]))
    header["a"]["dtype"] = "F7"
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, size))
    assert "is not a valid safetensors file" in message and "unknown variant `F7`" in message


def test_non_utf8_header(tmp_path: Path) -> None:
    [message] = header_problems_of(tmp_path, safetensors_bytes(b'{"\xff\xfe": 1}'))
    assert "invalid UTF-8 in header" in message


def test_header_not_json(tmp_path: Path) -> None:
    [message] = header_problems_of(tmp_path, safetensors_bytes(b"{not json"))
    assert "invalid JSON in header" in message


def test_header_is_a_json_array(tmp_path: Path) -> None:
    [message] = header_problems_of(tmp_path, safetensors_bytes(b"[]"))
    assert "invalid JSON in header" in message and "sequence" in message


def test_duplicate_tensor_names(tmp_path: Path) -> None:
    entry = '{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    raw = f'{{"__metadata__":{{"format":"pt"}},"a":{entry},"a":{entry}}}'.encode()
    assert header_problems_of(tmp_path, safetensors_bytes(raw, 4)) == [
        "tensor name 'a' appears twice in the header; loaders keep only one, so re-save with unique names"
    ]


def test_duplicate_metadata_key_is_not_called_a_tensor(tmp_path: Path) -> None:
    raw = b'{"__metadata__":{"format":"pt","format":"pt"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    assert header_problems_of(tmp_path, safetensors_bytes(raw, 4)) == [
        "__metadata__ key 'format' appears twice in the header; re-save with one value per key"
    ]


def test_non_string_metadata(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [1]))
    header["__metadata__"]["step"] = 3
    [message] = header_problems_of(tmp_path, safetensors_bytes(header, size))
    assert "is not a valid safetensors file" in message and "expected a string" in message


def test_metadata_without_format_pt(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [1]))
    del header["__metadata__"]
    assert header_problems_of(tmp_path, safetensors_bytes(header, size)) == [
        "__metadata__.format is None; transformers expects 'pt', so re-save with metadata={'format': 'pt'}"
    ]


def test_metadata_format_tf(tmp_path: Path) -> None:
    header, size = valid_header(a=("F32", [1]))
    header["__metadata__"]["format"] = "tf"
    assert header_problems_of(tmp_path, safetensors_bytes(header, size)) == [
        "__metadata__.format is 'tf'; transformers expects 'pt', so re-save with metadata={'format': 'pt'}"
    ]


def test_a_folder_is_not_safetensors(tmp_path: Path) -> None:
    with pytest.raises(CheckFailed) as exc:
        read_header(tmp_path, LABEL)
    [problem] = exc.value.problems
    assert problem.file == LABEL and "safetensors" in problem.message
