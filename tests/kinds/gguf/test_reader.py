"""release/kinds/gguf/reader.py on the GGUF files gguf's GGUFWriter wrote (as llama.cpp's converter uses it), damaged
copies of them, and — when the gguf package is installed — every fact cross-checked against gguf.GGUFReader."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from release.kinds.gguf.reader import FILE_TYPES, GGML_TYPES, MAX_KV, GGUFFile, read_gguf, read_gguf_files
from tests.formats.helpers import FIXTURES, damage_every_file, only_problem

F32 = FIXTURES / "gguf" / "tiny-llama-17K-F32.gguf"
F16 = FIXTURES / "gguf" / "tiny-llama-17K-F16.gguf"
LLAMA_PARAMETERS = 16_976  # llama/model.safetensors, the model both files were converted from


def damaged(tmp_path: Path, source: Path = F16, name: str = "model.gguf") -> tuple[Path, bytearray]:
    data = bytearray(source.read_bytes())
    return tmp_path / name, data


def read_one(path: Path, data: bytes | bytearray) -> list[Any]:
    path.write_bytes(bytes(data))
    gguf, problems = read_gguf(path, path.name)
    return problems


def tensor_info_at(data: bytes | bytearray, name: str) -> int:
    """Where the tensor info of `name` starts after its name (n_dims), found by its length-prefixed name."""
    encoded = name.encode()
    at = bytes(data).index(struct.pack("<Q", len(encoded)) + encoded)
    return at + 8 + len(encoded)


def test_both_fixtures_read_with_their_facts() -> None:
    models, problems = read_gguf_files({"tiny-llama-17K-F32.gguf": F32, "tiny-llama-17K-F16.gguf": F16})
    assert problems == []
    by_type = {m.file_type_name: m for m in models}
    assert set(by_type) == {"F32", "F16"}
    for model in models:
        assert (model.architecture, model.name, model.context_length, model.embedding_length, model.block_count) == (
            "llama",
            "tiny-llama",
            128,
            16,
            2,
        )
        assert model.parameter_count == LLAMA_PARAMETERS
        assert model.chat_template and model.vocab_size == 384 and model.split_count == 1
    assert by_type["F32"].tensor_types == {"F32": 21} and by_type["F32"].file_type == 0
    assert by_type["F16"].tensor_types == {
        "F16": 16,
        "F32": 5,
    }  # the norms stay F32, as llama.cpp's converter keeps them


def test_the_header_keeps_only_lengths_of_long_arrays() -> None:
    gguf, problems = read_gguf(F32, "f32.gguf")
    assert problems == [] and gguf is not None
    assert gguf.version == 3 and gguf.alignment == 32 and gguf.data_offset == 9664
    assert gguf.array_lengths == {
        "tokenizer.ggml.tokens": 384,
        "tokenizer.ggml.token_type": 384,
        "tokenizer.ggml.merges": 123,
    }
    assert gguf.metadata["tokenizer.ggml.tokens"] is None
    last = gguf.tensors[-1]
    assert gguf.data_offset + last.offset + last.n_bytes == F32.stat().st_size


def test_a_cut_file_is_one_problem_naming_the_first_tensor_past_the_end(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    problem = only_problem(
        read_one(path, data[:40_000]),
        "model.gguf",
        "is cut short",
        "past the end of the file at 40,000",
        "copy the file again",
    )
    assert "blk.1.ffn_down.weight" in problem.message and "tensors after it" in problem.message


def test_a_file_cut_inside_its_vocabulary_is_one_problem(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    only_problem(read_one(path, data[:3_000]), "model.gguf", "is cut short", "tokenizer.ggml", "the file ends at 3,000")


@pytest.mark.parametrize(
    ("patch", "fragments"),
    [
        (lambda d: d.__setitem__(slice(0, 4), b"GGML"), ("is not a GGUF file", "b'GGML'", "convert_hf_to_gguf.py")),
        (lambda d: d.__setitem__(slice(4, 8), struct.pack("<I", 1)), ("GGUF version 1", "versions 2 and 3")),
        (lambda d: d.__setitem__(slice(4, 8), struct.pack("<I", 4)), ("GGUF version 4",)),
        (lambda d: d.__setitem__(slice(4, 8), struct.pack(">I", 3)), ("big-endian",)),
        (
            lambda d: d.__setitem__(slice(16, 24), struct.pack("<Q", 2**40)),
            ("claims 1,099,511,627,776 metadata key/values", f"({MAX_KV:,})"),
        ),
        (lambda d: d.__setitem__(slice(8, 16), struct.pack("<Q", 2**40)), ("claims 1,099,511,627,776 tensors",)),
        (
            lambda d: d.__setitem__(slice(16, 24), struct.pack("<Q", 29)),
            ("claims",),
        ),  # one key more: the tensor infos read as one
    ],
)
def test_a_damaged_header_is_one_problem(tmp_path: Path, patch: Any, fragments: tuple[str, ...]) -> None:
    path, data = damaged(tmp_path)
    patch(data)
    only_problem(read_one(path, data), "model.gguf", *fragments)


def test_an_empty_file_and_a_folder_are_one_problem_each(tmp_path: Path) -> None:
    (tmp_path / "empty.gguf").write_bytes(b"")
    (tmp_path / "dir.gguf").mkdir()
    assert "is cut short" in read_gguf(tmp_path / "empty.gguf", "empty.gguf")[1][0].message
    assert "not a regular file" in read_gguf(tmp_path / "dir.gguf", "dir.gguf")[1][0].message
    assert "is missing" in read_gguf(tmp_path / "nowhere.gguf", "nowhere.gguf")[1][0].message


def test_a_tensor_offset_past_the_end_is_one_problem(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    at = tensor_info_at(data, "output_norm.weight") + 4 + 8 + 4  # n_dims, one dim, type → offset
    data[at : at + 8] = struct.pack("<Q", 2**32)
    only_problem(
        read_one(path, data),
        "model.gguf",
        "tensor 'output_norm.weight' claims data at offset 4,294,967,296",
        "the header is damaged",
    )


def test_a_tensor_moved_off_llama_cpps_layout_is_one_problem(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    at = tensor_info_at(data, "output_norm.weight") + 4 + 8 + 4
    (offset,) = struct.unpack("<Q", data[at : at + 8])
    data[at : at + 8] = struct.pack("<Q", offset - 32)
    only_problem(
        read_one(path, data), "model.gguf", "tensor 'output_norm.weight' is at data offset", "llama.cpp expects"
    )


def test_an_unknown_ggml_type_and_a_duplicate_key_are_named(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    at = tensor_info_at(data, "output_norm.weight") + 4 + 8
    data[at : at + 4] = struct.pack("<I", 99)
    only_problem(read_one(path, data), "model.gguf", "tensor 'output_norm.weight' has ggml type 99")
    path, data = damaged(tmp_path)
    at = bytes(data).index(b"general.type")
    data[at : at + 12] = b"general.name"
    only_problem(read_one(path, data), "model.gguf", "has metadata key 'general.name' twice")


def test_an_array_claiming_more_items_than_the_file_holds_is_refused_unread(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    at = (
        bytes(data).index(b"tokenizer.ggml.tokens") + len("tokenizer.ggml.tokens") + 4 + 4
    )  # value type, item type → count
    data[at : at + 8] = struct.pack("<Q", 2**50)
    only_problem(read_one(path, data), "model.gguf", "array 'tokenizer.ggml.tokens' claims 1,125,899,906,842,624 items")


def test_a_string_claiming_gigabytes_is_refused_unread(tmp_path: Path) -> None:
    path, data = damaged(tmp_path)
    at = bytes(data).index(b"tokenizer.chat_template") + len("tokenizer.chat_template") + 4  # value type → length
    data[at : at + 8] = struct.pack("<Q", 2**40)
    only_problem(read_one(path, data), "model.gguf", "claims 1,099,511,627,776 bytes")


def test_split_parts_without_split_keys_and_a_missing_part_are_named(tmp_path: Path) -> None:
    parts = {f"m-0000{i}-of-00002.gguf": tmp_path / f"p{i}.gguf" for i in (1, 2)}
    for path in parts.values():
        path.write_bytes(F32.read_bytes())
    models, problems = read_gguf_files(parts)
    assert models == () and len(problems) == 2
    assert all("split.count None" in p.message and "gguf-split" in p.message for p in problems)
    models, problems = read_gguf_files({"m-00001-of-00002.gguf": parts["m-00001-of-00002.gguf"]})
    assert models == ()
    assert any(p.file == "m-00002-of-00002.gguf" and "is missing: part 2 of the 2 parts" in p.message for p in problems)


@pytest.mark.parametrize("fixture", ["gguf"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_gguf_files, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with the gguf package (llama.cpp's own Python reader and writer) ---


def assert_agrees_with_gguf_reader(ours: GGUFFile, path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(path)
    assert (ours.alignment, ours.data_offset) == (reader.alignment, reader.data_offset)
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    assert keys == list(ours.metadata)
    for key in keys:
        field = reader.fields[key]
        if field.types[0] == gguf.GGUFValueType.ARRAY:
            assert ours.array_lengths[key] == len(field.data), key
        else:
            assert ours.metadata[key] == field.contents(), key
    assert [t.name for t in reader.tensors] == [t.name for t in ours.tensors]
    for theirs, mine in zip(reader.tensors, ours.tensors, strict=True):
        assert (theirs.tensor_type.name, tuple(int(d) for d in theirs.shape), theirs.n_elements, theirs.n_bytes) == (
            mine.ggml_type,
            mine.shape,
            mine.n_elements,
            mine.n_bytes,
        )
        assert theirs.data_offset == ours.data_offset + mine.offset


@pytest.mark.parametrize("path", [F32, F16], ids=["F32", "F16"])
def test_every_fact_agrees_with_gguf_reader(path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    ours, problems = read_gguf(path, path.name)
    assert problems == [] and ours is not None
    assert_agrees_with_gguf_reader(ours, path)
    reader = gguf.GGUFReader(path)
    (model,), _ = read_gguf_files({path.name: path})
    assert model.parameter_count == sum(t.n_elements for t in reader.tensors)
    assert (
        model.file_type_name == gguf.LlamaFileType(reader.fields["general.file_type"].contents()).name.split("_", 1)[1]
    )


def test_the_type_tables_are_gguf_packages() -> None:
    gguf = pytest.importorskip("gguf")
    assert {t.value: (t.name, *gguf.GGML_QUANT_SIZES[t]) for t in gguf.GGMLQuantizationType} == GGML_TYPES
    names = {
        t.value: t.name.split("_", 1)[1] if t.name.startswith(("MOSTLY_", "ALL_")) else t.name
        for t in gguf.LlamaFileType
    }
    assert names == FILE_TYPES


def write_with_gguf(source: Path, dest: Path, *, extra_tokens: int = 0, **writer_args: Any) -> None:
    """Rewrite a fixture through gguf's GGUFReader → GGUFWriter (splitting it, or with a bigger vocabulary)."""
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(source)
    writer = gguf.GGUFWriter(dest, reader.fields["general.architecture"].contents(), **writer_args)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        value = field.contents()
        if key == "tokenizer.ggml.tokens":
            value = value + [f"<extra_{i}>" for i in range(extra_tokens)]
        if key == "tokenizer.ggml.token_type":
            value = value + [1] * extra_tokens
        sub = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, field.types[0], sub_type=sub)
    for tensor in reader.tensors:
        writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_a_split_model_written_by_gguf_is_read_as_one_set(tmp_path: Path) -> None:
    write_with_gguf(F16, tmp_path / "tiny.gguf", split_max_tensors=8)
    files = {p.name: p for p in sorted(tmp_path.glob("tiny-*.gguf"))}
    assert list(files) == ["tiny-00001-of-00003.gguf", "tiny-00002-of-00003.gguf", "tiny-00003-of-00003.gguf"]
    (model,), problems = read_gguf_files(files)
    assert problems == []
    assert model.split_count == 3 and model.files == tuple(files)
    assert model.parameter_count == LLAMA_PARAMETERS and model.tensor_types == {"F16": 16, "F32": 5}
    assert (model.architecture, model.context_length, model.chat_template) == ("llama", 128, True)
    for name, path in files.items():
        assert_agrees_with_gguf_reader(read_gguf(path, name)[0], path)  # type: ignore[arg-type]
    del files["tiny-00002-of-00003.gguf"]
    models, problems = read_gguf_files(files)
    assert models == ()
    assert [p.file for p in problems] == ["tiny-00002-of-00003.gguf"] and "is missing: part 2 of the 3" in problems[
        0
    ].message


def test_a_150k_token_vocabulary_is_skipped_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "big-vocab.gguf"
    write_with_gguf(F32, path, extra_tokens=150_000)
    tracemalloc.start()
    ours, problems = read_gguf(path, path.name)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problems == [] and ours is not None
    assert ours.array_lengths["tokenizer.ggml.tokens"] == 150_384
    assert peak < 4 * 1024 * 1024, f"peak {peak:,} bytes"  # the 1 MiB read window and the tensor infos
    assert_agrees_with_gguf_reader(ours, path)
