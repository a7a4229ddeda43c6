"""The transformers kind on folders written by transformers' own save_pretrained (tests/fixtures/libraries/):
each builds from `init --files` with no edit, its card has the architecture's pipeline_tag and Auto class,
the sizes GPT-2 stores under its own names are checked and shown, a Mixtral card has its experts, a shipped
chat template gives a chat usage; quantized checkpoints are checked by their method's dtypes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from safetensors.numpy import save_file

from release.builder import build
from release.errors import CheckFailed
from release.init import init_from_files
from release.spec import load_spec
from release.verify import verify_staged
from tests.helpers import ROOT, edit_config
from tests.kinds.helpers import apache_license

FIXTURES = ROOT / "tests" / "fixtures" / "libraries"
CHAT = "tokenizer.apply_chat_template(messages, add_generation_prompt=True"


def folder_of(fixture: str, tmp_path: Path) -> Path:
    """The library's folder plus a LICENSE (no library writes one)."""
    folder = tmp_path / "models" / fixture
    shutil.copytree(FIXTURES / fixture, folder)
    (folder / "LICENSE").write_text(apache_license())
    return folder


def init_spec(folder: Path, tmp_path: Path, repo: str = "test-org/tiny") -> Path:
    return init_from_files(tmp_path / "project", "v1", folder, repo).spec


def build_card(spec: Path, tmp_path: Path) -> tuple[Path, str, dict]:
    dist = build(load_spec(spec), tmp_path / "dist").dist
    card = (dist / "README.md").read_text("utf-8")
    return dist, card, yaml.safe_load(card.split("---")[1])


def refusals(spec: Path, tmp_path: Path) -> list[str]:
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(spec), tmp_path / "dist")
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("fixture", "architecture", "tag", "auto", "chat"),
    [
        ("llama", "LlamaForCausalLM", "text-generation", "AutoModelForCausalLM", True),
        ("gpt2", "GPT2LMHeadModel", "text-generation", "AutoModelForCausalLM", False),
        ("bert-mlm", "BertForMaskedLM", "fill-mask", "AutoModelForMaskedLM", False),
        ("mixtral", "MixtralForCausalLM", "text-generation", "AutoModelForCausalLM", True),
    ],
)
def test_a_library_written_folder_builds_with_its_task_and_auto_class(
    fixture: str, architecture: str, tag: str, auto: str, chat: bool, tmp_path: Path
) -> None:
    dist, card, front = build_card(init_spec(folder_of(fixture, tmp_path), tmp_path), tmp_path)
    assert front["pipeline_tag"] == tag and front["library_name"] == "transformers"
    assert f"| Architecture | {architecture} |" in card and "| Layers | 2 |" in card
    assert (
        f"from transformers import {auto}, AutoTokenizer" in card
        and f'model = {auto}.from_pretrained("test-org/tiny", revision="v1")' in card
    )
    assert "AutoModel." not in card
    assert (CHAT in card and "model.generate(**inputs" in card) == chat
    verify_staged(dist)  # every fact recomputed from the staged files


def test_gpt2_sizes_are_read_under_its_own_names(tmp_path: Path) -> None:
    _, card, _ = build_card(init_spec(folder_of("gpt2", tmp_path), tmp_path), tmp_path)
    assert "| Context length | 64 |" in card and "| Vocabulary size | 320 |" in card and "| Layers | 2 |" in card


def test_a_gpt2_config_claiming_more_layers_than_the_weights_hold_is_refused(tmp_path: Path) -> None:
    folder = folder_of("gpt2", tmp_path)
    edit_config(folder, n_layer=3)
    [problem] = refusals(init_spec(folder, tmp_path), tmp_path)
    assert problem == (
        "config.json: num_hidden_layers (stored as 'n_layer') is 3, but model.safetensors holds layers 0–1 "
        "(transformer.h.N.); save it with transformers' save_pretrained (or fix config.json to match the weights)"
    )


def test_a_gpt2_config_with_the_wrong_embedding_width_is_refused(tmp_path: Path) -> None:
    folder = folder_of("gpt2", tmp_path)
    edit_config(folder, n_embd=32)
    [problem] = refusals(init_spec(folder, tmp_path), tmp_path)
    assert problem.startswith(
        "config.json: hidden_size (stored as 'n_embd') is 32, but model.safetensors's input embedding "
        "'transformer.wte.weight' is 16 wide"
    )


def test_a_mixtral_card_shows_its_experts_and_active_parameters(tmp_path: Path) -> None:
    _, card, _ = build_card(init_spec(folder_of("mixtral", tmp_path), tmp_path), tmp_path)
    assert "| Experts | 4 per MoE layer |" in card and "| Experts per token | 2 |" in card
    total = int(card.split("| Parameters | ")[1].split(" ")[0].replace(",", ""))
    active = int(card.split("| Active parameters | ")[1].split(" ")[0].replace(",", ""))
    assert 0 < active < total


def test_a_mixtral_config_naming_more_experts_than_the_weights_hold_is_refused(tmp_path: Path) -> None:
    folder = folder_of("mixtral", tmp_path)
    edit_config(folder, num_local_experts=8)
    found = refusals(init_spec(folder, tmp_path), tmp_path)
    assert found and all(
        p.startswith("config.json: num_local_experts is 8, but model.safetensors holds 4 experts") for p in found
    ), found


def test_generation_defaults_are_shown(tmp_path: Path) -> None:
    _, card, _ = build_card(init_spec(folder_of("llama", tmp_path), tmp_path), tmp_path)
    assert "| Generation defaults | sampling on, temperature 0.6, top-p 0.9 |" in card


def test_a_chat_template_in_tokenizer_config_gives_the_chat_usage(tmp_path: Path) -> None:
    folder = folder_of("llama", tmp_path)
    template = (folder / "chat_template.jinja").read_text()
    (folder / "chat_template.jinja").unlink()
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, "chat_template": template}))
    _, card, _ = build_card(init_spec(folder, tmp_path), tmp_path)
    assert CHAT in card
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    shutil.rmtree(tmp_path / "project")
    _, card, _ = build_card(init_spec(folder, tmp_path), tmp_path / "again")
    assert CHAT not in card and "AutoModelForCausalLM.from_pretrained" in card


def test_the_spec_s_pipeline_tag_wins(tmp_path: Path) -> None:
    spec = init_spec(folder_of("bert-mlm", tmp_path), tmp_path)
    spec.write_text(
        spec.read_text().replace(
            "[card.license]", '[card.metadata]\npipeline_tag = "feature-extraction"\n\n[card.license]'
        )
    )
    _, _, front = build_card(spec, tmp_path)
    assert front["pipeline_tag"] == "feature-extraction"


# --- quantized checkpoints ----------------------------------------------------------------------------

HIDDEN, VOCAB = 16, 64


def gptq_folder(tmp_path: Path, rest: type = np.float16, with_qweight: bool = True) -> Path:
    """A GPTQ-layout checkpoint (I32 qweight/qzeros, F16 scales) of a 2-layer Llama; `rest` the dtype of the others."""
    folder = tmp_path / "models" / "gptq"
    folder.mkdir(parents=True)
    tensors: dict[str, np.ndarray] = {
        "model.embed_tokens.weight": np.zeros((VOCAB, HIDDEN), rest),
        "model.norm.weight": np.ones(HIDDEN, rest),
        "lm_head.weight": np.zeros((VOCAB, HIDDEN), rest),
    }
    for n in range(2):
        for proj in ("q_proj", "k_proj"):
            base = f"model.layers.{n}.self_attn.{proj}"
            if with_qweight:
                tensors[f"{base}.qweight"] = np.zeros((HIDDEN // 8, HIDDEN), np.int32)
            tensors[f"{base}.qzeros"] = np.zeros((1, HIDDEN // 8), np.int32)
            tensors[f"{base}.scales"] = np.ones((1, HIDDEN), np.float16)
        tensors[f"model.layers.{n}.input_layernorm.weight"] = np.ones(HIDDEN, rest)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": HIDDEN,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "vocab_size": VOCAB,
        "max_position_embeddings": 256,
        "torch_dtype": "float16",
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False},
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "LICENSE").write_text(apache_license())
    return folder


def test_a_quantized_checkpoint_builds_with_its_method_and_relation(tmp_path: Path) -> None:
    spec = init_spec(gptq_folder(tmp_path), tmp_path)
    spec.write_text(
        spec.read_text().replace(
            "[card.license]", '[card.metadata]\nbase_model = "test-org/tiny-llama"\n\n[card.license]'
        )
    )
    dist, card, front = build_card(spec, tmp_path)
    assert front["base_model"] == "test-org/tiny-llama" and front["base_model_relation"] == "quantized"
    assert "| Quantization | gptq, 4-bit (I32 qweight/qzeros with F16 scales) |" in card
    verify_staged(dist)


def test_a_quantized_checkpoint_without_a_base_model_has_no_relation(tmp_path: Path) -> None:
    _, _, front = build_card(init_spec(gptq_folder(tmp_path), tmp_path), tmp_path)
    assert "base_model" not in front and "base_model_relation" not in front


def test_a_quantized_checkpoint_without_its_method_s_tensors_is_refused(tmp_path: Path) -> None:
    found = refusals(init_spec(gptq_folder(tmp_path, with_qweight=False), tmp_path), tmp_path)
    assert any(
        p.startswith("config.json: quantization_config says gptq") and "holds no I32 '….qweight' tensor" in p
        for p in found
    ), found


def test_the_dtype_rule_leaves_a_quantization_s_own_tensors_out(tmp_path: Path) -> None:
    """F16 scales are the method's; the rest in F32 under torch_dtype float16 is wrong, and said so."""
    found = refusals(init_spec(gptq_folder(tmp_path, rest=np.float32), tmp_path), tmp_path)
    assert found == ["model.safetensors: the weights are F32, config.json says F16; correct torch_dtype or convert"], (
        found
    )


@pytest.mark.parametrize(
    ("architecture", "tag", "loader"),
    [
        ("BertForSequenceClassification", "text-classification", "AutoModelForSequenceClassification"),
        ("BertForTokenClassification", "token-classification", "AutoModelForTokenClassification"),
        ("BertForQuestionAnswering", "question-answering", "AutoModelForQuestionAnswering"),
        ("BertModel", "feature-extraction", "AutoModel"),
    ],
)
def test_other_heads_get_their_task_and_auto_class(architecture: str, tag: str, loader: str, tmp_path: Path) -> None:
    """The architecture's suffix alone decides (formats/transformers_config.py HEADS); the weights' head is not checked
    here."""
    folder = folder_of("bert-mlm", tmp_path)
    edit_config(folder, architectures=[architecture])
    _, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert front["pipeline_tag"] == tag and f"model = {loader}.from_pretrained(" in card


def test_an_architecture_no_auto_class_loads_is_loaded_by_its_own_class_without_a_pipeline_tag(tmp_path: Path) -> None:
    folder = folder_of("gpt2", tmp_path)
    edit_config(folder, architectures=["GPT2DoubleHeadsModel"])
    _, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert "pipeline_tag" not in front and "from transformers import GPT2DoubleHeadsModel, AutoTokenizer" in card
    assert 'model = GPT2DoubleHeadsModel.from_pretrained("test-org/tiny", revision="v1")' in card
