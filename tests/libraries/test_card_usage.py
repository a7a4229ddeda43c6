"""Each kind's card usage, run as printed against the local Hub at the tag, then one forward pass; the load
must report no missing, unexpected or newly initialised weights (transformers loads a lying config with
only a warning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.localhub import LocalHub
from tests.libraries.conftest import library_python, publish, run_card_python, usage_python

# After the card's code: the loaded model is the architecture config.json names, its load report is clean,
# and a forward pass runs.
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


@pytest.mark.parametrize("fixture", ["llama"])
def test_a_transformers_card_loads_the_model_it_describes(fixture: str, hub: LocalHub, tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    release = publish(fixture, f"hf-release-test/tiny-{fixture}", hub, tmp_path)
    check = TRANSFORMERS_CHECK.format(repo=release.repo_id, version=release.version)
    out = run_card_python(python, usage_python(release.card), hub, tmp_path, check)
    assert out.strip().splitlines()[-1].startswith("forward (1, ")
