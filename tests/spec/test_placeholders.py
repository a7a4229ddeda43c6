"""Placeholders are not content: init's summary warns at build and is refused at push until the author writes one."""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import pytest

from release.builder import build
from release.errors import PublishRefused
from release.init import init_from_files
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.spec import load_spec
from release.spec.placeholders import placeholders
from tests.card.test_headings import h2
from tests.helpers import TOKEN, transformers_folder, write_summary

INIT_SUMMARY = "tiny-llama: a LlamaForCausalLM model (transformers), weights in 2 safetensors files."


def test_inits_summary_is_a_placeholder_and_words_of_ones_own_are_not() -> None:
    assert placeholders({"summary": INIT_SUMMARY}) == ("summary",)
    assert placeholders({"summary": "m: a LoRA adapter of org/base (peft-adapter)."}) == ("summary",)
    assert placeholders({"summary": "A tiny Llama for tests: 2 shards (transformers)."}) == ()
    assert placeholders({"summary": "tiny-llama: a LlamaForCausalLM model (nonesuch-kind)."}) == ()


def test_build_warns_and_push_refuses_while_inits_placeholder_is_there(
    tmp_path: Path, hub: LocalHub, caplog: pytest.LogCaptureFixture
) -> None:
    model = transformers_folder(tmp_path / "artifacts" / "incoming", shards=2)
    spec = init_from_files(tmp_path, "v1", model, "acme/tiny-llama").spec
    written = spec.read_text()
    for key in ("intended_use", "limitations", "training_data"):  # offered, commented: nothing is published unwritten
        assert f"\n# {key} = " in written and key not in tomllib.loads(written)["card"]
    with caplog.at_level(logging.WARNING):
        staged = build(load_spec(spec), tmp_path / "dist").dist
    assert any("[card] summary is still init's placeholder" in r.getMessage() for r in caplog.records), caplog.text
    assert INIT_SUMMARY in (staged / "README.md").read_text()  # rendered all the same: the author sees the card
    options = PushOptions(endpoint=hub.url, token=TOKEN, dry_run=True)
    with pytest.raises(PublishRefused) as refused:
        push(staged, options)
    (problem,) = refused.value.problems
    assert problem.file == "README.md (release.toml [card] summary)"
    assert "--allow-placeholder" in problem.message and refused.value.exit_code == 4
    push(staged, PushOptions(endpoint=hub.url, token=TOKEN, dry_run=True, allow_placeholder=True))

    caplog.clear()
    write_summary(spec, "A two-shard Llama for tests.")
    # what readers of a model card expect, written: its own sections, in the reading order
    text = spec.read_text().replace(
        '# intended_use = "What it is for, and what it is not for."',
        'intended_use = "Tests of hf-release; not for generating text."',
    )
    spec.write_text(
        text.replace('# limitations = "Known failure modes, biases and risks."', 'limitations = "Random weights."')
    )
    with caplog.at_level(logging.WARNING):
        staged = build(load_spec(spec), tmp_path / "dist").dist
    assert "placeholder" not in caplog.text
    card = (staged / "README.md").read_text()
    assert h2(card) == [
        "Summary",
        "Model",
        "Intended use",
        "How to use this version",
        "Evaluation",
        "Limitations",
        "Files",
        "Verify this release",
        "License",
    ]
    assert "Training data" not in card  # not written: left out
    push(staged, options)
