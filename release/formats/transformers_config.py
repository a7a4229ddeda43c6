"""A transformers `config.json`, read through the architecture's own names, checked against its safetensors headers.

- Sizes: GPT-2 stores `num_hidden_layers` as `n_layer`, T5 as `num_layers`, BART as `encoder_layers`…
  (`PretrainedConfig.attribute_map`, kept as data in `release/schemas/transformers-attribute-maps.json` with the
  few renames a config class still converts in `__init__`); a multimodal config's text sizes in `text_config`.
- Task and Auto class from the architecture's suffix (`…ForCausalLM` → text-generation, AutoModelForCausalLM;
  `…ForConditionalGeneration` by what the config holds: seq2seq, vision, speech).
- Layers from tensor names (`model.layers.N.`, `transformer.h.N.`, `bert.encoder.layer.N.`, …) = 0 … n − 1;
  the input embedding's rows = vocab_size. MoE and quantization facts: `transformers_weights`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from release.errors import Problem
from release.formats.common import Files, as_int, join, one_line, read_json_object
from release.formats.safetensors_header import TensorInfo, read_weights
from release.formats.transformers_sizes import ATTRIBUTE_MAPS, LEGACY, SIZES, Size, size  # noqa: F401 (ATTRIBUTE_MAPS, LEGACY: read here by callers)
from release.formats.transformers_weights import MoEFacts, QuantizationFacts, moe_facts, quantization_facts

FIX = "save it with transformers' save_pretrained (or fix config.json to match the weights)"

# Architecture suffix → (pipeline_tag, Auto class that loads it with its head); the longest matching suffix wins.
HEADS: dict[str, tuple[str | None, str | None]] = {
    "ForCausalLM": ("text-generation", "AutoModelForCausalLM"),
    "LMHeadModel": ("text-generation", "AutoModelForCausalLM"),  # GPT2LMHeadModel, CTRLLMHeadModel, XLNetLMHeadModel
    "ForMaskedLM": ("fill-mask", "AutoModelForMaskedLM"),
    "ForSequenceClassification": ("text-classification", "AutoModelForSequenceClassification"),
    "ForTokenClassification": ("token-classification", "AutoModelForTokenClassification"),
    "ForQuestionAnswering": ("question-answering", "AutoModelForQuestionAnswering"),
    "ForMultipleChoice": (None, "AutoModelForMultipleChoice"),
    "ForPreTraining": (None, "AutoModelForPreTraining"),
    "ForImageClassification": ("image-classification", "AutoModelForImageClassification"),
    "ForAudioClassification": ("audio-classification", "AutoModelForAudioClassification"),
    "ForCTC": ("automatic-speech-recognition", "AutoModelForCTC"),
    "ForObjectDetection": ("object-detection", "AutoModelForObjectDetection"),
    "ForSemanticSegmentation": ("image-segmentation", "AutoModelForSemanticSegmentation"),
    "ForImageTextToText": ("image-text-to-text", "AutoModelForImageTextToText"),
    "DoubleHeadsModel": (None, None),  # GPT-2's LM + multiple-choice heads: no Auto class loads both
    "WithLMHeadModel": ("fill-mask", "AutoModelForMaskedLM"),  # XLM, Flaubert
    "EncoderModel": (None, None),  # T5EncoderModel (below), but also audio tokenizers' and dual encoders' halves
    "EncoderDecoderModel": (None, None),
    "VisionModel": (None, None),
    "TextModel": (None, None),  # composites and sub-models
    "Model": ("feature-extraction", "AutoModel"),
}
SEQ2SEQ = ("text2text-generation", "AutoModelForSeq2SeqLM")
SPEECH2SEQ = ("automatic-speech-recognition", "AutoModelForSpeechSeq2Seq")
VISION2SEQ = ("image-text-to-text", "AutoModelForImageTextToText")
# What a config holds when its model is not a text model (the suffix rule then needs the modality).
AUDIO_KEYS = (
    "conv_dim",
    "feat_extract_norm",
    "feature_projection_input_dim",
    "num_mel_bins",
    "input_feat_per_channel",
    "audio_config",
    "audio_encoder",
    "audio_channels",
)
VISUAL_KEYS = (
    "vision_config",
    "image_size",
    "image_token_index",
    "image_token_id",
    "max_2d_position_embeddings",
    "num_aggregation_labels",
)  # …and documents (LayoutLM) and tables (TAPAS)
SPEECH_SEQ2SEQ_TYPES = ("canary", "cohere_asr", "dia", "moonshine", "moonshine_streaming", "pop2piano")  # no audio key
NOT_ASR = ("dia", "pop2piano")  # speech seq2seq that is not recognition (text-to-speech, audio-to-MIDI)
OVERRIDES: dict[str, tuple[str | None, str | None]] = {  # where transformers 5.24's own tables break the suffix rule
    "Mistral4ForCausalLM": VISION2SEQ,
    "MarianMTModel": SEQ2SEQ,
}

# Per-layer tensor names → the config sizes that count them (the first present is compared).
LAYER_NAMINGS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p), sizes)
    for p, sizes in (
        (r"^model\.layers\.(\d+)\.", ("num_hidden_layers",)),  # Llama, Mistral, Mixtral, Qwen, Gemma, DeepSeek…
        (r"^model\.language_model\.layers\.(\d+)\.", ("num_hidden_layers",)),
        (r"^language_model\.model\.layers\.(\d+)\.", ("num_hidden_layers",)),
        (r"^layers\.(\d+)\.", ("num_hidden_layers",)),  # a base model saved without its head (LlamaModel)
        (
            r"^(?:model\.|text_model\.)?encoder\.layers\.(\d+)\.",
            ("encoder_layers", "num_hidden_layers"),
        ),  # BART, Whisper, CLIP
        (r"^model\.decoder\.layers\.(\d+)\.", ("decoder_layers", "num_hidden_layers")),  # …and OPT (decoder only)
        (r"^transformer\.h\.(\d+)\.", ("num_hidden_layers",)),  # GPT-2, GPT-J, BLOOM, Falcon, CodeGen, StarCoder
        (r"^h\.(\d+)\.", ("num_hidden_layers",)),  # GPT2Model
        (r"^gpt_neox\.layers\.(\d+)\.", ("num_hidden_layers",)),
        (r"^transformer\.blocks\.(\d+)\.", ("num_hidden_layers",)),  # MPT
        (r"^(?:[a-z_]+\.)?encoder\.layer\.(\d+)\.", ("num_hidden_layers",)),  # BERT, RoBERTa, ELECTRA… and headless
        (r"^(?:distilbert\.)?transformer\.layer\.(\d+)\.", ("num_hidden_layers",)),  # DistilBERT
        (r"^encoder\.block\.(\d+)\.", ("num_hidden_layers",)),  # T5 (num_layers)
        (r"^decoder\.block\.(\d+)\.", ("num_decoder_layers", "num_hidden_layers")),
        (r"^backbone\.layers\.(\d+)\.", ("num_hidden_layers",)),  # Mamba
    )
)
# A multimodal model's towers: the sub-config that sizes each, and the tensor-name segments its weights sit under
# (Llava's `vision_tower.`, CLIP's `vision_model.`, Qwen2-VL's `visual.`, Qwen2-Audio's `audio_tower.`). The text
# tower is the top level's (its sizes are read through `text_config`, its namings are LAYER_NAMINGS').
TOWERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("vision_config", frozenset({"vision_tower", "vision_model", "visual", "vision_encoder"})),
    ("audio_config", frozenset({"audio_tower", "audio_model", "audio_encoder"})),
)
TOWER_LAYERS = re.compile(r"^(?:[A-Za-z_]+\.)*?(?:layers|layer|blocks)\.(\d+)\.")  # the first indexed stack in a tower
TOWER_LAYER_KEYS = ("num_hidden_layers", "depth")  # Qwen2-VL's vision config counts its blocks as `depth`
# The input embedding (rows = vocab_size); its columns are hidden_size unless the config says otherwise.
EMBEDDINGS = (
    "model.embed_tokens.weight",
    "model.language_model.embed_tokens.weight",
    "embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "gpt_neox.embed_in.weight",
    "transformer.word_embeddings.weight",
    "bert.embeddings.word_embeddings.weight",
    "roberta.embeddings.word_embeddings.weight",
    "embeddings.word_embeddings.weight",
    "distilbert.embeddings.word_embeddings.weight",
    "shared.weight",
    "model.shared.weight",
    "model.decoder.embed_tokens.weight",
    "backbone.embeddings.weight",
    "embeddings.token_embedding.weight",
    "text_model.embeddings.token_embedding.weight",
)


@dataclass(frozen=True)
class TransformersFacts:
    model_type: str | None
    architecture: str | None  # the first of `architectures`
    pipeline_tag: str | None
    auto_class: str | None
    sizes: Mapping[str, Size]  # every size of the schema's list the config gives, by its canonical name
    layers_in_weights: tuple[int, ...] | None  # the layer indices the tensor names hold (first naming that matches)
    parameter_count: int | None  # from the safetensors headers
    dtype: str | None  # config's dtype / torch_dtype
    chat_template: bool  # chat_template.jinja, or a chat_template in tokenizer_config.json
    moe: MoEFacts | None
    quantization: QuantizationFacts | None


def head_of(architecture: str, config: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(pipeline_tag, Auto class) for an architecture name; (None, None) when its suffix says nothing sure."""
    if architecture in OVERRIDES:
        return OVERRIDES[architecture]
    model_type = str(config.get("model_type", ""))
    audio = any(k in config for k in AUDIO_KEYS) or model_type in SPEECH_SEQ2SEQ_TYPES
    visual = any(k in config for k in VISUAL_KEYS)
    encoder_decoder = config.get("is_encoder_decoder") is True
    if architecture.endswith("ForConditionalGeneration"):
        if "audio_encoder" in config:
            return "text-to-audio", "AutoModelForTextToWaveform"  # MusicGen
        if visual:
            return VISION2SEQ  # any-to-text models with audio too are image-text-to-text in transformers' tables
        if audio:  # decoder-only audio LMs (Qwen2-Audio…) have no Auto class of their own
            return (
                (None if model_type in NOT_ASR else SPEECH2SEQ[0], SPEECH2SEQ[1]) if encoder_decoder else (None, None)
            )
        return SEQ2SEQ if encoder_decoder else (None, None)
    if architecture.endswith("EncoderModel") and encoder_decoder and not (audio or visual):
        return (
            "feature-extraction",
            "AutoModelForTextEncoding",
        )  # T5EncoderModel: AutoModel would build the whole seq2seq
    if architecture.endswith("ForSequenceClassification") and audio:
        return "audio-classification", "AutoModelForAudioClassification"
    if architecture.endswith("ForObjectDetection") and "text_config" in config:
        return "zero-shot-object-detection", "AutoModelForZeroShotObjectDetection"
    if architecture.endswith(("ForSequenceClassification", "ForQuestionAnswering")) and (audio or visual):
        return None, None  # visual / document / table question answering: other pipelines
    for suffix in sorted(HEADS, key=len, reverse=True):
        if architecture.endswith(suffix):
            return HEADS[suffix]
    return None, None


def layers_in(names: Iterable[str]) -> dict[str, set[int]]:
    """The layer indices per naming that matches any tensor name (pattern text → indices)."""
    found: dict[str, set[int]] = {}
    for name in names:
        for naming, _ in LAYER_NAMINGS:
            match = naming.match(name)
            if match:
                found.setdefault(naming.pattern, set()).add(int(match.group(1)))
                break
    return found


def _counts(indices: set[int], n: int) -> bool:
    """indices == {0, …, n − 1}, without building that set (n comes from a config and may be 10**30)."""
    return len(indices) == n and (n == 0 or (min(indices) == 0 and max(indices) == n - 1))


def _spans(indices: set[int]) -> str:
    ordered = sorted(indices)
    return (
        f"{ordered[0]}–{ordered[-1]}"
        if ordered[-1] - ordered[0] + 1 == len(ordered)
        else ", ".join(map(str, ordered[:12])) + (" …" if len(ordered) > 12 else "")
    )


def _towers(config: Mapping[str, Any], names: Iterable[str]) -> dict[str, dict[str, tuple[str, str]]]:
    """Per sub-config the config holds (TOWERS), its tower's tensors: name → (the name up to the tower's segment,
    the rest): `vision_tower.encoder.layers.0.mlp.fc1.weight` → (`vision_tower.`, `encoder.layers.0.mlp.fc1.weight`)."""
    present = [(key, segments) for key, segments in TOWERS if isinstance(config.get(key), dict)]
    found: dict[str, dict[str, tuple[str, str]]] = {key: {} for key, _ in present}
    if not present:
        return found
    for name in names:
        parts = name.split(".")
        for key, segments in present:
            at = next((i for i, part in enumerate(parts[:-1]) if part in segments), None)
            if at is not None:
                found[key][name] = (".".join(parts[: at + 1]) + ".", ".".join(parts[at + 1 :]))
                break
    return found


def _tower_problems(
    config: Mapping[str, Any], towers: dict[str, dict[str, tuple[str, str]]], config_label: str, weights_label: str
) -> list[Problem]:
    """Each tower's layers = 0 … n − 1 of its sub-config's count (transformers: missing or unexpected keys)."""
    problems = []
    for key, names in towers.items():
        sub = config[key]
        wanted = next((s for c in TOWER_LAYER_KEYS if (s := size(sub, c)) is not None), None)
        indices: set[int] = set()
        spelled = ""
        for prefix, rest in names.values():
            match = TOWER_LAYERS.match(rest)
            if match:
                indices.add(int(match.group(1)))
                spelled = spelled or prefix + rest[: match.start(1)] + "N."
        if wanted is None or not indices or _counts(indices, wanted.value):
            continue
        problems.append(
            Problem(
                config_label,
                f"{key}.{wanted.key} is {wanted.value}, but {weights_label} holds layers {_spans(indices)} "
                f"({spelled}); {FIX}",
            )
        )
    return problems


@one_line
def tensor_problems(
    config: Mapping[str, Any], tensors: Mapping[str, TensorInfo], config_label: str, weights_label: str
) -> list[Problem]:
    """The layers the tensors hold = 0 … n − 1 for every naming found; the input embedding's rows = vocab_size."""
    towers = _towers(config, tensors)
    problems = _tower_problems(config, towers, config_label, weights_label)
    in_towers = {name for names in towers.values() for name in names}
    top = [name for name in tensors if name not in in_towers] if in_towers else list(tensors)
    sizes_by_pattern = {n.pattern: s for n, s in LAYER_NAMINGS}
    compiled = {n.pattern: n for n, _ in LAYER_NAMINGS}
    for pattern, indices in layers_in(top).items():
        concept = next((c for c in sizes_by_pattern[pattern] if size(config, c) is not None), None)
        if concept is None:
            continue
        wanted = size(config, concept)
        assert wanted is not None
        extra = as_int(config.get("num_nextn_predict_layers")) or 0  # DeepSeek's MTP layers follow the others
        if not (_counts(indices, wanted.value) or extra and _counts(indices, wanted.value + extra)):
            match = next(m for n in top if (m := compiled[pattern].match(n)))
            naming = match.string[: match.start(1)] + "N."  # as the tensors spell it: "transformer.h.N."
            problems.append(
                Problem(
                    config_label,
                    f"{wanted.named(concept)} is {wanted.value}, but {weights_label} holds layers "
                    f"{_spans(indices)} ({naming}); {FIX}",
                )
            )
    vocab, width, concept = size(config, "vocab_size"), size(config, "hidden_size"), "hidden_size"
    for key in ("embedding_size", "word_embed_proj_dim"):  # ALBERT, OPT: the embedding is narrower than the layers
        if (value := as_int(config.get(key))) is not None:
            width, concept = Size(value, key), key
    for name in EMBEDDINGS:
        info = tensors.get(name)
        if info is None or len(info.shape) != 2:
            continue
        if vocab is not None and info.shape[0] != vocab.value:
            problems.append(
                Problem(
                    config_label,
                    f"{vocab.named('vocab_size')} is {vocab.value}, but {weights_label}'s input embedding "
                    f"'{name}' has {info.shape[0]:,} rows; {FIX}",
                )
            )
        if width is not None and info.shape[1] != width.value:
            problems.append(
                Problem(
                    config_label,
                    f"{width.named(concept)} is {width.value}, but {weights_label}'s input embedding "
                    f"'{name}' is {info.shape[1]:,} wide; {FIX}",
                )
            )
        break
    return problems


@one_line
def config_problems(config: Mapping[str, Any], label: str) -> list[Problem]:
    """What transformers needs to pick the class: `architectures` (a list of names) and `model_type`."""
    problems = []
    architectures = config.get("architectures")
    if not (isinstance(architectures, list) and architectures and all(isinstance(a, str) for a in architectures)):
        problems.append(
            Problem(
                label,
                'has no architectures list (e.g. ["LlamaForCausalLM"]); transformers picks the model '
                "class from it, so save the model with save_pretrained",
            )
        )
    if not isinstance(config.get("model_type"), str):
        problems.append(
            Problem(
                label, "has no model_type; transformers' AutoConfig needs it, so save the model with save_pretrained"
            )
        )
    return problems


@one_line
def facts_of(
    config: Mapping[str, Any],
    tensors: Mapping[str, TensorInfo] | None,
    *,
    chat_template: bool = False,
    config_label: str = "config.json",
    weights_label: str = "model.safetensors",
) -> tuple[TransformersFacts, list[Problem]]:
    """The facts of a config (and of its weights' headers when given), with every problem the tensors contradict."""
    architectures = config.get("architectures")
    architecture = (
        architectures[0]
        if isinstance(architectures, list) and architectures and isinstance(architectures[0], str)
        else None
    )
    tag, auto = head_of(architecture, config) if architecture else (None, None)
    sizes = {c: s for c in SIZES if (s := size(config, c)) is not None}
    problems: list[Problem] = []
    moe = quant = None
    if tensors is not None:
        problems += tensor_problems(config, tensors, config_label, weights_label)
        moe, moe_problems = moe_facts(config, tensors, config_label, weights_label)
        quant, quant_problems = quantization_facts(config, tensors, config_label, weights_label)
        problems += moe_problems + quant_problems
    found = layers_in(tensors or {})
    dtype = config.get("dtype", config.get("torch_dtype"))
    model_type = config.get("model_type")
    return TransformersFacts(
        model_type=model_type if isinstance(model_type, str) else None,
        architecture=architecture,
        pipeline_tag=tag,
        auto_class=auto,
        sizes=sizes,
        layers_in_weights=tuple(sorted(next(iter(found.values())))) if found else None,
        parameter_count=sum(t.numel for t in tensors.values()) if tensors is not None else None,
        dtype=dtype if isinstance(dtype, str) else None,
        chat_template=chat_template,
        moe=moe,
        quantization=quant,
    ), problems


@one_line
def read_transformers_model(files: Files, folder: str = "") -> tuple[TransformersFacts | None, list[Problem]]:
    """`folder/config.json` with `model.safetensors` (or its shards) and the chat template, as save_pretrained writes
    them."""
    label = join(folder, "config.json")
    if label not in files:
        return None, [
            Problem(
                label, "is missing; transformers needs it to build the model, so save the model with save_pretrained"
            )
        ]
    config, problem = read_json_object(files[label], label)
    if problem is not None or config is None:
        return None, [problem] if problem else []
    problems = config_problems(config, label)
    weights, weight_problems = read_weights(files, folder, ("model",))
    problems += weight_problems
    template = join(folder, "chat_template.jinja") in files
    tokenizer_config = join(folder, "tokenizer_config.json")
    if not template and tokenizer_config in files:
        data, _ = read_json_object(files[tokenizer_config], tokenizer_config)
        template = bool(data and data.get("chat_template"))
    facts, tensor_problems_ = facts_of(
        config,
        weights.tensors if weights else None,
        chat_template=template,
        config_label=label,
        weights_label=weights.index or weights.files[0] if weights else "",
    )
    return facts, problems + tensor_problems_
