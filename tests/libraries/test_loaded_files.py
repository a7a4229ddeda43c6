"""The card's code, run as printed against the local Hub, loads what the libraries' own save functions wrote beyond
a plain config + weights: a model with its own code (trust_remote_code), a processor, a variant, pickle shards. The
load reports no missing, unexpected or newly initialised weights."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.localhub import LocalHub
from tests.libraries.conftest import library_python, publish, run_card_python, usage_python

# After the card's code: the model is the class config.json names, its load report is clean, and a forward runs.
LOAD_REPORT = """
import torch

assert type(model).__name__ == {architecture!r}, type(model).__name__
_, report = type(model).from_pretrained({repo!r}, revision={version!r}, output_loading_info=True{kwargs})
assert not any(report.values()), report
{forward}
print("ok", {shown})
"""

CASES = {
    "custom-code": (
        "TinyCodeForCausalLM",
        ", trust_remote_code=True",
        "out = model(input_ids=torch.tensor([[1, 2, 3]]))",
        "tuple(out.logits.shape)",
    ),
    "whisper": (
        "WhisperForConditionalGeneration",
        "",
        "features = processor([0.0] * 16000, sampling_rate=16000, return_tensors='pt').input_features\n"
        "out = model(input_features=features, decoder_input_ids=torch.tensor([[1]]))",
        "type(processor).__name__",
    ),
    "vit": (
        "ViTForImageClassification",
        "",
        "import numpy as np\n"
        "pixels = processor(np.zeros((32, 32, 3), dtype=np.uint8), return_tensors='pt').pixel_values\n"
        "out = model(pixel_values=pixels)\nassert out.logits.shape[-1] == len(model.config.id2label)",
        "type(processor).__name__",
    ),
    "llama-pickle": (
        "LlamaForCausalLM",
        "",
        "out = model(input_ids=torch.tensor([[1, 2, 3]]))",
        "tuple(out.logits.shape)",
    ),
    "llama-fp16": ("LlamaForCausalLM", ", variant='fp16'", "assert model.dtype == torch.float16", "str(model.dtype)"),
}


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_the_card_loads_what_the_library_saved(fixture: str, hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish(fixture, f"hf-release-test/tiny-{fixture}", hub, tmp_path)
    architecture, kwargs, forward, shown = CASES[fixture]
    check = LOAD_REPORT.format(
        architecture=architecture,
        repo=release.repo_id,
        version=release.version,
        kwargs=kwargs,
        forward=forward,
        shown=shown,
    )
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1].startswith("ok")
