"""Each kind's card usage, run as printed against the local Hub at the tag, then one forward pass; the load
must report no missing, unexpected or newly initialised weights (transformers loads a lying config with
only a warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.localhub import LocalHub
from tests.libraries.conftest import FIXTURES, library_python, publish, run_card_python, usage_python

# After the card's code: the loaded model is the architecture config.json names, its load report is clean,
# and a forward pass runs (`model(**tokenizer(…))`: a causal LM's and a masked LM's forward alike).
TRANSFORMERS_CHECK = """
import torch
from transformers import AutoConfig

config = AutoConfig.from_pretrained({repo!r}, revision={version!r})
assert type(model).__name__ == config.architectures[0], (type(model).__name__, config.architectures)
_, report = type(model).from_pretrained({repo!r}, revision={version!r}, output_loading_info=True)
assert not any(report.values()), report
with torch.no_grad():
    out = model(**tokenizer("hello world", return_tensors="pt"))
print("forward", tuple(out.logits.shape))
"""


@pytest.mark.parametrize("fixture", ["llama", "gpt2", "bert-mlm", "mixtral"])
def test_a_transformers_card_loads_the_model_it_describes(fixture: str, hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish(fixture, f"hf-release-test/tiny-{fixture}", hub, tmp_path)
    check = TRANSFORMERS_CHECK.format(repo=release.repo_id, version=release.version)
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1].startswith("forward (1, ")


# After the card's text completion (a causal LM without a chat template, issue 40): `generate` ran on the
# card's prompt and added tokens to it, and the card printed the decoded text, prompt first.
COMPLETION_CHECK = """
prompt = inputs["input_ids"].shape[-1]
assert outputs.shape[0] == 1 and outputs.shape[-1] > prompt, (tuple(outputs.shape), prompt)
print("generated", outputs.shape[-1] - prompt, "new tokens")
"""


def test_a_causal_lm_card_without_a_chat_template_completes_text(hub: LocalHub, tmp_path: Path) -> None:
    """gpt2, as transformers' save_pretrained wrote it, ships no chat template: the card's `generate` example is
    a text completion, and the whole of the card's Python runs as printed (load, tokenize, generate, decode)."""
    python = library_python("LIBRARY_PYTHON")
    release = publish("gpt2", "hf-release-test/tiny-gpt2-generate", hub, tmp_path)
    code = usage_python(release.card)
    assert "model.generate(**inputs, max_new_tokens=32)" in code and "apply_chat_template" not in code, code
    printed, _, last = run_card_python(python, code, hub, tmp_path, COMPLETION_CHECK).rstrip("\n").rpartition("\n")
    prompt = "The capital of France is"
    assert prompt in code and len(printed[printed.index(prompt) :]) > len(prompt), printed  # the prompt, completed
    assert last.startswith("generated ") and last != "generated 0 new tokens", last


# After the vision-language card's code: the model is the architecture config.json names, loaded clean, and the
# processor the card loads turns an image and a prompt with the image token into a forward pass.
VISION_TEXT_CHECK = """
import numpy as np
import torch
from transformers import AutoConfig

config = AutoConfig.from_pretrained({repo!r}, revision={version!r})
assert type(model).__name__ == config.architectures[0], (type(model).__name__, config.architectures)
_, report = type(model).from_pretrained({repo!r}, revision={version!r}, output_loading_info=True)
assert not any(report.values()), report
image = np.zeros((32, 32, 3), dtype=np.uint8)
inputs = processor(images=image, text="<image> what is this?", return_tensors="pt")
with torch.no_grad():
    out = model(**inputs)
print("forward", tuple(out.logits.shape))
"""


def test_a_vision_language_card_loads_its_processor_and_model(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("llava", "hf-release-test/tiny-llava", hub, tmp_path)
    check = VISION_TEXT_CHECK.format(repo=release.repo_id, version=release.version)
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1].startswith("forward (1, ")


# After the adapter card's code: the adapter's every tensor is loaded as the file holds it, the base is the
# architecture its config names, and a forward pass runs and differs from the base alone (random A and B).
PEFT_CHECK = """
import torch
from huggingface_hub import hf_hub_download
from peft.utils import get_peft_model_state_dict
from safetensors.torch import load_file
from transformers import AutoTokenizer

assert type(model).__name__ == "PeftModelForCausalLM", type(model).__name__
saved = load_file(hf_hub_download({repo!r}, "adapter_model.safetensors", revision={version!r}))
loaded = get_peft_model_state_dict(model)
assert sorted(saved) == sorted(loaded), (sorted(saved), sorted(loaded))
assert all(torch.equal(saved[k], loaded[k]) for k in saved)
tokenizer = AutoTokenizer.from_pretrained({base!r})
inputs = tokenizer("hello world", return_tensors="pt")
with torch.no_grad():
    out = model(**inputs).logits
    with model.disable_adapter():
        plain = model(**inputs).logits
assert not torch.equal(out, plain)
print("forward", tuple(out.shape))
"""


def test_a_peft_card_loads_the_adapter_on_its_base(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    publish("llama", "hf-release-test/tiny-llama", hub, tmp_path / "base")  # the base adapter_config.json names
    release = publish("peft-lora", "hf-release-test/tiny-lora", hub, tmp_path)
    check = PEFT_CHECK.format(repo=release.repo_id, version=release.version, base="hf-release-test/tiny-llama")
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1].startswith("forward (1, ")


# After the GGUF card's code: transformers dequantized the file into the architecture it names, and a forward runs.
GGUF_CHECK = """
import torch

assert type(model).__name__ == "LlamaForCausalLM", type(model).__name__
with torch.no_grad():
    out = model(**tokenizer("hello world", return_tensors="pt"))
print("forward", tuple(out.logits.shape))
"""


def test_a_gguf_card_loads_the_file_with_gguf_file(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("gguf", "hf-release-test/tiny-gguf", hub, tmp_path)
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, GGUF_CHECK)
    last = out.strip().splitlines()[-1]
    assert last.startswith("forward (1, ") and last.endswith(", 384)")  # the vocabulary the GGUF file holds


# After the diffusers card's code: the pipeline is the class model_index.json names, with every component it
# names loaded as that class, and one denoising step makes an image of the size asked.
DIFFUSERS_CHECK = """
import json
from huggingface_hub import hf_hub_download

index = json.load(open(hf_hub_download({repo!r}, "model_index.json", revision={version!r})))
assert type(pipe).__name__ == index["_class_name"], type(pipe).__name__
components = ((k, v) for k, v in index.items() if not k.startswith("_") and isinstance(v, list) and v != [None, None])
for name, (library, cls) in components:
    assert type(getattr(pipe, name)).__name__ == cls, (name, type(getattr(pipe, name)).__name__, cls)
image = pipe("a photo", num_inference_steps=1, height=32, width=32, output_type="np").images
print("image", tuple(image.shape))
"""


def test_a_diffusers_card_loads_the_pipeline_and_makes_an_image(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("diffusers-sd", "hf-release-test/tiny-sd", hub, tmp_path)
    out = run_card_python(
        python,
        usage_python(release.card),
        hub,
        tmp_path,
        DIFFUSERS_CHECK.format(repo=release.repo_id, version=release.version),
    )
    assert out.strip().splitlines()[-1] == "image (1, 32, 32, 3)"


# After the diffusers LoRA card's code: the base is the pipeline published as the LoRA's base, the LoRA is one
# adapter on its unet holding every tensor of the file as the file holds it (diffusers' lora.down/lora.up are PEFT's
# lora_A/lora_B), the card's generation made an image, and one more denoising step makes one of the size asked.
DIFFUSERS_LORA_CHECK = """
import torch
from huggingface_hub import hf_hub_download
from peft.utils import get_peft_model_state_dict
from PIL import Image
from safetensors.torch import load_file

assert type(pipe).__name__ == "StableDiffusionPipeline", type(pipe).__name__
adapters = pipe.get_list_adapters()
assert list(adapters) == ["unet"] and len(adapters["unet"]) == 1, adapters
saved = load_file(hf_hub_download({repo!r}, "pytorch_lora_weights.safetensors", revision={version!r}))
peft_names = {{
    k.removeprefix("unet.").replace(".lora.down.", ".lora_A.").replace(".lora.up.", ".lora_B."): v
    for k, v in saved.items()
}}
loaded = get_peft_model_state_dict(pipe.unet, adapter_name=adapters["unet"][0])
assert sorted(peft_names) == sorted(loaded), (sorted(peft_names)[:4], sorted(loaded)[:4])
assert all(torch.equal(peft_names[k], loaded[k]) for k in loaded)
assert isinstance(image, Image.Image), type(image)
more = pipe("a photo", num_inference_steps=1, height=32, width=32, output_type="np").images
print("lora tensors", len(loaded), "image", tuple(more.shape))
"""


def test_a_diffusers_lora_card_loads_the_lora_on_its_base_pipeline(hub: LocalHub, tmp_path: Path) -> None:
    """diffusers-sd published as the base the LoRA's README names, at v1; the LoRA's spec pins that revision
    ([card.usage] base_revision); the card's Python runs as printed: base, load_lora_weights, a generation."""
    python = library_python("LIBRARY_PYTHON")
    base = "hf-release-test/tiny-sd"
    publish("diffusers-sd", base, hub, tmp_path / "base")
    release = publish(
        "diffusers-lora",
        "hf-release-test/tiny-sd-lora",
        hub,
        tmp_path,
        edit=lambda text: text.replace(
            "\n[card.metadata]\n", '\n[card.usage]\nbase_revision = "v1"\n\n[card.metadata]\n'
        ),
    )
    code = usage_python(release.card)
    assert f'DiffusionPipeline.from_pretrained("{base}", revision="v1")' in code, code
    check = DIFFUSERS_LORA_CHECK.format(repo=release.repo_id, version=release.version)
    out = run_card_python(python, code, hub, tmp_path, check)
    assert out.strip().splitlines()[-1] == "lora tensors 64 image (1, 32, 32, 3)"


# After the sentence-transformers card's code: two unit-length embeddings of the dimension the card states, and
# the similarity matrix the card prints is theirs (cosine: 1 on the diagonal).
SENTENCE_TRANSFORMERS_CHECK = """
import numpy as np

assert embeddings.shape == (2, {dimension}), embeddings.shape
norms = np.linalg.norm(embeddings, axis=1)
assert np.allclose(norms, 1.0, atol=1e-5), norms
similarity = model.similarity(embeddings, embeddings)
assert tuple(similarity.shape) == (2, 2) and np.allclose(np.diag(similarity.numpy()), 1.0, atol=1e-5), similarity
print("embeddings", embeddings.shape, "norms", norms.round(5).tolist())
"""


def test_a_sentence_transformers_card_encodes_unit_length_embeddings(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("sentence-transformers", "hf-release-test/tiny-embedder", hub, tmp_path)
    assert "| Embedding dimension | 32 |" in release.card
    out = run_card_python(
        python, usage_python(release.card), hub, tmp_path, SENTENCE_TRANSFORMERS_CHECK.format(dimension=32)
    )
    assert out.strip().splitlines()[-1] == "embeddings (2, 32) norms [1.0, 1.0]"


# After the CrossEncoder card's code: one score per (query, passage) pair the card scored, each in [0, 1] (the
# Sigmoid the card states), and the card's rank() ordered the passages by those scores.
CROSS_ENCODER_CHECK = """
import numpy as np

assert isinstance(scores, np.ndarray) and scores.shape == (len(passages),), scores
assert ((scores >= 0) & (scores <= 1)).all(), scores
ranked = model.rank(query, passages)
assert [r["corpus_id"] for r in ranked] == np.argsort(-scores, kind="stable").tolist(), (ranked, scores)
assert np.allclose([r["score"] for r in ranked], np.sort(scores)[::-1], atol=1e-6), (ranked, scores)
print("scores", scores.shape, "labels", model.num_labels)
"""


def test_a_cross_encoder_card_scores_query_passage_pairs(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("cross-encoder", "hf-release-test/tiny-reranker", hub, tmp_path)
    assert "| Scores | 1 per pair (one relevance score) |" in release.card
    assert "pipeline_tag: text-ranking" in release.card
    code = usage_python(release.card)
    assert 'CrossEncoder("hf-release-test/tiny-reranker", revision="v1")' in code and "model.predict(" in code, code
    out = run_card_python(python, code, hub, tmp_path, CROSS_ENCODER_CHECK)
    assert out.strip().splitlines()[-1] == "scores (2,) labels 1"


# After the timm card's code: the model timm built is the architecture config.json names, with its classifier of
# num_classes outputs and exactly the weights shipped at the tag, and a forward on the card's input size runs.
TIMM_CHECK = """
import torch
from huggingface_hub import hf_hub_download
from safetensors.torch import load_file

assert model.pretrained_cfg["architecture"] == {architecture!r}, model.pretrained_cfg
assert model.num_classes == {num_classes}, model.num_classes
shipped = load_file(hf_hub_download({repo!r}, "model.safetensors", revision={version!r}))
state = model.state_dict()
assert sorted(state) == sorted(shipped) and all(torch.equal(state[k], shipped[k]) for k in shipped)
with torch.no_grad():
    out = model(torch.zeros(1, *config["input_size"]))
print("forward", tuple(out.shape))
"""


def test_a_timm_card_creates_the_model_from_the_hub_at_the_tag(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish("timm", "hf-release-test/tiny-convnext", hub, tmp_path)
    check = TIMM_CHECK.format(
        architecture="test_convnext", num_classes=10, repo=release.repo_id, version=release.version
    )
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1] == "forward (1, 10)"


# After the hub-mixin card's code: the model is the class the spec names, built from config.json's arguments, holding
# exactly the tensors shipped at the tag, and a forward pass runs.
HUB_MIXIN_CHECK = """
import torch
from huggingface_hub import hf_hub_download
from safetensors.torch import load_file

assert type(model).__name__ == "TinyNet" and type(model).__module__ == "tinynet.model", type(model)
assert model.head.out_features == 3 and model.encoder[0].in_features == 8, model
shipped = load_file(hf_hub_download({repo!r}, "model.safetensors", revision={version!r}))
state = model.state_dict()
assert sorted(state) == sorted(shipped) and all(torch.equal(state[k], shipped[k]) for k in shipped)
with torch.no_grad():
    out = model(torch.zeros(1, 8))
print("forward", tuple(out.shape))
"""


def test_a_hub_mixin_card_loads_the_named_class_from_the_hub_at_the_tag(hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")

    def name_the_class(spec: str) -> str:  # the mixin does not write the class: the author names it
        assert 'model_class = "your_module.YourModelClass"' in spec
        return spec.replace('model_class = "your_module.YourModelClass"', 'model_class = "tinynet.TinyNet"')

    release = publish("hub-mixin", "hf-release-test/tinynet", hub, tmp_path, edit=name_the_class)
    code = usage_python(release.card)
    assert "from tinynet import TinyNet" in code and 'TinyNet.from_pretrained("hf-release-test/tinynet"' in code
    check = HUB_MIXIN_CHECK.format(repo=release.repo_id, version=release.version)
    out = run_card_python(python, code, hub, tmp_path, check, pythonpath=FIXTURES / "hub_mixin_src")
    assert out.strip().splitlines()[-1] == "forward (1, 3)"
