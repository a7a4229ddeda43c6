"""config.json: strict JSON, the DFlash2 schema, and the rules tying its fields together."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.checks.helpers import check_problems, load_config, real_config, refusal_messages
from tests.helpers import EXAMPLE, edit

LABEL = "config.json"


def config_problems_of(tmp_path: Path, config: dict[str, Any] | str | bytes) -> list[str]:
    path = tmp_path / "config.json"
    if isinstance(config, dict):
        path.write_text(json.dumps(config, indent=2))
    elif isinstance(config, str):
        path.write_text(config)
    else:
        path.write_bytes(config)
    return refusal_messages(load_config, path, LABEL)


def test_example_config_passes() -> None:
    config = load_config(EXAMPLE / "config.json", LABEL).data
    assert config["dflash_config"]["block_size"] == 8
    assert config["num_hidden_layers"] == len(config["layer_types"]) == 5


def test_schema_type_error(tmp_path: Path) -> None:
    config = real_config()
    config["hidden_size"] = "4096"
    assert config_problems_of(tmp_path, config) == ["hidden_size: '4096' is not of type 'integer'"]


def test_nested_schema_error_names_the_key_path(tmp_path: Path) -> None:
    config = real_config()
    config["dflash_config"]["target_layer_ids"][2] = -1
    assert config_problems_of(tmp_path, config) == [
        "dflash_config.target_layer_ids[2]: -1 is less than the minimum of 0"
    ]


def test_boolean_is_not_an_integer(tmp_path: Path) -> None:
    config = real_config()
    config["num_hidden_layers"] = True
    assert config_problems_of(tmp_path, config) == ["num_hidden_layers: True is not of type 'integer'"]


def test_missing_key(tmp_path: Path) -> None:
    config = real_config()
    del config["vocab_size"]
    assert config_problems_of(tmp_path, config) == ["(top level): 'vocab_size' is a required property"]


def test_every_schema_problem_at_once(tmp_path: Path) -> None:
    config = real_config()
    del config["vocab_size"]
    config["head_dim"] = 0
    config["dflash_config"]["block_size"] = "8"
    assert sorted(config_problems_of(tmp_path, config)) == [
        "(top level): 'vocab_size' is a required property",
        "dflash_config.block_size: '8' is not of type 'integer'",
        "head_dim: 0 is less than the minimum of 1",
    ]


def test_not_a_dflash2_drafter(tmp_path: Path) -> None:
    config = real_config()
    config["architectures"] = ["Qwen3ForCausalLM"]
    assert config_problems_of(tmp_path, config) == [
        'architectures: [\'Qwen3ForCausalLM\'] has no item matching {"const": "DFlash2DraftModel"}'
    ]


def test_layer_types_length_differs_from_num_hidden_layers(tmp_path: Path) -> None:
    config = real_config()
    config["layer_types"] = config["layer_types"][:4]
    assert config_problems_of(tmp_path, config) == [
        "layer_types has 4 entries but num_hidden_layers is 5; they must match"
    ]


def test_target_layer_ids_beyond_the_target_model(tmp_path: Path) -> None:
    config = real_config()
    config["dflash_config"]["target_layer_ids"] = [5, 14, 24, 47, 60]
    assert config_problems_of(tmp_path, config) == [
        "dflash_config.target_layer_ids [47, 60] are not below num_target_layers 47"
    ]


def test_mask_token_id_outside_the_vocabulary(tmp_path: Path) -> None:
    config = real_config()
    config["dflash_config"]["mask_token_id"] = config["vocab_size"]
    assert config_problems_of(tmp_path, config) == ["dflash_config.mask_token_id 154880 is not below vocab_size 154880"]


def test_dtype_and_torch_dtype_disagree(tmp_path: Path) -> None:
    config = real_config()
    config["torch_dtype"] = "float16"
    assert config_problems_of(tmp_path, config) == ["dtype and torch_dtype disagree (bfloat16 vs float16)"]


def test_every_cross_field_problem_at_once(tmp_path: Path) -> None:
    config = real_config()
    config["num_hidden_layers"] = 6
    config["dflash_config"]["target_layer_ids"] = [47]
    config["dflash_config"]["mask_token_id"] = 10**6
    assert len(config_problems_of(tmp_path, config)) == 3


def test_not_json(tmp_path: Path) -> None:
    assert config_problems_of(tmp_path, '{"hidden_size": 4096,}') == [
        "is not valid JSON: Expecting property name enclosed in double quotes at line 1 column 22"
    ]


def test_nan_literal(tmp_path: Path) -> None:
    text = (EXAMPLE / "config.json").read_text().replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": NaN')
    assert config_problems_of(tmp_path, text) == [
        "holds NaN, which is not a JSON number; write a finite number or null"
    ]


def test_duplicate_key(tmp_path: Path) -> None:
    text = (EXAMPLE / "config.json").read_text().replace('"head_dim": 64,', '"head_dim": 64,\n  "head_dim": 128,')
    assert config_problems_of(tmp_path, text) == ["key 'head_dim' appears twice"]


def test_not_utf8(tmp_path: Path) -> None:
    assert config_problems_of(tmp_path, b'{"model_type": "\xff"}') == ["is not UTF-8 text"]


def test_nesting_too_deep(tmp_path: Path) -> None:
    assert config_problems_of(tmp_path, "[" * 100_000) == ["nests arrays or objects too deeply to read; flatten it"]


def test_top_level_not_an_object(tmp_path: Path) -> None:
    [message] = config_problems_of(tmp_path, "[1, 2]")
    assert message == "holds a JSON list, not an object; config.json is an object of settings"


def test_bad_config_through_the_checks(example: Path, tmp_path: Path) -> None:
    """A config that fails stops the checks that compare against it; only its own problem is reported."""
    edit(example.parent / "config.json", '"mask_token_id": 154856', '"mask_token_id": 154880')
    assert check_problems(example, tmp_path / "stage") == [
        "config.json: dflash_config.mask_token_id 154880 is not below vocab_size 154880"
    ]
