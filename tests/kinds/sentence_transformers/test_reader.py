"""release/kinds/sentence_transformers/reader.py on the same model saved by sentence-transformers 6.2.0 and 3.4.1 (the
two
layouts), and damaged copies; with sentence-transformers installed, the facts against the loaded model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.kinds.sentence_transformers.reader import SIMILARITIES, read_sentence_transformer
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files
from tests.helpers import edit_json

SIX, THREE = FIXTURES / "sentence-transformers", FIXTURES / "sentence-transformers-v3"


def read_st_model(folder: Path) -> Any:
    return read_sentence_transformer(release_files(folder))


@pytest.mark.parametrize(
    ("folder", "layout", "version", "length_source"),
    [
        (SIX, "6.x", "6.2.0", "tokenizer_config.json model_max_length"),
        (THREE, "≤5.x", "3.4.1", "sentence_bert_config.json max_seq_length"),
    ],
)
def test_both_layouts_read_to_the_same_facts(folder: Path, layout: str, version: str, length_source: str) -> None:
    facts, problems = read_st_model(folder)
    assert problems == [] and facts is not None
    assert [m.kind for m in facts.modules] == ["transformer", "pooling", "normalize"]
    assert (facts.layout, facts.sentence_transformers_version) == (layout, version)
    assert (facts.embedding_dimension, facts.pooling_mode, facts.normalized) == (32, ("mean",), True)
    assert (facts.similarity_fn_name, facts.similarity_source) == ("cosine", "config_sentence_transformers.json")
    assert (facts.max_seq_length, facts.max_seq_length_source) == (32, length_source)
    assert (
        facts.backbone is not None
        and facts.backbone.architecture == "BertModel"
        and facts.backbone.parameter_count == 23_296
    )


def test_a_modules_json_naming_a_missing_module_is_one_problem(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers", tmp_path)
    modules = json.loads((folder / "modules.json").read_text())
    modules.append({"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.base.modules.dense.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    _, problems = read_st_model(folder)
    only_problem(problems, "3_Dense/config.json", "modules.json names module '3' (Dense) at '3_Dense/'")


@pytest.mark.parametrize(
    ("fixture", "key"),
    [("sentence-transformers", "embedding_dimension"), ("sentence-transformers-v3", "word_embedding_dimension")],
)
def test_a_pooling_dimension_other_than_the_hidden_size_is_one_problem(tmp_path: Path, fixture: str, key: str) -> None:
    folder = copy_fixture(fixture, tmp_path)
    edit_json(folder / "1_Pooling" / "config.json", **{key: 16})
    facts, problems = read_st_model(folder)
    only_problem(
        problems, "1_Pooling/config.json", "pools 16-dimensional token embeddings, but the backbone's hidden size is 32"
    )
    assert facts.embedding_dimension == 16


def test_the_3x_pooling_booleans_are_read_and_none_set_is_refused(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers-v3", tmp_path)
    edit_json(folder / "1_Pooling" / "config.json", pooling_mode_cls_token=True)
    facts, problems = read_st_model(folder)
    assert (
        problems == [] and facts.pooling_mode == ("cls", "mean") and facts.embedding_dimension == 64
    )  # modes concatenate
    edit_json(folder / "1_Pooling" / "config.json", pooling_mode_cls_token=False, pooling_mode_mean_tokens=False)
    only_problem(read_st_model(folder)[1], "1_Pooling/config.json", "names no pooling mode sentence-transformers knows")


def test_the_tokenizers_length_is_capped_at_the_backbones_positions(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers", tmp_path)
    edit_json(
        folder / "tokenizer_config.json", model_max_length=1000000000000000019884624838656
    )  # transformers' "no limit"
    facts, problems = read_st_model(folder)
    assert problems == [] and facts.max_seq_length == 64
    assert facts.max_seq_length_source.endswith("capped at config.json max_position_embeddings")


def test_a_similarity_the_library_does_not_know_and_a_missing_config_default(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers", tmp_path)
    edit_json(folder / "config_sentence_transformers.json", similarity_fn_name="cosinus")
    only_problem(read_st_model(folder)[1], "config_sentence_transformers.json", "similarity_fn_name is 'cosinus'")
    (folder / "config_sentence_transformers.json").unlink()
    facts, problems = read_st_model(folder)
    assert problems == [] and (facts.similarity_fn_name, facts.similarity_source) == ("cosine", "default")


def test_a_broken_modules_json_and_a_missing_one_are_one_problem_each(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers", tmp_path)
    (folder / "modules.json").write_text(json.dumps({"idx": 0}))
    only_problem(read_st_model(folder)[1], "modules.json", "must be a list of 1 to 64 modules")
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "", "type": "x"}] * 2))
    only_problem(read_st_model(folder)[1], "modules.json", "repeats an idx")
    (folder / "modules.json").unlink()
    only_problem(read_st_model(folder)[1], "modules.json", "is missing")


def test_the_backbone_is_checked_as_a_transformers_model(tmp_path: Path) -> None:
    folder = copy_fixture("sentence-transformers", tmp_path)
    edit_json(folder / "config.json", num_hidden_layers=4)
    only_problem(
        read_st_model(folder)[1], "config.json", "num_hidden_layers is 4", "holds layers 0–1 (encoder.layer.N.)"
    )


@pytest.mark.parametrize("fixture", ["sentence-transformers", "sentence-transformers-v3"])
def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path, fixture: str) -> None:
    assert (
        damage_every_file(tmp_path, fixture, read_sentence_transformer, count=30, seed=1) > 0
    )  # JSON nodes retyped, bytes cut and overwritten


# --- cross-checks with sentence-transformers ---


@pytest.mark.parametrize("folder", [SIX, THREE], ids=["6.x", "3.x"])
def test_the_library_loads_each_layout_with_the_facts_read_here(folder: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    model = st.SentenceTransformer(str(folder), device="cpu")
    facts, _ = read_st_model(folder)
    assert model.get_sentence_embedding_dimension() == facts.embedding_dimension
    assert model.max_seq_length == facts.max_seq_length
    assert str(model.similarity_fn_name) == facts.similarity_fn_name
    assert [type(m).__name__ for m in model] == [m.type.rsplit(".", 1)[-1] for m in facts.modules]
    embedding = model.encode(["a sentence"], normalize_embeddings=False)
    assert abs(float((embedding**2).sum()) - 1.0) < 1e-4  # the Normalize module read here is the one that runs


def test_a_dense_module_saved_by_the_library_sets_the_dimension(tmp_path: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    from sentence_transformers.base.modules.dense import Dense

    model = st.SentenceTransformer(str(SIX), device="cpu")
    model.append(Dense(in_features=32, out_features=8))
    model.save(str(tmp_path / "dense"))
    facts, problems = read_st_model(tmp_path / "dense")
    assert (
        problems == []
        and facts.embedding_dimension
        == 8
        == st.SentenceTransformer(str(tmp_path / "dense")).get_sentence_embedding_dimension()
    )
    edit_json(next((tmp_path / "dense").glob("*_Dense/config.json")), in_features=16)
    assert any(
        "in_features is 16, but the module before it outputs 32" in p.message
        for p in read_st_model(tmp_path / "dense")[1]
    )


def test_the_similarity_names_are_the_librarys() -> None:
    pytest.importorskip("sentence_transformers")
    from sentence_transformers.util.similarity import SimilarityFunction

    for name in SIMILARITIES:
        SimilarityFunction.to_similarity_fn(name)
