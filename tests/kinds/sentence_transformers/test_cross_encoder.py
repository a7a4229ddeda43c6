"""The sentence-transformers kind's CrossEncoder form, on the folder sentence-transformers' own `CrossEncoder.save`
wrote (tests/fixtures/libraries/cross-encoder/: a BERT sequence classifier with one label): `init --files` → `build`
with no edit gives a reranker's card (`pipeline_tag: text-ranking`, `CrossEncoder(…).predict` on (query, passage)
pairs), and what its files can get wrong in the library's terms is refused in one line naming the file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from release.kinds.sentence_transformers.reader import read_sentence_transformer
from tests.formats.helpers import FIXTURES, copy_fixture, damage_every_file, only_problem, release_files
from tests.helpers import edit_json
from tests.kinds.test_library_kinds import built_card, folder, front_matter, refusal

REPO = "test-org/tiny-reranker"
CROSS = FIXTURES / "cross-encoder"
USAGE = (
    "from sentence_transformers import CrossEncoder\n\n"
    f'model = CrossEncoder("{REPO}", revision="v1")\n'
    'query = "How many people live in Berlin?"\n'
    "passages = [\n"
    '    "Berlin has a population of 3,520,031 registered inhabitants.",\n'
    '    "Berlin is well known for its museums.",\n'
    "]\n"
    "scores = model.predict([(query, passage) for passage in passages])\n"
    "print(scores)\n"
)


def read_st(folder: Path) -> Any:
    return read_sentence_transformer(release_files(folder))


def test_a_cross_encoder_builds_without_edits_as_a_reranker(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "cross-encoder"), REPO)
    text = spec.read_text("utf-8")
    written = tomllib.loads(text)
    assert 'kind = "sentence-transformers"  # detected: the release holds modules.json' in text
    assert written["card"]["summary"] == (
        "tiny-reranker: a sentence-transformers reranker (CrossEncoder) on BertForSequenceClassification "
        "(sentence-transformers), weights in 1 safetensors file."
    )
    meta = front_matter(card)
    assert meta["library_name"] == "sentence-transformers" and meta["pipeline_tag"] == "text-ranking"
    for row in (
        "| Backbone | BertForSequenceClassification |",
        "| Model type | CrossEncoder: scores (query, passage) pairs |",
        "| Scores | 1 per pair (one relevance score) |",
        "| Activation function | Sigmoid: each score in [0, 1] (`torch.nn.modules.activation.Sigmoid`) |",
        "| Max sequence length | 32 tokens (query and passage together) |",
        "| Modules | Transformer |",
        "| Saved with | sentence-transformers 6.2.0 |",
    ):
        assert row in card, row
    assert USAGE + "print(model.rank(query, passages))\n```" in card
    # nothing of the embedding form: no encode, no similarity function, no embedding dimension
    for embedding in ("SentenceTransformer(", ".encode(", "sentence-similarity", "Embedding dimension", "Pooling"):
        assert embedding not in card, embedding


def test_the_card_says_text_ranking_from_the_files_without_the_librarys_readme(tmp_path: Path) -> None:
    """The library's README.md carries `pipeline_tag: text-ranking` into the spec; without it, the files say it."""
    files = folder(tmp_path, "cross-encoder")
    (files / "README.md").unlink()
    spec, card = built_card(tmp_path, files, REPO)
    assert "metadata" not in tomllib.loads(spec.read_text("utf-8"))["card"]
    meta = front_matter(card)
    assert meta["library_name"] == "sentence-transformers" and meta["pipeline_tag"] == "text-ranking"


def test_a_classifier_head_whose_rows_differ_from_the_labels_is_refused_in_one_line(tmp_path: Path) -> None:
    files = folder(tmp_path, "cross-encoder")
    edit_json(files / "config.json", id2label={"0": "irrelevant", "1": "relevant"}, label2id={})
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(
        "config.json: id2label has 2 labels, but the classifier head classifier.weight has 1 rows; "
        "transformers: 'size mismatch for classifier.weight'"
    ), line


@pytest.mark.parametrize(
    ("model_type", "says"),
    [
        ("Reranker", "model_type is 'Reranker', which sentence-transformers does not know"),
        ("SparseEncoder", "model_type is 'SparseEncoder', a sentence-transformers model hf-release cannot card yet"),
    ],
)
def test_a_model_type_without_a_card_is_refused_in_one_line(tmp_path: Path, model_type: str, says: str) -> None:
    files = folder(tmp_path, "cross-encoder")
    edit_json(files / "config_sentence_transformers.json", model_type=model_type)
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(f"config_sentence_transformers.json: {says}"), line


def test_a_sequence_classification_task_on_a_backbone_without_a_head_is_refused_in_one_line(tmp_path: Path) -> None:
    """CrossEncoder would load a BertModel config with AutoModelForSequenceClassification and a random head."""
    files = folder(tmp_path, "cross-encoder")
    edit_json(files / "config.json", architectures=["BertModel"])
    [line] = refusal(tmp_path, files, REPO)
    assert line.startswith(
        "sentence_bert_config.json: transformer_task is 'sequence-classification', but config.json's "
        "architecture BertModel has no classification head"
    ), line


def test_a_malformed_activation_and_an_unknown_task_are_one_problem_each(tmp_path: Path) -> None:
    files = copy_fixture("cross-encoder", tmp_path)
    edit_json(files / "config_sentence_transformers.json", activation_fn=["Sigmoid"])
    only_problem(read_st(files)[1], "config_sentence_transformers.json", 'activation_fn is ["Sigmoid"]', "dotted path")
    edit_json(files / "config_sentence_transformers.json", activation_fn=None)
    edit_json(files / "sentence_bert_config.json", transformer_task="reranking")
    only_problem(read_st(files)[1], "sentence_bert_config.json", "transformer_task is 'reranking'", "does not load")
    edit_json(files / "sentence_bert_config.json", transformer_task="text-generation")
    only_problem(read_st(files)[1], "sentence_bert_config.json", "cards a CrossEncoder whose Transformer module is a")


def test_the_facts_read_from_the_crossencoders_files(tmp_path: Path) -> None:
    facts, problems = read_st(CROSS)
    assert problems == [] and facts.model_type == "CrossEncoder" and facts.cross_encoder is not None
    cross = facts.cross_encoder
    assert (cross.num_labels, cross.labels, cross.activation_fn) == (
        1,
        ("LABEL_0",),
        "torch.nn.modules.activation.Sigmoid",
    )
    assert facts.max_seq_length == 32 and facts.backbone.architecture == "BertForSequenceClassification"
    # the embedding fixtures are of the embedding form
    embedding, _ = read_st(FIXTURES / "sentence-transformers")
    assert embedding.model_type == "SentenceTransformer" and embedding.cross_encoder is None


def test_labels_and_an_activation_the_library_applies_only_with_remote_code_are_worded(tmp_path: Path) -> None:
    from release.kinds.sentence_transformers import facts_rows

    files = copy_fixture("cross-encoder", tmp_path)
    edit_json(files / "config.json", id2label={"0": "contradiction", "1": "entailment", "2": "neutral"})
    edit_json(files / "config_sentence_transformers.json", activation_fn="my_package.Scaled")
    facts, problems = read_st(files)
    assert problems == []  # the head's rows are the role check's (config.json against the weights), not the reader's
    rows = dict(facts_rows(facts))
    assert rows["Scores"] == "3 per pair: contradiction, entailment, neutral"
    assert rows["Activation function"] == (
        "`my_package.Scaled`, applied only with `trust_remote_code=True`; otherwise none: the head's raw logits "
        "(`torch.nn.modules.linear.Identity`), sentence-transformers' default"
    )
    edit_json(files / "config_sentence_transformers.json", activation_fn=None)
    edit_json(files / "config.json", id2label={"0": "LABEL_0", "1": "LABEL_1"})
    rows = dict(facts_rows(read_st(files)[0]))
    assert rows["Scores"] == "2 per pair"  # transformers' made-up names say nothing
    assert rows["Activation function"].endswith("(`torch.nn.modules.linear.Identity`), sentence-transformers' default")


def test_a_cross_encoder_with_several_labels_is_not_ranked_on_its_card(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from release.kinds.sentence_transformers import card_context

    files = copy_fixture("cross-encoder", tmp_path)
    edit_json(files / "config.json", num_labels=3)
    facts, _ = read_st(files)
    spec = SimpleNamespace(repo_id=REPO, version="v1")
    usage = card_context(spec, SimpleNamespace(kind_facts=SimpleNamespace(read=facts)))  # type: ignore[arg-type]
    assert usage["sentence_transformers"] is None and usage["cross_encoder"] == "```python\n" + USAGE + "```"


def test_verify_and_card_recompute_the_cross_encoders_facts(tmp_path: Path) -> None:
    from release.builder import build
    from release.card.staged import render_card
    from release.init import init_from_files
    from release.spec import load_spec
    from release.verify import verify_staged

    spec = init_from_files(tmp_path, "v1", folder(tmp_path, "cross-encoder"), REPO).spec
    staged = build(load_spec(spec), tmp_path / "dist").dist
    verify_staged(staged)
    assert render_card(load_spec(spec), staged, write=False).text == (staged / "README.md").read_text("utf-8")


def test_every_file_damaged_at_random_is_problems_never_a_traceback(tmp_path: Path) -> None:
    assert damage_every_file(tmp_path, "cross-encoder", read_sentence_transformer, count=30, seed=1) > 0


# --- cross-check with sentence-transformers ---


def test_the_library_loads_the_cross_encoder_with_the_facts_read_here() -> None:
    st = pytest.importorskip("sentence_transformers")
    model = st.CrossEncoder(str(CROSS), device="cpu")
    facts, _ = read_st(CROSS)
    assert model.num_labels == facts.cross_encoder.num_labels
    activation = type(model.activation_fn)
    assert f"{activation.__module__}.{activation.__qualname__}" == facts.cross_encoder.activation_fn
    assert model.max_seq_length == facts.max_seq_length
    assert json.loads((CROSS / "config_sentence_transformers.json").read_text())["model_type"] == type(model).__name__
    assert model.predict([("a query", "a passage"), ("a query", "another passage")]).shape == (2,)
