"""The sentence-transformers kind, on folders the library's own `SentenceTransformer.save` wrote in both layouts
(tests/fixtures/libraries/sentence-transformers/: 6.x, sentence-transformers-v3/: 3.x): `init --files` → `build`
with no edit gives the card the Hub expects for an embedding model, and each corruption is refused in one line
naming the file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.kinds.test_library_kinds import built_card, folder, front_matter, refusal

REPO = "test-org/tiny-embedder"
FIXTURES = ("sentence-transformers", "sentence-transformers-v3")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_a_sentence_transformer_builds_without_edits_as_an_embedding_model(tmp_path: Path, fixture: str) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, fixture), REPO)
    text = spec.read_text("utf-8")
    written = tomllib.loads(text)
    assert 'kind = "sentence-transformers"  # detected: the release holds modules.json' in text
    roles = {f.get("path_in_repo", Path(f["source"]).name): f["role"] for f in written["files"]}
    # the modules' configs are not the backbone's: one file has role config, the backbone's, checked as transformers
    assert [path for path, role in roles.items() if role == "config"] == ["config.json"]
    assert roles["model.safetensors"] == "weights" and roles["1_Pooling/config.json"] == "sentence-transformers-module"
    assert roles["modules.json"] == "sentence-transformers-config"
    if fixture == "sentence-transformers":
        assert roles["2_Normalize/config.json"] == "sentence-transformers-module"
    assert written["card"]["summary"] == (
        "tiny-embedder: a sentence-transformers embedding model on BertModel (sentence-transformers), "
        "weights in 1 safetensors file."
    )
    # the library's README: its front matter carried into the spec
    assert written["card"]["metadata"]["library_name"] == "sentence-transformers"
    assert written["card"]["metadata"]["pipeline_tag"] == "sentence-similarity"
    meta = front_matter(card)
    assert meta["library_name"] == "sentence-transformers" and meta["pipeline_tag"] == "sentence-similarity"
    for row in (
        "| Backbone | BertModel |",
        "| Embedding dimension | 32 |",
        "| Pooling | mean of tokens (`mean`) |",
        "| Normalized | yes (unit length: a Normalize module) |",
        "| Similarity function | cosine (`cosine`) |",
        "| Max sequence length | 32 tokens |",
    ):
        assert row in card, row
    assert "64" not in card.split("## ")[2]  # the backbone's 64 positions are not the model's maximum sequence length
    assert (
        "from sentence_transformers import SentenceTransformer\n\n"
        f'model = SentenceTransformer("{REPO}", revision="v1")\n'
        'embeddings = model.encode(["The weather is lovely today.", "It\'s so sunny outside!"])\n'
        "print(model.similarity(embeddings, embeddings))"
    ) in card
    assert "from transformers import" not in card and "library_name: transformers" not in card


def test_modules_json_naming_a_missing_module_is_refused_in_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "sentence-transformers")
    (files / "1_Pooling" / "config.json").unlink()
    (files / "1_Pooling").rmdir()
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(
        "1_Pooling/config.json: is missing: modules.json names module '1' (Pooling) at '1_Pooling/'"
    ), line


def test_a_pooling_dimension_other_than_the_hidden_size_is_refused_in_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "sentence-transformers-v3")
    pooling = files / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text("utf-8"))
    config["word_embedding_dimension"] = 48
    pooling.write_text(json.dumps(config), "utf-8")
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(
        "1_Pooling/config.json: pools 48-dimensional token embeddings, but the backbone's hidden size is 32"
    ), line


def test_a_broken_backbone_is_checked_as_the_transformers_model_it_is_and_named_once(tmp_path: Path) -> None:
    files = folder(tmp_path, "sentence-transformers")
    config = json.loads((files / "config.json").read_text("utf-8"))
    config["num_hidden_layers"] += 1
    (files / "config.json").write_text(json.dumps(config), "utf-8")
    lines = refusal(tmp_path, files, REPO)
    assert len(lines) == 1 and lines[0].startswith("config.json: "), lines


@pytest.mark.parametrize("fixture", FIXTURES)
def test_verify_and_card_recompute_the_facts_from_the_staged_files(tmp_path: Path, fixture: str) -> None:
    """verify re-reads the modules and the backbone as build did; the card re-renders from the staged files byte for
    byte."""
    from release.builder import build
    from release.card.staged import render_card
    from release.init import init_from_files
    from release.spec import load_spec
    from release.verify import verify_staged

    spec = init_from_files(tmp_path, "v1", folder(tmp_path, fixture), REPO).spec
    staged = build(load_spec(spec), tmp_path / "dist").dist
    verify_staged(staged)
    again = render_card(load_spec(spec), staged, write=False)
    assert again.text == (staged / "README.md").read_text("utf-8")


def test_only_a_modules_json_at_the_root_shows_the_kind_and_only_module_folders_take_its_role() -> None:
    from release.kinds import detect_kind, role_for

    assert detect_kind(None, ["modules.json", "config.json"])[0].name == "sentence-transformers"
    assert detect_kind({"architectures": ["BertModel"]}, ["sub/modules.json", "config.json"])[0].name == "transformers"
    assert role_for("config.json", "1_Pooling/config.json")[0].name == "sentence-transformers-module"
    assert role_for("model.safetensors", "2_Dense/model.safetensors")[0].name == "sentence-transformers-module"
    assert role_for("config.json", "config.json") is None and role_for("config.json", "vision/config.json") is None
