"""A PEFT adapter as `PeftModel.save_pretrained` writes it: `adapter_config.json` against `adapter_model.safetensors`.

The config: `peft_type` and `task_type` among those PEFT knows (0.21), `base_model_name_or_path` (a Hub id, a
local path or null), `r`, `lora_alpha`, `target_modules` (a list, matched as PEFT matches it — the module's name or
its last dotted parts — or a regex string, matched whole), `rank_pattern`/`alpha_pattern`, `modules_to_save`.
The weights (header only): PEFT names them `base_model.model.<module>.lora_A.weight` ([r, in]) and `….lora_B.weight`
([out, r]) — `lora_embedding_A`/`_B` for embeddings — with `r` from `rank_pattern` where a pattern matches. For LoRA,
every adapted module has both A and B of its rank, lies inside `target_modules`, every target is adapted somewhere,
and every other tensor belongs to `modules_to_save`. Other PEFT methods are read for their facts only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.errors import Problem
from release.formats.common import Files, as_int, join, one_line, quote_list, read_json_object
from release.formats.safetensors_header import TensorInfo, read_weights
from release.kinds.adapter_base import is_hub_id

# peft.utils.peft_types (0.21.2): PeftType and TaskType, compared with PEFT in the library tests.
PEFT_TYPES = (
    "PROMPT_TUNING",
    "MULTITASK_PROMPT_TUNING",
    "P_TUNING",
    "PREFIX_TUNING",
    "LORA",
    "ADALORA",
    "ADAMSS",
    "BOFT",
    "ADAPTION_PROMPT",
    "IA3",
    "BEFT",
    "LILY",
    "LOHA",
    "LOKR",
    "OFT",
    "POLY",
    "LN_TUNING",
    "VERA",
    "FROD",
    "PVERA",
    "FOURIERFT",
    "GLORA",
    "XLORA",
    "HRA",
    "VBLORA",
    "UNILORA",
    "CPT",
    "MISS",
    "RANDLORA",
    "ROAD",
    "TRAINABLE_TOKENS",
    "HIRA",
    "SHIRA",
    "C3A",
    "WAVEFT",
    "OSF",
    "DELORA",
    "GRALORA",
    "CARTRIDGE",
    "TINYLORA",
    "PSOFT",
    "PEANUT",
    "SHADOW",
    "SUPERTUNING",
    "DEFT",
)
TASK_TAGS = {
    "CAUSAL_LM": "text-generation",
    "SEQ_2_SEQ_LM": "text2text-generation",
    "SEQ_CLS": "text-classification",
    "TOKEN_CLS": "token-classification",
    "QUESTION_ANS": "question-answering",
    "FEATURE_EXTRACTION": "feature-extraction",
}
LORA_TENSOR = re.compile(r"^(?:base_model\.model\.)?(?P<module>.+)\.(?P<part>lora_(?:embedding_)?[AB])(?:\.weight)?$")
OTHER_LORA = re.compile(r"\.lora_[A-Za-z_]+(?:\.|$)|\.trainable_tokens_delta$")  # DoRA's magnitude, AdaLoRA's E, …
FIX = "save the adapter again with PEFT's save_pretrained"


@dataclass(frozen=True)
class AdapterFacts:
    peft_type: str  # the method: "LORA", "IA3", …
    task_type: str | None
    pipeline_tag: str | None  # from task_type
    base_model: str | None  # base_model_name_or_path, as written
    base_model_is_hub_id: bool  # a valid Hub repo id (huggingface_hub's validate_repo_id), not a path
    base_model_revision: str | None
    rank: int | None  # r
    alpha: float | None  # lora_alpha
    rank_pattern: Mapping[str, int]
    alpha_pattern: Mapping[str, float]
    target_modules: tuple[str, ...] | str | None  # a list of names, or one regex
    modules_to_save: tuple[str, ...]
    adapted_modules: tuple[str, ...]  # the modules the weights adapt (LoRA), in the base model's names
    trainable_parameters: int  # every tensor of the adapter file
    use_dora: bool
    peft_version: str | None


def _fullmatch(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return False


def _targets(module: str, config: Mapping[str, Any]) -> bool:
    """PEFT's check_target_module_exists for a module that holds LoRA weights (exclude_modules included)."""
    exclude, targets = config.get("exclude_modules"), config.get("target_modules")
    if (
        isinstance(exclude, str)
        and _fullmatch(exclude, module)
        or isinstance(exclude, list)
        and any(module == e or module.endswith(f".{e}") for e in exclude if isinstance(e, str))
    ):
        return False
    if isinstance(targets, str):
        return targets == "all-linear" or _fullmatch(targets, module)
    if isinstance(targets, list):
        return any(module == t or module.endswith(f".{t}") for t in targets if isinstance(t, str))
    return config.get("target_parameters") is not None


def _pattern_value(patterns: Mapping[str, Any], module: str, default: Any) -> Any:
    """PEFT's get_pattern_key: the first pattern that matches the end of the module's name, else the default."""
    for pattern, value in patterns.items():
        try:
            if re.match(rf"(.*\.)?({pattern})$", module):
                return value
        except re.error:
            continue
    return default


def _names(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


@one_line
def config_problems(config: Mapping[str, Any], label: str) -> list[Problem]:
    problems = []
    peft_type, task_type = config.get("peft_type"), config.get("task_type")
    if not isinstance(peft_type, str) or peft_type not in PEFT_TYPES:
        problems.append(Problem(label, f"peft_type is {peft_type!r}, which PEFT does not know (e.g. 'LORA'); {FIX}"))
    if task_type is not None and (not isinstance(task_type, str) or task_type not in TASK_TAGS):
        problems.append(
            Problem(
                label,
                f'task_type is {task_type!r}; PEFT refuses it ("Invalid task type"), it must be one of '
                f"{', '.join(TASK_TAGS)} or null",
            )
        )
    base = config.get("base_model_name_or_path")
    if base is not None and not isinstance(base, str):
        problems.append(
            Problem(label, f"base_model_name_or_path is {base!r}; it must name the base model (a Hub id) or be null")
        )
    if peft_type == "LORA":
        rank, alpha, targets = config.get("r"), config.get("lora_alpha"), config.get("target_modules")
        if (as_int(rank) or 0) < 1:
            problems.append(Problem(label, f"r is {rank!r}; LoRA's rank must be a positive integer"))
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            problems.append(Problem(label, f"lora_alpha is {alpha!r}; it must be a number"))
        if not (
            isinstance(targets, str)
            or isinstance(targets, list)
            and all(isinstance(t, str) for t in targets)
            or targets is None
            and config.get("target_parameters") is not None
        ):
            problems.append(
                Problem(label, f"target_modules is {str(targets)[:80]}; PEFT needs a list of module names or a regex")
            )
        elif isinstance(targets, str):
            try:
                re.compile(targets)
            except re.error as exc:
                problems.append(Problem(label, f"target_modules {targets[:80]!r} is not a valid regex ({exc}); fix it"))
        for key in ("rank_pattern", "alpha_pattern"):
            if not isinstance(config.get(key) or {}, dict):
                problems.append(Problem(label, f"{key} must map module patterns to values; {FIX}"))
        if not isinstance(config.get("modules_to_save") or [], list):
            problems.append(Problem(label, "modules_to_save must be a list of module names or null; " + FIX))
    return problems


@one_line
def lora_problems(
    config: Mapping[str, Any], tensors: Mapping[str, TensorInfo], config_label: str, weights_label: str
) -> tuple[tuple[str, ...], list[Problem]]:
    """The modules the LoRA weights adapt, and every way they contradict the config (shapes by PEFT's rules)."""
    parts: dict[str, dict[str, TensorInfo]] = {}
    others = []
    for name, info in tensors.items():
        match = LORA_TENSOR.match(name)
        if match:
            parts.setdefault(match["module"], {})[match["part"][-1]] = info
        elif not OTHER_LORA.search(name):
            others.append(name)
    rank = as_int(config.get("r"))
    patterns = _mapping(config.get("rank_pattern"))
    half, flat, uneven, outside = [], [], [], []
    wrong: dict[tuple[int, int], list[str]] = {}  # (rank the config gives, rank the tensors hold) → modules
    for module, ab in sorted(parts.items()):
        a, b = ab.get("A"), ab.get("B")
        if a is None or b is None:
            half.append((module, "lora_B" if b is None else "lora_A"))
        elif len(a.shape) < 2 or len(b.shape) < 2:
            flat.append(module)
        elif a.shape[0] != b.shape[1]:
            uneven.append(module)
        elif (want := as_int(_pattern_value(patterns, module, rank))) is not None and a.shape[0] != want:
            wrong.setdefault((want, a.shape[0]), []).append(module)
        if not _targets(module, config):
            outside.append(module)
    problems = []
    if half:
        problems.append(
            Problem(
                weights_label,
                f"module '{half[0][0]}' has no {half[0][1]} ({len(half)} such modules): LoRA "
                f"needs lora_A and lora_B for each; {FIX}",
            )
        )
    if flat:
        problems.append(
            Problem(
                weights_label,
                f"module '{flat[0]}' ({len(flat)} such) has a 1-D lora_A or lora_B: a shard not "
                "gathered before saving (DeepSpeed ZeRO-3 / FSDP); " + FIX,
            )
        )
    if uneven:
        problems.append(
            Problem(
                weights_label,
                f"module '{uneven[0]}' ({len(uneven)} such) has lora_A and lora_B of different ranks; {FIX}",
            )
        )
    for (want, held), modules in wrong.items():
        source = "r" if want == rank else "rank_pattern"
        shape_a, shape_b = parts[modules[0]]["A"].shape, parts[modules[0]]["B"].shape
        problems.append(
            Problem(
                config_label,
                f"{source} says rank {want}, but {weights_label} holds rank {held} for "
                f"{len(modules)} of its {len(parts)} modules ('{modules[0]}': lora_A {list(shape_a)}, "
                f"lora_B {list(shape_b)}); PEFT would fail to load them, so fix {source} or {FIX}",
            )
        )
    if outside:
        problems.append(
            Problem(
                config_label,
                f"target_modules {str(config.get('target_modules'))[:80]} does not cover "
                f"{quote_list(outside, 3)}, which {weights_label} adapts; PEFT would not load "
                "those weights, so add them to target_modules or " + FIX,
            )
        )
    targets = config.get("target_modules")
    if isinstance(targets, list):
        idle = [t for t in targets if isinstance(t, str) and not any(m == t or m.endswith(f".{t}") for m in parts)]
        if idle:
            problems.append(
                Problem(
                    config_label,
                    f"target_modules names {quote_list(idle)}, but {weights_label} holds no lora_A/"
                    "lora_B for any such module; PEFT would add those layers untrained, so remove "
                    "them from target_modules or " + FIX,
                )
            )
    saved = _names(config.get("modules_to_save"))
    strays = [
        n
        for n in others
        if not any(_fullmatch(rf"(^|.*\.){m}($|\..*)", n) for m in saved)  # PEFT's rule
        and not (n.endswith(".bias") and config.get("bias") not in (None, "none"))
    ]
    if strays:
        problems.append(
            Problem(
                weights_label,
                f"holds {quote_list(strays, 3)}, neither LoRA weights nor a module of modules_to_save {saved}; {FIX}",
            )
        )
    return tuple(sorted(parts)), problems


@one_line
def read_peft_adapter(files: Files, folder: str = "") -> tuple[AdapterFacts | None, list[Problem]]:
    """`folder/adapter_config.json` and `folder/adapter_model.safetensors`."""
    label = join(folder, "adapter_config.json")
    if label not in files:
        return None, [Problem(label, f"is missing; PEFT needs it to load the adapter, so {FIX}")]
    config, problem = read_json_object(files[label], label)
    if problem is not None or config is None:
        return None, [problem] if problem else []
    problems = config_problems(config, label)
    weights, weight_problems = read_weights(files, folder, ("adapter_model",))
    problems += weight_problems
    weights_label = join(folder, "adapter_model.safetensors")
    if weights is None and not weight_problems:
        found = join(folder, "adapter_model.bin") in files
        problems.append(
            Problem(
                weights_label,
                "is missing"
                + (" (only the pickle adapter_model.bin is shipped, which hf-release does not read)" if found else "")
                + f"; {FIX} (safe_serialization=True, the default)",
            )
        )
    adapted: tuple[str, ...] = ()
    if (
        weights is not None
        and config.get("peft_type") == "LORA"
        and not any(
            p.message.startswith(("r is", "target_modules", "rank_pattern", "modules_to_save")) for p in problems
        )
    ):
        adapted, lora = lora_problems(config, weights.tensors, label, weights_label)
        problems += lora
    base, targets = config.get("base_model_name_or_path"), config.get("target_modules")
    alpha, task, revision = config.get("lora_alpha"), config.get("task_type"), config.get("revision")
    version = config.get("peft_version")
    return AdapterFacts(
        peft_type=str(config.get("peft_type")),
        task_type=task if isinstance(task, str) else None,
        pipeline_tag=TASK_TAGS.get(task) if isinstance(task, str) else None,
        base_model=base if isinstance(base, str) else None,
        base_model_is_hub_id=isinstance(base, str) and is_hub_id(base),
        base_model_revision=revision if isinstance(revision, str) else None,
        rank=as_int(config.get("r")),
        alpha=float(alpha) if isinstance(alpha, (int, float)) and not isinstance(alpha, bool) else None,
        rank_pattern=_mapping(config.get("rank_pattern")),
        alpha_pattern=_mapping(config.get("alpha_pattern")),
        target_modules=tuple(_names(targets))
        if isinstance(targets, list)
        else targets
        if isinstance(targets, str)
        else None,
        modules_to_save=tuple(_names(config.get("modules_to_save"))),
        adapted_modules=adapted,
        trainable_parameters=weights.parameter_count if weights else 0,
        use_dora=config.get("use_dora") is True,
        peft_version=version if isinstance(version, str) else None,
    ), problems
