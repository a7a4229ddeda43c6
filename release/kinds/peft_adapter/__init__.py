"""The PEFT adapter kind: `adapter_config.json` + `adapter_model.safetensors`, as `PeftModel.save_pretrained` writes
them.

Checks are the reader's (release/kinds/peft_adapter/reader.py): the rank and target_modules against the lora_A/
lora_B tensors and their shapes, a peft_type/task_type PEFT knows. A `base_model_name_or_path` that is a Hub
id becomes the card's `base_model` with `base_model_relation: adapter`; a local path or null asks for the
base in the spec ([card.metadata] base_model), named by build until it is given. The card: PEFT's facts
(method, rank, alpha, targets, trainable parameters), `library_name: peft`, `pipeline_tag` from task_type,
and a snippet loading the adapter on its base at this revision (the base pinned with
[card.usage] base_revision, or adapter_config.json's `revision`, when given).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds import transformers
from release.kinds.adapter_base import base_needed, base_revision, given_base, revision_argument
from release.kinds.kind import Kind, LoadProof
from release.kinds.own_files import card_part, short
from release.kinds.peft_adapter.reader import AdapterFacts, read_peft_adapter
from release.spec import ReleaseSpec

CONFIG = "adapter_config.json"
# PEFT's task type → the Auto class its base loads with (peft.AutoPeftModelFor… mirrors these)
AUTO_CLASSES = {
    "CAUSAL_LM": "AutoModelForCausalLM",
    "SEQ_2_SEQ_LM": "AutoModelForSeq2SeqLM",
    "SEQ_CLS": "AutoModelForSequenceClassification",
    "TOKEN_CLS": "AutoModelForTokenClassification",
    "QUESTION_ANS": "AutoModelForQuestionAnswering",
    "FEATURE_EXTRACTION": "AutoModel",
}


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[AdapterFacts | None, list[Problem]]:
    """The adapter at the repo's root, read and checked; a base that is no Hub id must be given in the spec."""
    facts, problems = read_peft_adapter(files)
    if facts is not None and not facts.base_model_is_hub_id and not given_base(card):
        written = repr(facts.base_model) if facts.base_model is not None else "null"
        problems.append(base_needed(CONFIG, f"base_model_name_or_path is {written}, not a Hub id"))
    return facts, problems


def facts_rows(facts: AdapterFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    method = facts.peft_type + (" (DoRA)" if facts.use_dora else "")
    rows = [("PEFT method", cell(method))]
    if facts.task_type:
        rows.append(("Task type", cell(facts.task_type)))
    if facts.base_model and facts.base_model_is_hub_id:  # a local path names this node's disk: never on a public card
        rows.append(("Base model", cell(facts.base_model)))
    if facts.rank is not None:
        rows.append(("Rank (r)", f"{facts.rank:,}"))
    if facts.alpha is not None:
        rows.append(("Alpha (lora_alpha)", f"{facts.alpha:g}"))
    targets = facts.target_modules
    if isinstance(targets, tuple) and targets:
        rows.append(("Target modules", ", ".join(code(t) for t in sorted(targets))))
    elif isinstance(targets, str):
        rows.append(("Target modules", code(targets)))
    if facts.adapted_modules:
        rows.append(("Adapted modules", f"{len(facts.adapted_modules):,}"))
    if facts.modules_to_save:
        rows.append(("Modules saved whole", ", ".join(code(m) for m in facts.modules_to_save)))
    rows.append(("Trainable parameters", short(facts.trainable_parameters)))
    if facts.peft_version:
        rows.append(("Saved with", cell(f"PEFT {facts.peft_version}")))
    return rows


def metadata(facts: AdapterFacts) -> dict[str, Any]:
    out: dict[str, Any] = {"library_name": "peft"}
    if facts.pipeline_tag:
        out["pipeline_tag"] = facts.pipeline_tag
    if facts.base_model and facts.base_model_is_hub_id:
        out["base_model"] = facts.base_model
    out["base_model_relation"] = "adapter"  # on the base above, or on the one the spec must give (files_check)
    return out


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`PeftModel.from_pretrained(base at its revision, this repo, revision=this version)`."""
    read: AdapterFacts | None = facts.kind_facts.read
    base = given_base(spec.card) or (read.base_model if read and read.base_model_is_hub_id else None)
    if read is None or not isinstance(base, str):
        return {"peft": None}
    auto = AUTO_CLASSES.get(read.task_type or "", "AutoModel")
    pin = revision_argument(base_revision(spec.card, read.base_model_revision))
    lines = [
        "from peft import PeftModel",
        f"from transformers import {auto}",
        "",
        f'base = {auto}.from_pretrained("{base}"{pin})',
        f'model = PeftModel.from_pretrained(base, "{spec.repo_id}", revision="{spec.version}")',
    ]
    return {"peft": "```python\n" + "\n".join(lines) + "\n```"}


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []  # an adapter has no config.json of its own; a config.json shipped beside it is read as JSON only


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: the adapter's method, and its base when that is a Hub id (a local path is the
    writer's disk, not something a card reader can find)."""
    from release.kinds.adapter_base import is_hub_id
    from release.util.jsonio import read_json

    adapter = next((d for d in detected if d.role == "adapter-config"), None)
    try:
        config = read_json(adapter.path) if adapter is not None else None
    except (OSError, ValueError, RecursionError):
        config = None
    if not (isinstance(config, dict) and isinstance(config.get("peft_type"), str)):
        return "a model"
    base = config.get("base_model_name_or_path")
    return f"a {config['peft_type']} adapter" + (f" of {base}" if isinstance(base, str) and is_hub_id(base) else "")


KIND = Kind(
    name="peft-adapter",
    template="peft-adapter.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "peft"},
    describe=describe,
    card_context=card_context,
    files_check=files_check,
    model_roles=("adapter-config", "adapter-weights"),  # the adapter and its base (adapter_config.json names it)
    # the base from this machine's cache, on the meta device; PEFT raises on target modules the base lacks, and only
    # warns when the adapter's weights leave some of its modules out
    load_proof=LoadProof(
        "peft",
        "peft",
        "peft transformers torch",
        load_reports=(transformers.TRANSFORMERS_MODELS,),
        loads_from_hub=True,
        refusing_warnings=("Found missing adapter keys",),
    ),
)
