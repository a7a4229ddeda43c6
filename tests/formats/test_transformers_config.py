"""release/formats/transformers_config.py (and transformers_weights.py) on the llama, gpt2, bert-mlm and mixtral folders
transformers' save_pretrained wrote; the alias table, the heads and the MoE arithmetic cross-checked against
transformers itself when it is installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.formats.safetensors_header import TensorInfo
from release.formats.transformers_config import (
    ATTRIBUTE_MAPS,
    LEGACY,
    config_problems,
    head_of,
    layers_in,
    read_transformers_model,
    size,
    tensor_problems,
)
from release.formats.transformers_weights import moe_facts, quantization_facts
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files
from tests.helpers import edit_config

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "release" / "schemas" / "transformers-attribute-maps.json").read_text()
)


def read_model(name: str, folder: Path | None = None) -> Any:
    facts, problems = read_transformers_model(release_files(folder or FIXTURES / name))
    assert facts is not None
    return facts, problems


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("llama", ("llama", "LlamaForCausalLM", "text-generation", "AutoModelForCausalLM", 2, 16, 128, 16_976, True)),
        ("gpt2", ("gpt2", "GPT2LMHeadModel", "text-generation", "AutoModelForCausalLM", 2, 16, 64, 12_736, False)),
        ("bert-mlm", ("bert", "BertForMaskedLM", "fill-mask", "AutoModelForMaskedLM", 2, 16, 64, 7_421, False)),
        (
            "mixtral",
            ("mixtral", "MixtralForCausalLM", "text-generation", "AutoModelForCausalLM", 2, 16, 128, 26_320, True),
        ),
    ],
)
def test_each_fixture_reads_through_its_own_names(name: str, expected: tuple[Any, ...]) -> None:
    facts, problems = read_model(name)
    assert problems == []
    assert (
        facts.model_type,
        facts.architecture,
        facts.pipeline_tag,
        facts.auto_class,
        facts.sizes["num_hidden_layers"].value,
        facts.sizes["hidden_size"].value,
        facts.sizes["max_position_embeddings"].value,
        facts.parameter_count,
        facts.chat_template,
    ) == expected
    assert facts.layers_in_weights == (0, 1)


def test_gpt2_sizes_are_read_under_gpt2s_names() -> None:
    facts, _ = read_model("gpt2")
    assert {c: (s.value, s.key) for c, s in facts.sizes.items()} == {
        "num_hidden_layers": (2, "n_layer"),
        "hidden_size": (16, "n_embd"),
        "num_attention_heads": (2, "n_head"),
        "max_position_embeddings": (64, "n_positions"),
        "vocab_size": (320, "vocab_size"),
    }


def test_a_gpt2_config_claiming_3_layers_over_2_is_caught_through_the_alias(tmp_path: Path) -> None:
    folder = copy_fixture("gpt2", tmp_path)
    edit_config(folder, n_layer=3)
    _, problems = read_model("gpt2", folder)
    only_problem(
        problems,
        "config.json",
        "num_hidden_layers (stored as 'n_layer') is 3",
        "model.safetensors holds layers 0–1",
        "(transformer.h.N.)",
    )


def test_a_vocabulary_and_a_width_the_embedding_contradicts_are_named(tmp_path: Path) -> None:
    folder = copy_fixture("gpt2", tmp_path)
    edit_config(folder, vocab_size=321, n_embd=32)
    _, problems = read_model("gpt2", folder)
    assert [p.file for p in problems] == ["config.json", "config.json"]
    assert (
        "vocab_size is 321, but model.safetensors's input embedding 'transformer.wte.weight' has 320 rows"
        in problems[0].message
    )
    assert "hidden_size (stored as 'n_embd') is 32" in problems[1].message and "16 wide" in problems[1].message


def test_bert_layers_are_counted_from_bert_encoder_layer_names(tmp_path: Path) -> None:
    folder = copy_fixture("bert-mlm", tmp_path)
    edit_config(folder, num_hidden_layers=4)
    _, problems = read_model("bert-mlm", folder)
    only_problem(problems, "config.json", "num_hidden_layers is 4", "holds layers 0–1 (bert.encoder.layer.N.)")


def test_layer_namings_of_common_architectures() -> None:
    names = [
        "model.layers.0.x",
        "model.layers.1.x",
        "transformer.h.3.y",
        "bert.encoder.layer.2.z",
        "encoder.layer.5.w",
        "encoder.block.1.q",
        "decoder.block.0.q",
        "gpt_neox.layers.7.a",
        "transformer.blocks.4.b",
        "lm_head.weight",
    ]
    found = {k.replace("\\", ""): v for k, v in layers_in(names).items()}
    assert found["^model.layers.(d+)."] == {0, 1} and found["^transformer.h.(d+)."] == {3}
    assert found["^(?:[a-z_]+.)?encoder.layer.(d+)."] == {2, 5}
    assert found["^encoder.block.(d+)."] == {1} and found["^decoder.block.(d+)."] == {0}
    assert found["^gpt_neox.layers.(d+)."] == {7} and found["^transformer.blocks.(d+)."] == {4}


def test_mixtral_moe_facts_come_from_the_per_expert_tensors() -> None:
    facts, _ = read_model("mixtral")
    moe = facts.moe
    assert (moe.experts, moe.experts_key, moe.experts_per_token, moe.layout, moe.moe_layers) == (
        4,
        "num_local_experts",
        2,
        "per-expert",
        2,
    )
    one_expert = 3 * 16 * 32  # w1, w2, w3: hidden 16 × intermediate 32
    assert moe.expert_parameters == 2 * 4 * one_expert and moe.total_parameters == 26_320
    assert moe.active_parameters == 26_320 - 2 * (4 - 2) * one_expert


def test_an_expert_count_the_tensors_contradict_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("mixtral", tmp_path)
    edit_config(folder, num_local_experts=5)
    _, problems = read_model("mixtral", folder)
    only_problem(
        problems,
        "config.json",
        "num_local_experts is 5",
        "holds 4 experts (0–3) in 'model.layers.0.block_sparse_moe'",
        "(and 1 more layers)",
    )
    edit_config(folder, num_local_experts=4, num_experts_per_tok=6)
    _, problems = read_model("mixtral", folder)
    only_problem(problems, "config.json", "routes each token to 6 experts")


def tower(prefix: str, layers: int) -> dict[str, TensorInfo]:
    return {f"{prefix}{i}.mlp.fc1.weight": TensorInfo("F32", (32, 16)) for i in range(layers)}


@pytest.mark.parametrize(
    ("config", "tensors", "words"),
    [
        (  # Qwen2-VL: the vision tower counts its blocks as `depth`
            {"model_type": "qwen2_vl", "vision_config": {"depth": 3}},
            tower("model.visual.blocks.", 2),
            "vision_config.depth is 3, but w holds layers 0–1 (model.visual.blocks.N.)",
        ),
        (  # Qwen2-Audio's audio tower
            {"model_type": "qwen2_audio", "audio_config": {"model_type": "qwen2_audio_encoder", "encoder_layers": 2}},
            tower("audio_tower.layers.", 3),
            "audio_config.encoder_layers is 2, but w holds layers 0–2 (audio_tower.layers.N.)",
        ),
        (  # CLIP: the vision tower beside a text tower of other sizes
            {"model_type": "clip", "text_config": {"num_hidden_layers": 2}, "vision_config": {"num_hidden_layers": 1}},
            tower("text_model.encoder.layers.", 2) | tower("vision_model.encoder.layers.", 2),
            "vision_config.num_hidden_layers is 1, but w holds layers 0–1 (vision_model.encoder.layers.N.)",
        ),
    ],
)
def test_each_tower_s_layers_are_counted_by_its_own_sub_config(
    config: dict[str, Any], tensors: dict[str, TensorInfo], words: str
) -> None:
    only_problem(tensor_problems(config, tensors, "c", "w"), "c", words)
    sub = next(k for k in ("vision_config", "audio_config") if k in config)
    held = {int(n.split(".")[-4]) for n in tensors if any(t in n for t in ("visual", "audio_tower", "vision_model"))}
    agreed = {**config, sub: {**config[sub], next(k for k in config[sub] if k != "model_type"): len(held)}}
    assert tensor_problems(agreed, tensors, "c", "w") == []


def test_the_fused_layout_gives_the_same_active_parameters() -> None:
    fused = {
        "model.layers.0.mlp.experts.gate_up_proj": TensorInfo("BF16", (4, 64, 16)),
        "model.layers.0.mlp.experts.down_proj": TensorInfo("BF16", (4, 16, 32)),
        "model.layers.0.mlp.gate.weight": TensorInfo("BF16", (4, 16)),
    }
    moe, problems = moe_facts(
        {"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2}, fused, "c", "w"
    )
    assert problems == [] and moe is not None
    assert (moe.layout, moe.expert_parameters, moe.active_parameters) == ("fused", 4 * 1536, 64 + 4 * 1536 - 2 * 1536)
    moe, problems = moe_facts(
        {"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}, fused, "c", "w"
    )
    only_problem(problems, "c", "num_local_experts is 8", "for 4 experts", "(and 1 more)")


def test_deepseek_names_its_experts_n_routed_experts() -> None:
    assert size({"model_type": "deepseek_v3", "n_routed_experts": 256}, "num_local_experts").key == "n_routed_experts"
    assert moe_facts({"model_type": "qwen3_moe", "num_experts": 1}, {}, "c", "w") == (None, [])  # one expert: dense


@pytest.mark.parametrize(
    ("architecture", "config", "expected"),
    [
        (
            "T5ForConditionalGeneration",
            {"model_type": "t5", "is_encoder_decoder": True},
            ("text2text-generation", "AutoModelForSeq2SeqLM"),
        ),
        (
            "LlavaForConditionalGeneration",
            {"model_type": "llava", "vision_config": {}},
            ("image-text-to-text", "AutoModelForImageTextToText"),
        ),
        (
            "WhisperForConditionalGeneration",
            {"model_type": "whisper", "num_mel_bins": 80, "is_encoder_decoder": True},
            ("automatic-speech-recognition", "AutoModelForSpeechSeq2Seq"),
        ),
        ("RobertaForSequenceClassification", {}, ("text-classification", "AutoModelForSequenceClassification")),
        ("BertForTokenClassification", {}, ("token-classification", "AutoModelForTokenClassification")),
        ("BertForQuestionAnswering", {}, ("question-answering", "AutoModelForQuestionAnswering")),
        ("GPT2DoubleHeadsModel", {}, (None, None)),
        ("BertModel", {}, ("feature-extraction", "AutoModel")),
        ("SomethingElse", {}, (None, None)),
        ("MysteryForConditionalGeneration", {}, (None, None)),
    ],
)
def test_the_head_comes_from_the_architecture_suffix(
    architecture: str, config: dict[str, Any], expected: tuple[Any, Any]
) -> None:
    assert head_of(architecture, config) == expected


def test_sizes_through_text_config_legacy_keys_and_reverse_aliases() -> None:
    assert (
        size(
            {"model_type": "llava", "text_config": {"model_type": "llama", "num_hidden_layers": 32}},
            "num_hidden_layers",
        ).key
        == "text_config.num_hidden_layers"
    )
    assert size({"model_type": "falcon", "n_embed": 4544}, "hidden_size").key == "n_embed"
    assert (
        size({"model_type": "qwen3_moe", "num_experts": 128}, "num_local_experts").key == "num_experts"
    )  # an older file
    assert size({"model_type": "gpt2", "n_layer": True}, "num_hidden_layers") is None  # a boolean is not a size


def test_a_config_without_architectures_or_model_type_is_told_in_transformers_terms() -> None:
    problems = config_problems({"architectures": "Llama"}, "config.json")
    assert [p.message.split(";")[0] for p in problems] == [
        'has no architectures list (e.g. ["LlamaForCausalLM"])',
        "has no model_type",
    ]


def test_a_missing_config_and_a_broken_one_are_one_problem_each(tmp_path: Path) -> None:
    assert read_transformers_model({})[1][0].message.startswith("is missing")
    (tmp_path / "config.json").write_text("{")
    only_problem(
        read_transformers_model({"config.json": tmp_path / "config.json"})[1], "config.json", "is not valid JSON"
    )


@pytest.mark.parametrize(
    ("qc", "tensors", "fragment"),
    [
        ({"quant_method": "fp8"}, {"a.weight": TensorInfo("BF16", (2, 2))}, "holds no F8_E4M3 '….weight' tensor"),
        (
            {"quant_method": "fp8"},
            {"a.weight": TensorInfo("F8_E4M3", (2, 2))},
            "has no F32 'a.weight_scale_inv' beside it",
        ),
        (
            {"quant_method": "gptq", "bits": 4},
            {"a.qweight": TensorInfo("I32", (2, 2)), "a.qzeros": TensorInfo("I32", (1, 2))},
            "has no BF16/F16 'a.scales' beside it",
        ),
        ({"quant_method": "awq"}, {"a.weight": TensorInfo("F16", (2, 2))}, "holds no I32 '….qweight' tensor"),
        (
            {"quant_method": "bitsandbytes", "load_in_4bit": True},
            {"a.weight": TensorInfo("BF16", (2, 2))},
            "holds no U8 '….weight'",
        ),
        (
            {"quant_method": "compressed-tensors", "format": "pack-quantized"},
            {"a.weight": TensorInfo("BF16", (2, 2))},
            "holds no I32 '….weight_packed'",
        ),
    ],
)
def test_quantized_weights_not_stored_as_the_method_stores_them_are_named(
    qc: dict[str, Any], tensors: dict[str, TensorInfo], fragment: str
) -> None:
    facts, problems = quantization_facts({"quantization_config": qc}, tensors, "config.json", "model.safetensors")
    assert facts is not None and len(problems) == 1 and fragment in problems[0].message, problems


def test_quantized_weights_stored_as_the_method_stores_them_pass() -> None:
    fp8 = {
        "a.weight": TensorInfo("F8_E4M3", (2, 2)),
        "a.weight_scale_inv": TensorInfo("F32", (1, 1)),
        "n.weight": TensorInfo("BF16", (2,)),
    }
    facts, problems = quantization_facts({"quantization_config": {"quant_method": "fp8"}}, fp8, "c", "w")
    assert problems == [] and facts is not None and (facts.method, facts.quantized_tensors) == ("fp8", 1)
    gptq = {
        "a.qweight": TensorInfo("I32", (2, 8)),
        "a.qzeros": TensorInfo("I32", (1, 1)),
        "a.scales": TensorInfo("F16", (1, 8)),
    }
    facts, problems = quantization_facts({"quantization_config": {"quant_method": "gptq", "bits": 4}}, gptq, "c", "w")
    assert (
        problems == [] and facts is not None and (facts.bits, facts.stores) == (4, "I32 qweight/qzeros with F16 scales")
    )
    facts, problems = quantization_facts({"quantization_config": {"quant_method": "hqq"}}, {}, "c", "w")
    assert problems == [] and facts is not None and facts.stores is None  # a method whose layout is not checked
    assert quantization_facts({"quantization_config": {"bits": 4}}, {}, "c", "w")[1][0].message.startswith(
        "quantization_config has no quant_method"
    )


@pytest.mark.parametrize("fixture", ["mixtral", "gpt2"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_transformers_model, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with transformers ---


def test_the_alias_table_is_transformers_attribute_map() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    assert SCHEMA["transformers"] == transformers.__version__, "regenerate the table for this transformers version"
    wanted = set(SCHEMA["sizes"])
    now = {}
    for model_type in CONFIG_MAPPING_NAMES:
        try:
            cls = type(transformers.AutoConfig.for_model(model_type))
        except Exception:  # a config class that cannot be built with defaults (two in 5.24.0)
            continue
        renames = {k: v for k, v in cls.attribute_map.items() if k in wanted}
        if renames:
            now[model_type] = dict(sorted(renames.items()))
    assert now == ATTRIBUTE_MAPS


def test_every_size_transformers_gives_a_default_config_is_read_the_same() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    transformers.logging.set_verbosity_error()
    compared = 0
    for model_type in CONFIG_MAPPING_NAMES:
        if (
            model_type == "dory"
        ):  # its config.json counts attention and MLP blocks apart: 2 × the layers, halved on load
            continue
        try:
            config = transformers.AutoConfig.for_model(model_type)
        except Exception:
            continue
        stored = config.to_dict()
        for concept in SCHEMA["sizes"]:
            try:
                theirs = getattr(config, concept, None)
            except Exception:  # a per-layer size of a heterogeneous config (gemma3n…): no one global value
                continue
            ours = size(stored, concept)
            if (
                isinstance(theirs, int)
                and not isinstance(theirs, bool)
                and ours is not None
                and not ours.key.startswith("text_config.")
            ):
                assert ours.value == theirs, (model_type, concept, ours)
                compared += 1
    assert compared > 2_000
    for model_type, renames in LEGACY.items():
        for concept, key in renames.items():
            assert getattr(transformers.AutoConfig.for_model(model_type, **{key: 64}), concept) == 64


def test_every_auto_class_the_heads_name_loads_that_architecture() -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto import modeling_auto

    def classes(mapping: dict[str, Any]) -> set[str]:
        return {c for v in mapping.values() for c in (v if isinstance(v, (list, tuple)) else (v,))}

    every = sorted(
        {
            (model_type, c)
            for name, mapping in vars(modeling_auto).items()
            if name.endswith("_MAPPING_NAMES")
            for model_type, v in mapping.items()
            for c in (v if isinstance(v, (list, tuple)) else (v,))
        }
    )
    transformers.logging.set_verbosity_error()
    configs: dict[str, dict[str, Any] | None] = {}
    named = 0
    for model_type, architecture in every:
        if model_type not in configs:  # the keys a config.json of that model type holds (its class's defaults)
            try:
                configs[model_type] = transformers.AutoConfig.for_model(model_type).to_dict()
            except Exception:
                configs[model_type] = None
        config = configs[model_type]
        if config is None:
            continue
        _, auto_class = head_of(architecture, config)
        if auto_class is not None:
            named += 1  # the Auto class's own table (…_MAPPING_NAMES) must list the architecture
            assert architecture in classes(getattr(transformers, auto_class)._model_mapping._model_mapping), (
                architecture,
                auto_class,
            )
    assert named > 1_000


def test_the_fixtures_load_with_the_auto_class_named_and_moe_matches_the_fused_model() -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    for name in ("llama", "gpt2", "bert-mlm", "mixtral"):
        facts, _ = read_model(name)
        config = transformers.AutoConfig.from_pretrained(FIXTURES / name)
        for concept, found in facts.sizes.items():
            assert getattr(config, concept) == found.value, (name, concept)
        model, info = getattr(transformers, facts.auto_class).from_pretrained(FIXTURES / name, output_loading_info=True)
        assert type(model).__name__ == facts.architecture
        assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"], (name, info)
        if name == "mixtral":
            in_memory = {k: TensorInfo("BF16", tuple(v.shape)) for k, v in model.state_dict().items()}
            assert any(".experts.gate_up_proj" in k for k in in_memory)  # transformers 5 holds the fused layout
            fused, problems = moe_facts(config.to_dict(), in_memory, "c", "w")
            assert problems == [] and fused is not None and fused.layout == "fused"
            assert fused.active_parameters == facts.moe.active_parameters
            assert fused.total_parameters == sum(p.numel() for p in model.parameters()) == facts.parameter_count
