"""The transformers kind: any Hugging Face transformers model (one safetensors file, or shards + index).

config.json must name the model (`architectures`, `model_type`). Its sizes are read through the
architecture's own names (release/formats/transformers_config.py: GPT-2's `n_layer`/`n_embd`/`n_positions`,
`attribute_map` as data), so the layers the tensors hold must agree with the layer count however the config
spells it, and the input embedding with `vocab_size` × `hidden_size`. A mixture of experts must hold the
experts its config names, a quantized checkpoint (`quantization_config`) the tensors its method stores
(release/formats/transformers_weights.py); the tensors' dtype must be the config's, except the ones a
quantization method stores its own way. Tokenizer, generation config, index and lm-evaluation-harness files
are checked by role in the core.

The card shows the model's facts (with the experts and active parameters of a MoE model, the quantization,
the generation defaults of generation_config.json), the `pipeline_tag` and Auto class the architecture's
suffix gives (front matter and usage), and a chat usage (`apply_chat_template` + `generate`) when a chat
template is shipped. Its card part is the speculative-decoding one (speculative.py), for a spec that gives a
bench or a served A/B and a template that shows them.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.card.speculative import speculative_part
from release.errors import Problem
from release.formats import transformers_config as tc
from release.formats.safetensors_header import TensorInfo
from release.formats.safetensors_layout import CONFIG_DTYPES
from release.formats.transformers_heads import head_problems
from release.formats.transformers_weights import QUANT_LAYOUTS
from release.kinds.draft_words import DRAFT_WORDS
from release.kinds.kind import CardPart, Kind, LoadProof
from release.kinds.own_files import short
from release.kinds.transformers.loading import Loading, files_of, loading_of, with_files
from release.kinds.transformers.words import dtype_words, generation_words, saved_with
from release.spec import ReleaseSpec

CONFIG = "config.json"  # how problems name the config (the transformers kind ships one, at the top)
# What generation_config.json sets that changes what generate() does (token ids and bookkeeping are left out).
GENERATION_KEYS = (
    "do_sample",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "repetition_penalty",
    "no_repeat_ngram_size",
    "num_beams",
    "max_new_tokens",
    "max_length",
)
CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")


def config_problems(config: dict[str, Any], label: str) -> list[Problem]:
    problems = []
    arch = config.get("architectures")
    if not (isinstance(arch, list) and arch and all(isinstance(a, str) and a for a in arch)):
        problems.append(
            Problem(
                label,
                'has no `architectures` (a list of class names, e.g. ["LlamaForCausalLM"]); save it with '
                "transformers' save_pretrained",
            )
        )
    if not (isinstance(config.get("model_type"), str) and config["model_type"]):
        problems.append(
            Problem(label, 'has no `model_type` (e.g. "llama"); save it with transformers\' save_pretrained')
        )
    dtypes = {config[k] for k in ("dtype", "torch_dtype") if isinstance(config.get(k), str)}
    if len(dtypes) > 1:
        problems.append(Problem(label, f"dtype and torch_dtype disagree ({' vs '.join(sorted(dtypes))})"))
    return problems


def _quantization_own(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The tensor-name suffixes a quantization method stores in its own dtypes (its weights and their scales)."""
    qc = config.get("quantization_config")
    if not isinstance(qc, dict):
        return ()
    from release.formats.transformers_weights import _layout_key

    _, required, siblings = QUANT_LAYOUTS.get(_layout_key(qc), ("", [], []))
    return tuple({s for s, _ in required} | {s for _, s, _ in siblings}) or ("",)  # unknown method: no dtype rule


def tensor_problems(
    config: dict[str, Any], tensors: Mapping[str, TensorInfo], label: str, check_shapes: bool
) -> list[Problem]:
    """Layers, input embedding, experts and quantization layout (formats/transformers_config.py), then the dtype."""
    _, problems = tc.facts_of(config, tensors, config_label=CONFIG, weights_label=label)
    problems += head_problems(config, tensors, CONFIG)  # id2label vs the head, Whisper's mel bins
    want = CONFIG_DTYPES.get(config.get("dtype") or config.get("torch_dtype") or "")
    own = _quantization_own(config)  # a quantized checkpoint's config dtype is the compute dtype of the rest
    floats = {
        n: t.dtype for n, t in tensors.items() if t.dtype in CONFIG_DTYPES.values() and not (own and n.endswith(own))
    }
    wrong = sorted(n for n, d in floats.items() if want and d != want)
    if wrong and len(wrong) == len(floats):
        problems.append(
            Problem(
                label, f"the weights are {floats[wrong[0]]}, config.json says {want}; correct torch_dtype or convert"
            )
        )
    return problems


# --- the card ---------------------------------------------------------------------------------------


def _chat_template(evidence: Any) -> bool:
    """A chat template shipped: chat_template.jinja, or `chat_template` in tokenizer_config.json."""
    for path, parsed in evidence.model_files.items():
        name = posixpath.basename(path)
        if name == "chat_template.jinja" or (name == "tokenizer_config.json" and parsed.data.get("chat_template")):
            return True
    return False


def model_facts_of(evidence: Any) -> tc.TransformersFacts | None:
    """The facts of the release's one config.json (with its weights' headers, all shards together)."""
    if len(evidence.configs) != 1:
        return None
    config = next(iter(evidence.configs.values())).data
    tensors = {name: t for header in evidence.weights.values() for name, t in header.tensors.items()}
    facts, _ = tc.facts_of(config, tensors or None, chat_template=_chat_template(evidence))
    return facts


def generation_defaults(evidence: Any) -> dict[str, Any]:
    """What the shipped generation_config.json makes generate() do, in GENERATION_KEYS' order."""
    for path, parsed in sorted(evidence.model_files.items()):
        if posixpath.basename(path) == "generation_config.json":
            return {k: parsed.data[k] for k in GENERATION_KEYS if k in parsed.data and parsed.data[k] is not None}
    return {}


def model_table(evidence: Any, facts: tc.TransformersFacts) -> Any:
    """The model's facts (`model_facts_of`, derived once) as the card's table, with config.json's and
    generation_config.json's own entries: nothing typed in the spec."""
    from release.card.text import Table, cell
    from release.formats.safetensors_layout import DTYPE_BYTES

    if len(evidence.configs) != 1:
        return None
    config = next(iter(evidence.configs.values())).data
    tensors = [t for header in evidence.weights.values() for t in header.tensors.values()]
    rows: list[tuple[str, str]] = []
    arch = config.get("architectures")
    if isinstance(arch, list) and arch:
        rows.append(("Architecture", cell(", ".join(map(str, arch)))))
    if isinstance(config.get("model_type"), str):
        rows.append(("Model type", cell(config["model_type"])))
    if tensors:
        count = sum(math.prod(t.shape) for t in tensors)
        rows.append(("Parameters", short(count)))
        moe = facts.moe
        if moe is not None and moe.active_parameters is not None:
            rows.append(("Active parameters", f"{short(moe.active_parameters)} per token"))
        dtypes = sorted({t.dtype for t in tensors}, key=lambda d: (-DTYPE_BYTES.get(d, 0), d))
        rows.append(("Tensor dtype", ", ".join(map(dtype_words, dtypes))))
    quant = facts.quantization
    if quant is not None:
        bits = f", {quant.bits}-bit" if quant.bits else ""
        rows.append(("Quantization", cell(f"{quant.method}{bits}" + (f" ({quant.stores})" if quant.stores else ""))))
    context = facts.sizes.get("max_position_embeddings")
    value = (
        context.value
        if context
        else next((config[k] for k in CONTEXT_KEYS if tc.as_int(config.get(k)) is not None), None)
    )
    for label, found in (
        ("Context length", value),
        ("Vocabulary size", facts.sizes.get("vocab_size")),
        ("Layers", facts.sizes.get("num_hidden_layers")),
    ):
        number = found.value if isinstance(found, tc.Size) else found
        if number is not None:
            rows.append((label, f"{number:,}"))
    if facts.moe is not None:
        rows.append(("Experts", f"{facts.moe.experts:,} per MoE layer"))
        if facts.moe.experts_per_token is not None:
            rows.append(("Experts per token", f"{facts.moe.experts_per_token:,}"))
    defaults = generation_defaults(evidence)
    if defaults:
        rows.append(("Generation defaults", cell(generation_words(defaults))))
    saved = saved_with(config)
    if saved:
        rows.append(("Saved with", cell(f"{saved} (the version that wrote config.json; not a requirement)")))
    return Table("model", ("Fact", "Value"), tuple(rows), key_columns=1) if rows else None


@dataclass(frozen=True)
class TransformersCardFacts:
    """The speculative-decoding card part's facts (a bench, a served A/B: speculative.py), with the model's."""

    inner: Any
    model: tc.TransformersFacts | None
    model_table: Any = None  # card/text.py Table of `model`: the card's MODEL section
    loading: Loading = Loading()  # what from_pretrained needs for these files (loading.py)

    @property
    def served_verdict(self) -> Any:
        return self.inner.served_verdict

    @property
    def chart_series(self) -> dict[str, Any]:
        return self.inner.chart_series

    @property
    def note_series(self) -> dict[str, Any]:
        return self.inner.note_series

    def expected(self) -> dict[str, Any]:
        return self.inner.expected()

    def variables(self, card: dict[str, Any], emap: Any) -> dict[str, Any]:
        return self.inner.variables(card, emap)


SPECULATIVE = speculative_part(DRAFT_WORDS)


def derive(emap: Any, evidence: Any, problems: list[Problem]) -> TransformersCardFacts:
    model = model_facts_of(evidence)
    table = model_table(evidence, model) if model is not None else None
    return TransformersCardFacts(SPECULATIVE.derive(emap, evidence, problems), model, table, loading_of(evidence))


CARD_PART = CardPart(
    derive=derive,
    model_index=SPECULATIVE.model_index,
    readable=SPECULATIVE.readable,
    lineage_labels=SPECULATIVE.lineage_labels,
)


def card_metadata(card: dict[str, Any], facts: Any) -> dict[str, Any]:
    """Front-matter defaults from the files ([card.metadata] overrides them): the architecture's pipeline_tag;
    `base_model_relation: quantized` for a quantized checkpoint whose spec names its base model."""
    model = facts.kind_facts.model
    out: dict[str, Any] = {}
    if model is None:
        return out
    if model.pipeline_tag:
        out["pipeline_tag"] = model.pipeline_tag
    meta = card.get("metadata", {})
    if model.quantization is not None and meta.get("base_model") and "base_model_relation" not in meta:
        out["base_model_relation"] = "quantized"
    return out


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """A transformers snippet pinned to this version: the Auto class of the architecture's head (its own class
    when no Auto class loads it); a chat with `apply_chat_template` + `generate` when a chat template and a
    tokenizer are shipped, else a text completion with `generate` for a causal LM with a tokenizer. Without
    config.json transformers cannot load the weights (no snippet); the tokenizer line only when one is shipped."""
    loading = with_files(getattr(facts.kind_facts, "loading", Loading()), files_of(facts.files))
    pickle = "pickle" if loading.pickle else None  # the facts are not read from safetensors headers
    if not facts.architectures:
        return {"transformers": None, "pickle": pickle}
    model = facts.kind_facts.model
    auto = loading.auto_class((model.auto_class if model else None) or facts.architectures[0])
    tokenizer = any(row[-1] == "tokenizer" for row in facts.files.rows)  # the files table's role column
    chat = bool(tokenizer and model and model.chat_template and auto == "AutoModelForCausalLM")
    imports = [auto, *(["AutoTokenizer"] if tokenizer else []), *([loading.processor] if loading.processor else [])]
    lines = [f"from transformers import {', '.join(imports)}", ""]
    code = ", trust_remote_code=True" if loading.trust_remote_code else ""
    if tokenizer:
        lines.append(f'tokenizer = AutoTokenizer.from_pretrained("{spec.repo_id}", revision="{spec.version}"{code})')
    if loading.processor:
        lines.append(
            f'processor = {loading.processor}.from_pretrained("{spec.repo_id}", revision="{spec.version}"{code})'
        )
    lines.append(f'model = {auto}.from_pretrained("{spec.repo_id}", revision="{spec.version}"{loading.model_kwargs()})')
    if chat:
        lines += [
            "",
            'messages = [{"role": "user", "content": "Hello! Who are you?"}]',
            # lines kept within the card's code box (CODE_WIDTH)
            "inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True,",
            '                                       return_dict=True, return_tensors="pt")',
            "outputs = model.generate(**inputs, max_new_tokens=32)",
            'reply = outputs[0][inputs["input_ids"].shape[-1]:]  # the new tokens only',
            "print(tokenizer.decode(reply, skip_special_tokens=True))",
        ]
    elif tokenizer and auto == "AutoModelForCausalLM":  # a generative model without a chat template: complete text
        lines += [
            "",
            'inputs = tokenizer("The capital of France is", return_tensors="pt")',
            "outputs = model.generate(**inputs, max_new_tokens=32)",
            "print(tokenizer.decode(outputs[0], skip_special_tokens=True))",
        ]
    notes = "".join(f"\n\n{line}" for line in loading.notes())
    return {"transformers": "```python\n" + "\n".join(lines) + "\n```" + notes, "pickle": pickle}


# the model base class whose from_pretrained reports each load's keys (the load proof's, builder/load_child.py)
TRANSFORMERS_MODELS = "transformers.modeling_utils:PreTrainedModel"

KIND = Kind(
    name="transformers",
    template="transformers.md.j2",
    config_problems=config_problems,
    tensor_problems=tensor_problems,
    card_part=CARD_PART,
    card_defaults={"library_name": "transformers"},
    weights_format="pt",  # transformers' from_pretrained reads safetensors whose __metadata__.format is 'pt'
    config_needs_processor=True,  # AutoProcessor: "Can't load feature extractor / image processor"
    config_needs_weights=True,  # from_pretrained: "does not appear to have a file named model.safetensors"
    card_context=card_context,
    card_metadata=card_metadata,
    load_proof=LoadProof("transformers", "transformers", "transformers torch", load_reports=(TRANSFORMERS_MODELS,)),
)
