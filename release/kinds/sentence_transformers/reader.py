"""A sentence-transformers model as `SentenceTransformer.save` writes it, in both layouts.

`modules.json` lists the modules in order (`idx`, `name`, `path`, `type`). Up to 5.x the types are
`sentence_transformers.models.Transformer` / `.Pooling` / `.Dense` / `.Normalize`; 6.x names them by module
(`sentence_transformers.base.modules.transformer.Transformer`, `sentence_transformers.sentence_transformer.modules.
pooling.Pooling`, `sentence_transformers.base.modules.normalize.Normalize`, …). Pooling's `config.json` holds
`word_embedding_dimension` and `pooling_mode_*_tokens` booleans (≤ 5.x) or `embedding_dimension` and `pooling_mode`
(6.x); its dimension is the backbone's hidden size, and the embedding it outputs is that × the number of modes, until
a Dense module maps it to `out_features`. The maximum sequence length is `sentence_bert_config.json`'s
`max_seq_length` where a version wrote it there (≤ 5.x), else the tokenizer's `model_max_length` (6.x keeps
`transformer_task` / `modality_config` in sentence_bert_config.json), capped at the backbone's
`max_position_embeddings` as the library caps it.

`config_sentence_transformers.json`'s `model_type` says which of the library's model classes saved the folder (none:
`SentenceTransformer`, as the library reads older saves). A `CrossEncoder` (a reranker) is one Transformer module whose
`sentence_bert_config.json` `transformer_task` is `sequence-classification`: the backbone's classifier head gives
`num_labels` scores per (query, passage) pair (`id2label`'s labels, transformers' default 2 without one), through the
`activation_fn` the file names (a `torch.` path; without one, Sigmoid for one label, else none), as
`CrossEncoder.predict` applies them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from release.errors import Problem
from release.formats.common import Files, as_int, join, one_line, read_json, read_json_object, under
from release.formats.safetensors_header import read_weights
from release.formats.transformers_config import TransformersFacts, read_transformers_model

MAX_MODULES = 64
KINDS = {"Transformer": "transformer", "Pooling": "pooling", "Dense": "dense", "Normalize": "normalize"}
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
LEGACY_MODES = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan", "maxsim", "meanmaxsim")  # maxsim: 6.x multi-vector
FIX = "save the model again with sentence-transformers' SentenceTransformer.save"
CROSS_FIX = "save the model again with sentence-transformers' CrossEncoder.save"
# config_sentence_transformers.json model_type: the library's model classes (6.2); hf-release cards the first two
MODEL_TYPES = ("SentenceTransformer", "CrossEncoder", "SparseEncoder", "MultiVectorEncoder")
CARDED_MODEL_TYPES = ("SentenceTransformer", "CrossEncoder")
# sentence_bert_config.json transformer_task: the tasks the library's Transformer module loads (6.2)
TRANSFORMER_TASKS = (
    "feature-extraction",
    "sequence-classification",
    "text-generation",
    "fill-mask",
    "retrieval",
    "any-to-any",
)


@dataclass(frozen=True)
class STModule:
    idx: int
    name: str
    path: str  # its folder in the repo ("" for a backbone at the root)
    type: str  # as modules.json writes it
    # "transformer", "pooling", "dense", "normalize", "other" (a sentence-transformers module not read here), "custom"
    kind: str


@dataclass(frozen=True)
class SentenceTransformerFacts:
    layout: str  # "6.x" (module paths) or "≤5.x" (sentence_transformers.models.*)
    modules: tuple[STModule, ...]
    backbone: TransformersFacts | None
    embedding_dimension: int | None  # what encode() returns: after pooling and any Dense module
    pooling_mode: tuple[str, ...]
    normalized: bool  # a Normalize module is in the pipeline
    similarity_fn_name: str
    similarity_source: str  # "config_sentence_transformers.json" or "default"
    max_seq_length: int | None
    max_seq_length_source: str | None  # e.g. "sentence_bert_config.json max_seq_length"
    sentence_transformers_version: str | None  # the version that saved it (config_sentence_transformers.json)
    model_type: str = "SentenceTransformer"  # config_sentence_transformers.json's: the class that loads it
    cross_encoder: CrossEncoderFacts | None = None  # the CrossEncoder form's own facts


@dataclass(frozen=True)
class CrossEncoderFacts:
    """What CrossEncoder.predict gives per (query, passage) pair."""

    num_labels: int  # scores per pair: the classifier head's labels
    labels: tuple[str, ...]  # id2label's names, in label order (empty: config.json gives none)
    activation_fn: str | None  # the dotted path config_sentence_transformers.json names; None: the library's default


def _kind(type_name: str) -> str:
    if not type_name.startswith("sentence_transformers."):
        return "custom"
    return KINDS.get(type_name.rsplit(".", 1)[-1], "other")


def _read_modules(files: Files, label: str) -> tuple[list[STModule], list[Problem]]:
    if label not in files:
        return [], [Problem(label, f"is missing; sentence-transformers reads the modules from it, so {FIX}")]
    data, problem = read_json(files[label], label)
    if problem is not None:
        return [], [problem]
    if not isinstance(data, list) or not data or len(data) > MAX_MODULES:
        return [], [Problem(label, f"must be a list of 1 to {MAX_MODULES} modules ({{idx, name, path, type}}); {FIX}")]
    modules, seen = [], set()
    for entry in data:
        if not (
            isinstance(entry, dict)
            and as_int(entry.get("idx")) is not None
            and all(isinstance(entry.get(k), str) for k in ("name", "path", "type"))
        ):
            return [], [Problem(label, f"entry {str(entry)[:80]} is not {{idx, name, path, type}}; {FIX}")]
        path = entry["path"].strip("/")
        if entry["idx"] in seen or ".." in path.split("/"):
            return [], [Problem(label, f"entry {str(entry)[:80]} repeats an idx or leaves the model's folder; {FIX}")]
        seen.add(entry["idx"])
        modules.append(STModule(entry["idx"], entry["name"], path, entry["type"], _kind(entry["type"])))
    return modules, []


def _pooling(config: Mapping[str, object], label: str) -> tuple[int | None, tuple[str, ...], list[Problem]]:
    """(word dimension, modes) in either layout."""
    dimension = as_int(config.get("embedding_dimension", config.get("word_embedding_dimension")))
    mode = config.get("pooling_mode")
    if mode is None:
        modes = tuple(m for key, m in LEGACY_MODES.items() if config.get(key) is True)
    else:
        modes = (mode,) if isinstance(mode, str) else tuple(mode) if isinstance(mode, list) else ()
    problems = []
    if dimension is None:
        problems.append(Problem(label, f"has no embedding_dimension (word_embedding_dimension before 6.x); {FIX}"))
    if not modes or not all(m in POOLING_MODES for m in modes):
        problems.append(
            Problem(label, f"names no pooling mode sentence-transformers knows ({', '.join(POOLING_MODES)}); {FIX}")
        )
    return dimension, modes, problems


def _max_length(files: Files, path: str, backbone: TransformersFacts | None) -> tuple[int | None, str | None]:
    for name in ("sentence_bert_config.json", "sentence_roberta_config.json", "sentence_distilbert_config.json"):
        label = join(path, name)
        if label in files:
            config, _ = read_json_object(files[label], label)
            if config and as_int(config.get("max_seq_length")) is not None:
                return config["max_seq_length"], f"{label} max_seq_length"
            break
    label = join(path, "tokenizer_config.json")
    config, _ = read_json_object(files[label], label) if label in files else (None, None)
    length = as_int(config.get("model_max_length")) if config else None
    if length is None:
        return None, None
    positions = backbone.sizes.get("max_position_embeddings") if backbone else None
    if positions is not None and 0 < positions.value < length:
        return positions.value, f"{label} model_max_length {length:,}, capped at config.json {positions.key}"
    return length, f"{label} model_max_length"


@one_line
def read_sentence_transformer(files: Files, folder: str = "") -> tuple[SentenceTransformerFacts | None, list[Problem]]:
    """`folder/modules.json` and every module it names, with the backbone checked as a transformers model."""
    modules, problems = _read_modules(files, join(folder, "modules.json"))
    if not modules:
        return None, problems
    backbone: TransformersFacts | None = None
    dimension: int | None = None
    modes: tuple[str, ...] = ()
    length: tuple[int | None, str | None] = (None, None)
    for module in sorted(modules, key=lambda m: m.idx):
        path = join(folder, module.path)
        inside = under(files, path)
        label = join(path, "config.json")
        if module.kind == "transformer":
            backbone, backbone_problems = read_transformers_model(files, path)
            problems += backbone_problems
            hidden = backbone.sizes.get("hidden_size") if backbone else None
            dimension = hidden.value if hidden else None
            length = _max_length(files, path, backbone)
        elif module.kind in ("pooling", "dense"):
            if "config.json" not in inside:
                problems.append(
                    Problem(
                        label,
                        f"is missing: modules.json names module '{module.name}' ({module.type.rsplit('.', 1)[-1]}) "
                        f"at '{module.path}/', which sentence-transformers loads from it; {FIX}",
                    )
                )
                dimension = None
                continue
            config, problem = read_json_object(files[label], label)
            if problem is not None or config is None:
                problems += [problem] if problem else []
                dimension = None
                continue
            if module.kind == "pooling":
                word, modes, pooling_problems = _pooling(config, label)
                problems += pooling_problems
                if word is not None and dimension is not None and word != dimension:
                    problems.append(
                        Problem(
                            label,
                            f"pools {word}-dimensional token embeddings, but the backbone's hidden size is "
                            f"{dimension} (config.json {backbone.sizes['hidden_size'].key if backbone else ''}); "
                            f"fix the Pooling dimension or {FIX}",
                        )
                    )
                dimension = word * len(modes) if word is not None and modes else None
            else:
                dimension = _dense(files, path, config, dimension, label, problems)
        elif module.kind in ("other", "custom") and module.path and not inside:
            problems.append(
                Problem(
                    module.path + "/",
                    f"is missing: modules.json names module '{module.name}' ({module.type}) there; "
                    f"add the folder or {FIX}",
                )
            )
    st_label = join(folder, "config_sentence_transformers.json")
    st_config, problem = read_json_object(files[st_label], st_label) if st_label in files else (None, None)
    problems += [problem] if problem else []
    similarity = (st_config or {}).get("similarity_fn_name")
    if similarity is not None and similarity not in SIMILARITIES:
        problems.append(
            Problem(
                st_label,
                f"similarity_fn_name is {similarity!r}; sentence-transformers knows "
                f"{', '.join(SIMILARITIES)}; fix it or {FIX}",
            )
        )
    model_type = (st_config or {}).get("model_type", "SentenceTransformer")  # as the library reads it
    cross: CrossEncoderFacts | None = None
    if model_type not in CARDED_MODEL_TYPES:
        known = model_type in MODEL_TYPES
        problems.append(
            Problem(
                st_label,
                f"model_type is {str(model_type)[:80]!r}, "
                + (
                    "a sentence-transformers model hf-release cannot card yet (it cards SentenceTransformer and "
                    "CrossEncoder models)"
                    if known
                    else f"which sentence-transformers does not know ({', '.join(MODEL_TYPES)}); fix it or {FIX}"
                ),
            )
        )
    transformer = next((m for m in modules if m.kind == "transformer"), None)
    task = _transformer_task(files, join(folder, transformer.path), problems) if transformer else None
    if model_type == "CrossEncoder":
        cross = _cross_encoder(files, folder, transformer, task, backbone, st_config or {}, st_label, problems)
    versions = (st_config or {}).get("__version__")
    version = versions.get("sentence_transformers") if isinstance(versions, dict) else None
    six = any(
        m.type.startswith(("sentence_transformers.base.", "sentence_transformers.sentence_transformer."))
        for m in modules
    )
    return SentenceTransformerFacts(
        layout="6.x" if six else "≤5.x",
        modules=tuple(modules),
        backbone=backbone,
        embedding_dimension=dimension,
        pooling_mode=modes,
        normalized=any(m.kind == "normalize" for m in modules),
        similarity_fn_name=similarity if isinstance(similarity, str) else "cosine",
        similarity_source="config_sentence_transformers.json" if isinstance(similarity, str) else "default",
        max_seq_length=length[0],
        max_seq_length_source=length[1],
        sentence_transformers_version=version if isinstance(version, str) else None,
        model_type=model_type if isinstance(model_type, str) else "",
        cross_encoder=cross,
    ), problems


def _transformer_task(files: Files, path: str, problems: list[Problem]) -> str:
    """The Transformer module's transformer_task (sentence_bert_config.json; none: feature-extraction, as the library
    reads ≤ 5.x saves)."""
    label = join(path, "sentence_bert_config.json")
    config, _ = read_json_object(files[label], label) if label in files else (None, None)
    task = (config or {}).get("transformer_task", "feature-extraction")
    if task not in TRANSFORMER_TASKS:
        problems.append(
            Problem(
                label,
                f"transformer_task is {str(task)[:80]!r}, which sentence-transformers' Transformer module does not "
                f"load ({', '.join(TRANSFORMER_TASKS)}); fix it or {FIX}",
            )
        )
    return task if isinstance(task, str) else ""


def _cross_encoder(
    files: Files,
    folder: str,
    transformer: STModule | None,
    task: str | None,
    backbone: TransformersFacts | None,
    st_config: Mapping[str, object],
    st_label: str,
    problems: list[Problem],
) -> CrossEncoderFacts | None:
    """A CrossEncoder as CrossEncoder.save writes a sequence classifier: its scores per pair and their activation."""
    activation = st_config.get("activation_fn")
    if activation is not None and not (isinstance(activation, str) and activation.strip()):
        problems.append(
            Problem(
                st_label,
                f"activation_fn is {json.dumps(activation)[:80]}; CrossEncoder imports it as a dotted path "
                f"(e.g. 'torch.nn.modules.activation.Sigmoid') or takes null for its default; fix it or {CROSS_FIX}",
            )
        )
        activation = None
    if transformer is None:
        problems.append(
            Problem(
                join(folder, "modules.json"),
                f"names no Transformer module, which a CrossEncoder scores with; {CROSS_FIX}",
            )
        )
        return None
    bert_label = join(join(folder, transformer.path), "sentence_bert_config.json")
    if task != "sequence-classification":
        if task not in TRANSFORMER_TASKS:
            return None  # _transformer_task named it
        problems.append(
            Problem(
                bert_label,
                f"transformer_task is {task!r}; hf-release cards a CrossEncoder whose Transformer module is a sequence "
                "classifier ('sequence-classification', as CrossEncoder.save writes a classifier's), whose head gives "
                "the scores",
            )
        )
        return None
    if backbone is None:
        return None  # config.json's own problem is the role check's
    architecture = backbone.architecture or ""
    if not architecture.endswith("ForSequenceClassification"):
        problems.append(
            Problem(
                bert_label,
                "transformer_task is 'sequence-classification', but config.json's architecture "
                f"{architecture or '(none)'} has no classification head: CrossEncoder would load it with a new, "
                f"randomly initialised head, and its scores would mean nothing; {CROSS_FIX} from a sequence classifier",
            )
        )
        return None
    config_label = join(join(folder, transformer.path), "config.json")
    config, _ = read_json_object(files[config_label], config_label)
    id2label = (config or {}).get("id2label")
    count = as_int((config or {}).get("num_labels"))
    named = (
        tuple(str(id2label[k]) for k in sorted(id2label, key=lambda k: int(k) if str(k).isdigit() else -1))
        if isinstance(id2label, dict)
        else ()
    )
    if count is None:
        count = len(named) if named else 2  # transformers' PretrainedConfig default
    return CrossEncoderFacts(
        num_labels=count,
        labels=named if len(named) == count else (),  # num_labels wins over a disagreeing id2label, as in transformers
        activation_fn=activation if isinstance(activation, str) else None,
    )


def _dense(
    files: Files, path: str, config: Mapping[str, object], dimension: int | None, label: str, problems: list[Problem]
) -> int | None:
    """A Dense module: in_features = the dimension before it; its weight [out, in]; returns out_features."""
    in_features, out_features = as_int(config.get("in_features")), as_int(config.get("out_features"))
    if in_features is None or out_features is None:
        problems.append(Problem(label, f"has no in_features / out_features; {FIX}"))
        return None
    if dimension is not None and in_features != dimension:
        problems.append(
            Problem(label, f"in_features is {in_features}, but the module before it outputs {dimension}; {FIX}")
        )
    weights, weight_problems = read_weights(files, path, ("model",))
    problems += weight_problems
    linear = weights.tensors.get("linear.weight") if weights else None
    if weights is None and not weight_problems:
        problems.append(Problem(join(path, "model.safetensors"), f"is missing: the Dense module has no weights; {FIX}"))
    elif linear is not None and linear.shape != (out_features, in_features):
        problems.append(
            Problem(
                weights.files[0] if weights else label,
                f"linear.weight is {list(linear.shape)}, but config.json says {in_features} → {out_features}; {FIX}",
            )
        )
    return out_features
