"""The transformers card in a reader's words (issue 40): dtypes as torch names them, the generation defaults as
what generate() does, the transformers version that saved the model, and a generate() example for a causal LM
that ships no chat template."""

from __future__ import annotations

from pathlib import Path

from release.kinds.transformers.words import dtype_words, generation_words, saved_with
from release.verify import verify_staged
from tests.kinds.transformers.test_library_written import CHAT, build_card, folder_of, init_spec


def test_dtypes_in_torch_words() -> None:
    assert [dtype_words(d) for d in ("F32", "BF16", "F16", "I8", "F8_E4M3")] == [
        "float32",
        "bfloat16",
        "float16",
        "int8",
        "float8 (e4m3)",
    ]
    assert dtype_words("Q9_UNKNOWN") == "Q9_UNKNOWN"  # a name hf-release does not know is shown as written


def test_generation_defaults_in_words() -> None:
    assert generation_words({"do_sample": True, "temperature": 0.6, "top_p": 0.9}) == (
        "sampling on, temperature 0.6, top-p 0.9"
    )
    assert generation_words({"do_sample": False, "num_beams": 4, "max_new_tokens": 2048}) == (
        "sampling off (greedy), beam search, 4 beams, up to 2,048 new tokens"
    )


def test_saved_with_the_version_that_wrote_config_json() -> None:
    assert saved_with({"transformers_version": "5.24.0"}) == "transformers 5.24.0"
    assert saved_with({}) is None and saved_with({"transformers_version": " "}) is None


def test_the_card_says_which_transformers_saved_it_and_in_words(tmp_path: Path) -> None:
    dist, card, _ = build_card(init_spec(folder_of("llama", tmp_path), tmp_path), tmp_path)
    assert "| Saved with | transformers 5.24.0 (the version that wrote config.json; not a requirement) |" in card
    assert "| Tensor dtype | float32 |" in card and "F32" not in card.split("## Files")[0]
    assert "do_sample" not in card
    verify_staged(dist)  # each row recomputed from the staged files


def test_a_causal_lm_without_a_chat_template_gets_a_generate_example(tmp_path: Path) -> None:
    dist, card, _ = build_card(init_spec(folder_of("gpt2", tmp_path), tmp_path), tmp_path)
    assert CHAT not in card
    assert (
        'inputs = tokenizer("The capital of France is", return_tensors="pt")\n'
        "outputs = model.generate(**inputs, max_new_tokens=32)\n"
        "print(tokenizer.decode(outputs[0], skip_special_tokens=True))\n```"
    ) in card
    _, masked, _ = build_card(init_spec(folder_of("bert-mlm", tmp_path / "bert"), tmp_path / "bert"), tmp_path / "bert")
    assert "model.generate(" not in masked  # a masked LM does not generate
    verify_staged(dist)


def test_the_chat_example_fits_the_code_box_and_is_python(tmp_path: Path) -> None:
    import ast

    from release.card.text import CODE_WIDTH

    _, card, _ = build_card(init_spec(folder_of("llama", tmp_path), tmp_path), tmp_path)
    usage = card.split("## How to use this version", 1)[1].split("\n## ", 1)[0]
    block = usage.split("```python\n")[-1].split("```", 1)[0]
    assert CHAT in block and all(len(line) <= CODE_WIDTH for line in block.splitlines())
    ast.parse(block)  # continued lines still one call
