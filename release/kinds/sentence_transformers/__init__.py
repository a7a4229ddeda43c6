"""The sentence-transformers kind: an embedding model as `SentenceTransformer.save` writes it (modules.json at the
root).

Checks are the reader's (release/kinds/sentence_transformers/reader.py: modules.json and every module it names, a
Pooling dimension against the backbone's hidden size, a Dense module's weights, the similarity function) for the
modules, and the transformers kind's for the backbone: its config.json and safetensors at the root take roles
`config` and `weights` and are checked by role as the transformers model they are (the reader's own findings on
them are left out, so that a problem is named once). The modules' folders (`1_Pooling/`, `2_Normalize/`, …) take
role `sentence-transformers-module`, so their config.json is never taken for the backbone's.

The card: the embedding dimension, pooling, normalisation, similarity function and the model's maximum sequence
length (sentence-transformers' own, not the backbone's context length), `library_name: sentence-transformers`,
`pipeline_tag: sentence-similarity`, and a snippet encoding two sentences at this revision.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds import transformers
from release.kinds.kind import Kind
from release.kinds.own_files import card_part
from release.kinds.sentence_transformers.reader import SentenceTransformerFacts, read_sentence_transformer
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


def facts_rows(facts: SentenceTransformerFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

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
    return {"library_name": "sentence-transformers", "pipeline_tag": "sentence-similarity"}


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`SentenceTransformer(this repo, revision=this version)`, two sentences encoded and compared."""
    lines = [
        "from sentence_transformers import SentenceTransformer",
        "",
        f'model = SentenceTransformer("{spec.repo_id}", revision="{spec.version}")',
        'embeddings = model.encode(["The weather is lovely today.", "It\'s so sunny outside!"])',
        "print(model.similarity(embeddings, embeddings))",
    ]
    return {"sentence_transformers": "```python\n" + "\n".join(lines) + "\n```"}


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: an embedding model, on the backbone config.json names."""
    return "a sentence-transformers embedding model" + (
        f" on {', '.join(map(str, architectures))}" if architectures else ""
    )


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
)
