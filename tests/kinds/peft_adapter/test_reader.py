"""release/kinds/peft_adapter/reader.py on the LoRA adapter PeftModel.save_pretrained wrote (r 4, alpha 8,
q_proj/v_proj on
tests/fixtures/libraries/llama), and copies damaged through the safetensors library; with PEFT installed, the type
lists are PEFT's and each damage found here is one PEFT's own loading fails on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from safetensors.numpy import load_file, save_file

from release.kinds.peft_adapter.reader import PEFT_TYPES, TASK_TAGS, is_hub_id, read_peft_adapter
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files

MODULES = tuple(f"model.layers.{i}.self_attn.{p}_proj" for i in (0, 1) for p in "qv")


def adapter(
    tmp_path: Path, config: dict[str, Any] | None = None, drop: tuple[str, ...] = (), add: dict[str, Any] | None = None
) -> Path:
    folder = copy_fixture("peft-lora", tmp_path)
    if config:
        path = folder / "adapter_config.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **config}))
    if drop or add:
        weights = folder / "adapter_model.safetensors"
        tensors = {k: v for k, v in load_file(weights).items() if k not in drop}
        save_file({**tensors, **(add or {})}, weights, metadata={"format": "pt"})
    return folder


def read_adapter(folder: Path) -> Any:
    return read_peft_adapter(release_files(folder))


def test_the_fixture_reads_with_its_lora_facts() -> None:
    facts, problems = read_adapter(FIXTURES / "peft-lora")
    assert problems == [] and facts is not None
    assert (facts.peft_type, facts.task_type, facts.pipeline_tag) == ("LORA", "CAUSAL_LM", "text-generation")
    assert (facts.base_model, facts.base_model_is_hub_id, facts.rank, facts.alpha) == (
        "hf-release-test/tiny-llama",
        True,
        4,
        8.0,
    )
    assert facts.target_modules == ("v_proj", "q_proj") and facts.adapted_modules == MODULES
    assert facts.trainable_parameters == 2 * (4 * 16 + 16 * 4) + 2 * (
        4 * 16 + 8 * 4
    )  # q: 16→16, v: 16→8 (2 KV heads × 4)
    assert facts.modules_to_save == () and facts.peft_version == "0.21.2"


def test_a_rank_in_the_config_disagreeing_with_the_tensors_is_one_problem(tmp_path: Path) -> None:
    _, problems = read_adapter(adapter(tmp_path, {"r": 8}))
    only_problem(
        problems,
        "adapter_config.json",
        "r says rank 8",
        "holds rank 4 for 4 of its 4 modules",
        "'model.layers.0.self_attn.q_proj': lora_A [4, 16], lora_B [16, 4]",
        "PEFT would fail to load them",
    )


def test_rank_pattern_is_respected(tmp_path: Path) -> None:
    _, problems = read_adapter(adapter(tmp_path, {"r": 8, "rank_pattern": {"q_proj": 4, "v_proj": 4}}))
    assert problems == []
    _, problems = read_adapter(adapter(tmp_path / "b", {"rank_pattern": {"model.layers.1.self_attn.v_proj": 2}}))
    only_problem(
        problems,
        "adapter_config.json",
        "rank_pattern says rank 2",
        "for 1 of its 4 modules",
        "'model.layers.1.self_attn.v_proj'",
    )


def test_a_missing_lora_b_is_one_problem(tmp_path: Path) -> None:
    folder = adapter(tmp_path, drop=("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight",))
    _, problems = read_adapter(folder)
    only_problem(
        problems, "adapter_model.safetensors", "module 'model.layers.1.self_attn.v_proj' has no lora_B (1 such modules)"
    )


def test_an_unknown_task_type_is_told_in_pefts_words(tmp_path: Path) -> None:
    _, problems = read_adapter(adapter(tmp_path, {"task_type": "CAUSAL"}))
    only_problem(
        problems, "adapter_config.json", "task_type is 'CAUSAL'", 'PEFT refuses it ("Invalid task type")', "CAUSAL_LM"
    )
    _, problems = read_adapter(adapter(tmp_path / "b", {"peft_type": "LORAX"}))
    only_problem(problems, "adapter_config.json", "peft_type is 'LORAX', which PEFT does not know")


def test_target_modules_are_matched_as_peft_matches_them(tmp_path: Path) -> None:
    assert (
        read_adapter(adapter(tmp_path / "a", {"target_modules": r".*\.(q|v)_proj"}))[1] == []
    )  # a regex, matched whole
    _, problems = read_adapter(adapter(tmp_path / "b", {"target_modules": r".*q_proj"}))
    only_problem(
        problems, "adapter_config.json", "does not cover 'model.layers.0.self_attn.v_proj'", "PEFT would not load"
    )
    _, problems = read_adapter(adapter(tmp_path / "c", {"target_modules": ["q_proj", "v_proj", "k_proj"]}))
    only_problem(
        problems, "adapter_config.json", "target_modules names 'k_proj'", "holds no lora_A/lora_B for any such module"
    )
    _, problems = read_adapter(adapter(tmp_path / "d", {"target_modules": "(unclosed"}))
    only_problem(problems, "adapter_config.json", "is not a valid regex")


def test_a_tensor_outside_lora_and_modules_to_save_is_named(tmp_path: Path) -> None:
    head = {"base_model.model.lm_head.weight": load_file(FIXTURES / "llama" / "model.safetensors")["lm_head.weight"]}
    _, problems = read_adapter(adapter(tmp_path / "a", add=head))
    only_problem(
        problems, "adapter_model.safetensors", "holds 'base_model.model.lm_head.weight', neither LoRA weights nor"
    )
    facts, problems = read_adapter(adapter(tmp_path / "b", {"modules_to_save": ["lm_head"]}, add=head))
    assert problems == [] and facts.modules_to_save == ("lm_head",) and facts.trainable_parameters == 448 + 384 * 16


def test_base_models_that_are_paths_or_null_are_not_hub_ids(tmp_path: Path) -> None:
    assert is_hub_id("hf-release-test/tiny-llama") and is_hub_id("gpt2")
    assert not is_hub_id("/data/models/tiny-llama") and not is_hub_id("./tiny-llama") and not is_hub_id("a/b/c")
    facts, problems = read_adapter(adapter(tmp_path, {"base_model_name_or_path": None}))
    assert problems == [] and facts.base_model is None and not facts.base_model_is_hub_id


def test_missing_files_and_a_pickle_only_adapter_are_named(tmp_path: Path) -> None:
    assert read_peft_adapter({})[1][0].message.startswith("is missing; PEFT needs it")
    folder = adapter(tmp_path)
    (folder / "adapter_model.safetensors").rename(folder / "adapter_model.bin")
    _, problems = read_adapter(folder)
    only_problem(problems, "adapter_model.safetensors", "only the pickle adapter_model.bin is shipped")


def test_a_config_of_the_wrong_types_is_named_without_a_traceback(tmp_path: Path) -> None:
    _, problems = read_adapter(
        adapter(
            tmp_path,
            {
                "r": "4",
                "lora_alpha": None,
                "target_modules": 3,
                "rank_pattern": [1],
                "modules_to_save": "lm_head",
                "base_model_name_or_path": 7,
            },
        )
    )
    assert {p.message.split(" ")[0] for p in problems} == {
        "r",
        "lora_alpha",
        "target_modules",
        "rank_pattern",
        "modules_to_save",
        "base_model_name_or_path",
    }


@pytest.mark.parametrize("fixture", ["peft-lora"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_peft_adapter, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with PEFT ---


def test_the_type_lists_are_pefts() -> None:
    pytest.importorskip("peft")
    from peft.utils.peft_types import PeftType, TaskType

    assert PEFT_TYPES == tuple(t.value for t in PeftType)
    assert set(TASK_TAGS) == {t.value for t in TaskType}


def load_with_peft(folder: Path) -> Any:
    pytest.importorskip("peft")
    import transformers
    from peft import PeftModel

    transformers.logging.set_verbosity_error()
    base = transformers.AutoModelForCausalLM.from_pretrained(FIXTURES / "llama")
    return PeftModel.from_pretrained(base, folder)


def test_peft_loads_the_fixture_with_the_facts_read_here() -> None:
    model = load_with_peft(FIXTURES / "peft-lora")
    facts, _ = read_adapter(FIXTURES / "peft-lora")
    loaded = sorted(
        n.removeprefix("base_model.model.").rsplit(".lora_A", 1)[0]
        for n, _ in model.named_parameters()
        if ".lora_A." in n
    )
    assert tuple(loaded) == facts.adapted_modules
    lora = sum(p.numel() for n, p in model.named_parameters() if ".lora_" in n)
    assert lora == facts.trainable_parameters
    assert model.peft_config["default"].r == facts.rank and model.peft_config["default"].lora_alpha == facts.alpha


def test_each_damage_found_here_is_one_peft_fails_on(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    with pytest.raises(RuntimeError, match="size mismatch"):
        load_with_peft(adapter(tmp_path / "rank", {"r": 8}))
    with pytest.raises(ValueError, match="Invalid task type"):
        load_with_peft(adapter(tmp_path / "task", {"task_type": "CAUSAL"}))
    with pytest.warns(UserWarning, match="missing adapter keys"):
        load_with_peft(
            adapter(tmp_path / "b", drop=("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight",))
        )
