"""A GGUF of a language model gets `pipeline_tag: text-generation` (what llama.cpp runs it for); an embedding model's
GGUF (pooling, an encoder-only architecture) gets none."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from release.kinds.gguf import metadata
from release.kinds.gguf.reader import GGUFModel
from tests.kinds.test_library_kinds import built_card, folder, front_matter

LM = GGUFModel(("m.gguf",), "llama", None, 128, 16, 2, 1, "F16", {}, 10, True, 384, 1)


def test_a_language_model_s_gguf_card_says_text_generation(tmp_path: Path) -> None:
    _, card = built_card(tmp_path, folder(tmp_path, "gguf"), "test-org/tiny-gguf")
    assert front_matter(card)["pipeline_tag"] == "text-generation"


def test_an_embedding_model_s_gguf_gets_no_generation_tag() -> None:
    assert metadata((LM,)) == {"library_name": "gguf", "pipeline_tag": "text-generation"}
    for other in (replace(LM, pooling_type=1), replace(LM, architecture="nomic-bert"), replace(LM, vocab_size=None)):
        assert metadata((other,)) == {"library_name": "gguf"}
    assert metadata((LM, replace(LM, architecture="clip"))) == {"library_name": "gguf"}
