"""The DFlash2 tensor inventory (data) and the safetensors drafter writer."""

from __future__ import annotations

import copy
import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open

from release.kinds.dflash2_drafter import inventory
from release.kinds.dflash2_drafter.inventory import FULL_SIZE, expected_tensors, write_drafter
from tests.checks.helpers import real_config, tiny_config
from tests.helpers import EXAMPLE, ROOT

PER_LAYER = [
    "input_layernorm.weight",
    "post_attention_layernorm.weight",
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",
    "self_attn.o_proj.weight",
    "self_attn.q_norm.weight",
    "self_attn.k_norm.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "attention_conv.base_kernel",
    "attention_conv.kernel_projection.weight",
    "mlp_conv.base_kernel",
    "mlp_conv.kernel_projection.weight",
]
TOP_LEVEL = [
    "fc.weight",
    "hidden_norm.weight",
    "norm.weight",
    "candidate_selector.hidden_projection.weight",
    "candidate_selector.predecessor_codebook",
    "candidate_selector.successor_codebook",
]


def header_of(path: Path) -> tuple[int, dict[str, Any]]:
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return length, json.loads(f.read(length))


def check_file_matches(path: Path, config: dict[str, Any]) -> None:
    expected = expected_tensors(config)
    with safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "pt"}
        assert sorted(f.keys()) == sorted(expected)
        for name, (shape, dtype) in expected.items():
            tensor = f.get_slice(name)
            assert tuple(tensor.get_shape()) == shape, name
            assert tensor.get_dtype() == dtype, name


def test_real_config_has_the_81_published_tensor_names() -> None:
    names = set(expected_tensors(real_config()))
    wanted = {f"layers.{i}.{suffix}" for i in range(5) for suffix in PER_LAYER} | set(TOP_LEVEL)
    assert len(names) == 81
    assert names == wanted


def test_real_config_shapes_follow_the_config() -> None:
    config = real_config()
    tensors = expected_tensors(config)
    h = config["hidden_size"]
    assert tensors["fc.weight"] == ((h, 5 * h), "BF16")
    assert tensors["layers.4.self_attn.k_proj.weight"] == (
        (config["num_key_value_heads"] * config["head_dim"], h),
        "BF16",
    )
    assert tensors["candidate_selector.successor_codebook"] == ((config["vocab_size"], 256), "BF16")
    assert tensors["layers.0.mlp_conv.kernel_projection.weight"] == ((32, h), "BF16")


def test_full_size_sparse_file_is_exact_and_valid(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    write_drafter(path, real_config(), data="sparse", total_size=FULL_SIZE)
    assert path.stat().st_size == FULL_SIZE == 2_342_169_824
    length, header = header_of(path)
    assert length % 8 == 0
    # Offsets follow header order, contiguous from 0 (safe_open checks coverage too).
    offsets = [entry["data_offsets"] for key, entry in header.items() if key != "__metadata__"]
    assert offsets[0][0] == 0
    assert all(prev[1] == nxt[0] for prev, nxt in zip(offsets, offsets[1:], strict=False))
    check_file_matches(path, real_config())


def test_full_size_file_from_the_script(tmp_path: Path) -> None:
    path = tmp_path / "full.safetensors"
    subprocess.run(
        [sys.executable, str(ROOT / "artifacts" / "make_drafter.py"), "--full-size", str(path)],
        check=True,
        capture_output=True,
    )
    assert path.stat().st_size == FULL_SIZE
    check_file_matches(path, real_config())


def test_committed_drafter_is_reproducible(tmp_path: Path) -> None:
    fresh = tmp_path / "model.safetensors"
    subprocess.run(
        [sys.executable, str(ROOT / "artifacts" / "make_drafter.py"), "--out", str(fresh)],
        check=True,
        capture_output=True,
    )
    committed = EXAMPLE / "model.safetensors"
    assert fresh.read_bytes() == committed.read_bytes()
    assert committed.stat().st_size < 100_000
    check_file_matches(committed, tiny_config())


def test_random_data_is_finite_bf16_and_seeded(tmp_path: Path) -> None:
    config = tiny_config()
    paths = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        paths[name] = tmp_path / f"{name}.safetensors"
        write_drafter(paths[name], config, data="random", seed=seed)
    assert paths["a"].read_bytes() == paths["b"].read_bytes()
    assert paths["a"].read_bytes() != paths["c"].read_bytes()
    length, _ = header_of(paths["a"])
    raw = np.frombuffer(paths["a"].read_bytes()[8 + length :], dtype="<u2")
    exponents = (raw >> 7) & 0xFF
    assert exponents.min() >= 117 and exponents.max() <= 124  # no zero, subnormal, NaN or Inf


def test_chunked_writing_does_not_change_the_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tiny_config()
    whole, chunked = tmp_path / "whole.safetensors", tmp_path / "chunked.safetensors"
    write_drafter(whole, config, data="random", seed=3)
    monkeypatch.setattr(inventory, "_CHUNK_WORDS", 7)  # many chunks, ragged last one
    write_drafter(chunked, config, data="random", seed=3)
    assert whole.read_bytes() == chunked.read_bytes()


def test_total_size_pads_the_header_with_spaces(tmp_path: Path) -> None:
    plain, padded = tmp_path / "plain.safetensors", tmp_path / "padded.safetensors"
    write_drafter(plain, tiny_config(), data="sparse")
    write_drafter(padded, tiny_config(), data="sparse", total_size=plain.stat().st_size + 4096)
    assert padded.stat().st_size == plain.stat().st_size + 4096
    (length, _), (padded_length, _) = header_of(plain), header_of(padded)
    assert padded_length == length + 4096
    check_file_matches(padded, tiny_config())


@pytest.mark.parametrize("delta", [-8, 4], ids=["header-too-small", "misaligned"])
def test_impossible_total_size_raises(tmp_path: Path, delta: int) -> None:
    # The unpadded file's header is the JSON rounded up to 8: 8 bytes less cannot hold it.
    plain = tmp_path / "plain.safetensors"
    write_drafter(plain, tiny_config(), data="sparse")
    with pytest.raises(ValueError, match="impossible"):
        write_drafter(tmp_path / "x.safetensors", tiny_config(), data="sparse", total_size=plain.stat().st_size + delta)


@pytest.mark.parametrize(
    "path", ["head_dim", "dflash_config.selector_rank", "dflash_config.target_layer_ids", "num_hidden_layers"]
)
def test_missing_config_key_is_named(path: str) -> None:
    config = copy.deepcopy(real_config())
    *parents, leaf = path.split(".")
    node = config
    for part in parents:
        node = node[part]
    del node[leaf]
    with pytest.raises(ValueError, match=rf"'{path}' is missing"):
        expected_tensors(config)


@pytest.mark.parametrize(("key", "value"), [("hidden_size", True), ("hidden_size", "4096"), ("head_dim", -64)])
def test_non_integer_dimension_is_refused(key: str, value: object) -> None:
    config = real_config()
    config[key] = value
    with pytest.raises(ValueError, match=key):
        expected_tensors(config)


def test_len_of_a_non_list_is_refused() -> None:
    config = real_config()
    config["dflash_config"]["target_layer_ids"] = 5
    with pytest.raises(ValueError, match="must be a list"):
        expected_tensors(config)
