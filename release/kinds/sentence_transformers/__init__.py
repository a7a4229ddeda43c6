"""The sentence-transformers kind: an embedding model as `SentenceTransformer.save` writes it (modules.json at the
root), or a reranker as `CrossEncoder.save` writes it (the same layout; config_sentence_transformers.json's
`model_type` is `CrossEncoder`).

Checks are the reader's (release/kinds/sentence_transformers/reader.py: modules.json and every module it names, a
Pooling dimension against the backbone's hidden size, a Dense module's weights, the similarity function) for the
modules, and the transformers kind's for the backbone: its config.json and safetensors at the root take roles
`config` and `weights` and are checked by role as the transformers model they are (the reader's own findings on
them are left out, so that a problem is named once). The modules' folders (`1_Pooling/`, `2_Normalize/`, …) take
role `sentence-transformers-module`, so their config.json is never taken for the backbone's.

The card: the embedding dimension, pooling, normalisation, similarity function and the model's maximum sequence
length (sentence-transformers' own, not the backbone's context length), `library_name: sentence-transformers`,
`pipeline_tag: sentence-similarity`, and a snippet encoding two sentences at this revision. A CrossEncoder's card: the
scores per pair, their activation function and the maximum sequence length of a (query, passage) pair,
`pipeline_tag: text-ranking`, and a snippet scoring (query, passage) pairs with `CrossEncoder.predict` at this revision.
The CrossEncoder is a form of this kind, not a kind of its own: the registry detects kinds by file names and
config.json, and both forms are the same files (modules.json at the root) read by the same reader; only a value inside
config_sentence_transformers.json tells them apart.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds import transformers
from release.kinds.kind import Kind, LoadProof
from release.kinds.own_files import card_part
from release.kinds.sentence_transformers.reader import (
    CrossEncoderFacts,
    SentenceTransformerFacts,
    read_sentence_transformer,
)
from release.spec import ReleaseSpec

POOLING_NAMES = {
    "cls": "CLS token",
    "max": "max over tokens",
    "mean": "mean of tokens",
    "mean_sqrt_len_tokens": "mean × √length",
    "weightedmean": "position-weighted mean",
    "lasttoken": "last token",
}
SIMILARITY_NAMES = {
    "cosine": "cosine",
    "dot": "dot product",
    "euclidean": "negative Euclidean distance",
    "manhattan": "negative Manhattan distance",
    "maxsim": "MaxSim",
    "meanmaxsim": "mean MaxSim",
}


def _backbone_files(facts: SentenceTransformerFacts | None) -> str | None:
    """The folder of the backbone (the Transformer module), whose config.json and weights are checked by role."""
    module = next((m for m in facts.modules if m.kind == "transformer"), None) if facts else None
    return module.path if module is not None else None


def files_check(
    files: Mapping[str, Path], card: dict[str, Any]
) -> tuple[SentenceTransformerFacts | None, list[Problem]]:
    """The model at the repo's root, read and checked; the backbone's config.json and weights are the role checks'."""
    facts, problems = read_sentence_transformer(files, "")
    backbone = _backbone_files(facts)
    if backbone is not None:

        def by_role(problem: Problem) -> bool:
            folder, name = posixpath.split(problem.file or "")
            return folder == backbone and (
                name == "config.json" or name.endswith((".safetensors", ".safetensors.index.json"))
            )

        problems = [p for p in problems if not by_role(p)]
    return facts, problems


# CrossEncoder's activation functions by the dotted path config_sentence_transformers.json names → what they do
ACTIVATIONS = {
    "torch.nn.modules.activation.Sigmoid": "Sigmoid: each score in [0, 1]",
    "torch.nn.modules.linear.Identity": "none: the head's raw logits",
    "torch.nn.modules.activation.Tanh": "Tanh: each score in [-1, 1]",
    "torch.nn.modules.activation.Softmax": "Softmax over the labels",
}
MAX_LABELS_SHOWN = 20


def _activation(cross: CrossEncoderFacts) -> str:
    """The activation CrossEncoder.predict applies, as the library picks it (get_default_activation_fn)."""
    from release.card.text import cell, code

    default = "torch.nn.modules.activation.Sigmoid" if cross.num_labels == 1 else "torch.nn.modules.linear.Identity"
    named = cross.activation_fn
    if named is None:
        return f"{ACTIVATIONS[default]} ({code(default)}), sentence-transformers' default"
    if not named.startswith("torch."):  # the library imports any other path only with trust_remote_code
        return (
            f"{code(named)}, applied only with {code('trust_remote_code=True')}; otherwise "
            f"{ACTIVATIONS[default]} ({code(default)}), sentence-transformers' default"
        )
    return f"{ACTIVATIONS[named]} ({code(named)})" if named in ACTIVATIONS else cell(code(named))


def _cross_rows(facts: SentenceTransformerFacts, cross: CrossEncoderFacts) -> list[tuple[str, str]]:
    from release.card.text import cell

    rows = []
    if facts.backbone is not None and facts.backbone.architecture:
        rows.append(("Backbone", cell(facts.backbone.architecture)))
    rows.append(("Model type", "CrossEncoder: scores (query, passage) pairs"))
    scores = f"{cross.num_labels:,} per pair" + (" (one relevance score)" if cross.num_labels == 1 else "")
    # transformers names labels LABEL_0, LABEL_1, … when none were given: those say nothing
    if cross.num_labels > 1 and cross.labels and cross.num_labels <= MAX_LABELS_SHOWN:
        if cross.labels != tuple(f"LABEL_{i}" for i in range(cross.num_labels)):
            scores += ": " + ", ".join(cell(label) for label in cross.labels)
    rows.append(("Scores", scores))
    rows.append(("Activation function", _activation(cross)))
    if facts.max_seq_length is not None:
        rows.append(("Max sequence length", f"{facts.max_seq_length:,} tokens (query and passage together)"))
    rows.append(
        ("Modules", " → ".join(cell(m.type.rsplit(".", 1)[-1]) for m in sorted(facts.modules, key=lambda m: m.idx)))
    )
    if facts.sentence_transformers_version:
        rows.append(("Saved with", cell(f"sentence-transformers {facts.sentence_transformers_version}")))
    return rows


def facts_rows(facts: SentenceTransformerFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    if facts.cross_encoder is not None:
        return _cross_rows(facts, facts.cross_encoder)
    rows = []
    if facts.backbone is not None and facts.backbone.architecture:
        rows.append(("Backbone", cell(facts.backbone.architecture)))
    if facts.embedding_dimension is not None:
        rows.append(("Embedding dimension", f"{facts.embedding_dimension:,}"))
    if facts.pooling_mode:
        rows.append(("Pooling", ", ".join(f"{POOLING_NAMES.get(m, m)} ({code(m)})" for m in facts.pooling_mode)))
    rows.append(("Normalized", "yes (unit length: a Normalize module)" if facts.normalized else "no"))
    similarity = SIMILARITY_NAMES.get(facts.similarity_fn_name, facts.similarity_fn_name)
    rows.append(
        (
            "Similarity function",
            f"{similarity} ({code(facts.similarity_fn_name)})"
            + ("" if facts.similarity_source != "default" else ", sentence-transformers' default"),
        )
    )
    if facts.max_seq_length is not None:
        rows.append(("Max sequence length", f"{facts.max_seq_length:,} tokens"))
    rows.append(
        ("Modules", " → ".join(cell(m.type.rsplit(".", 1)[-1]) for m in sorted(facts.modules, key=lambda m: m.idx)))
    )
    if facts.sentence_transformers_version:
        rows.append(("Saved with", cell(f"sentence-transformers {facts.sentence_transformers_version}")))
    return rows


def metadata(facts: SentenceTransformerFacts) -> dict[str, Any]:
    tag = "text-ranking" if facts.cross_encoder is not None else "sentence-similarity"
    return {"library_name": "sentence-transformers", "pipeline_tag": tag}


def _cross_encoder_usage(spec: ReleaseSpec, cross: CrossEncoderFacts) -> str:
    """`CrossEncoder(this repo, revision=this version)`, a query scored against two passages (and ranked by the one
    score, when the model gives one)."""
    lines = [
        "from sentence_transformers import CrossEncoder",
        "",
        f'model = CrossEncoder("{spec.repo_id}", revision="{spec.version}")',
        'query = "How many people live in Berlin?"',
        "passages = [",
        '    "Berlin has a population of 3,520,031 registered inhabitants.",',
        '    "Berlin is well known for its museums.",',
        "]",
        "scores = model.predict([(query, passage) for passage in passages])",
        "print(scores)",
    ]
    if cross.num_labels == 1:  # rank sorts by one score per passage
        lines.append("print(model.rank(query, passages))")
    return "```python\n" + "\n".join(lines) + "\n```"


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`SentenceTransformer(this repo, revision=this version)`, two sentences encoded and compared; a CrossEncoder's
    (query, passage) pairs scored instead."""
    read = getattr(facts.kind_facts, "read", None)
    cross = read.cross_encoder if isinstance(read, SentenceTransformerFacts) else None
    if cross is not None:
        return {"sentence_transformers": None, "cross_encoder": _cross_encoder_usage(spec, cross)}
    lines = [
        "from sentence_transformers import SentenceTransformer",
        "",
        f'model = SentenceTransformer("{spec.repo_id}", revision="{spec.version}")',
        'embeddings = model.encode(["The weather is lovely today.", "It\'s so sunny outside!"])',
        "print(model.similarity(embeddings, embeddings))",
    ]
    return {"sentence_transformers": "```python\n" + "\n".join(lines) + "\n```", "cross_encoder": None}


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: an embedding model (a reranker when config_sentence_transformers.json says CrossEncoder), on
    the backbone config.json names."""
    from release.formats.common import read_json_object

    st_config = next((d for d in detected if d.path.name == "config_sentence_transformers.json"), None)
    config = read_json_object(st_config.path, st_config.path.name)[0] if st_config is not None else None
    what = "reranker (CrossEncoder)" if (config or {}).get("model_type") == "CrossEncoder" else "embedding model"
    return f"a sentence-transformers {what}" + (f" on {', '.join(map(str, architectures))}" if architectures else "")


KIND = Kind(
    name="sentence-transformers",
    template="sentence-transformers.md.j2",
    config_problems=transformers.config_problems,  # the backbone's config.json (role config), as a transformers model
    tensor_problems=transformers.tensor_problems,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "sentence-transformers", "pipeline_tag": "sentence-similarity"},
    describe=describe,
    card_context=card_context,
    files_check=files_check,
    model_roles=(
        "weights",
        "weights-index",
        "config",
        "code",
        "sentence-transformers-config",
        "sentence-transformers-module",
    ),
    # the backbone loads through transformers (its load report); the modules are the library's own, read for real
    load_proof=LoadProof(
        "sentence_transformers",
        ("sentence_transformers", "cross_encoder"),
        "sentence-transformers",
        load_reports=(transformers.TRANSFORMERS_MODELS,),
        meta_device=False,
    ),
)
