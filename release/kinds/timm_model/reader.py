"""A timm model as `timm.models.save_for_hf` writes it (what `push_to_hf_hub` uploads): timm's own `config.json`
and `model.safetensors`, which timm writes without `__metadata__`.

The config: `architecture` (the timm model name), `num_classes`, `num_features`, `pretrained_cfg` (`classifier` —
the head's module name, or several —, `input_size` [C, H, W], `mean`/`std`, `interpolation`, `crop_pct`, `license`)
and `label_names` (top level; older exports kept everything in one dict, which timm still reads). Checked against
the weights' header: each classifier's `.weight` has `num_classes` rows (and its `.bias` that many values); with
`num_classes` 0 (features only) there is no head. A `pytorch_model.bin` (pickle) beside the safetensors is named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.errors import Problem
from release.formats.common import Files, as_int, join, one_line, read_json_object
from release.formats.safetensors_header import TensorInfo, read_weights

FIX = "save the model again with timm's save_for_hf (or push_to_hf_hub)"


@dataclass(frozen=True)
class TimmFacts:
    architecture: str
    num_classes: int | None
    num_features: int | None
    classifier: tuple[str, ...]  # pretrained_cfg.classifier: the head's module name(s), e.g. ("head.fc",)
    input_size: tuple[int, ...] | None  # [channels, height, width]
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None
    interpolation: str | None
    crop_pct: float | None
    label_names: tuple[str, ...]  # in class order (a dict of id → name is ordered by id)
    license: str | None  # pretrained_cfg.license
    parameter_count: int | None  # from model.safetensors' header
    warnings: tuple[str, ...]  # e.g. a pickle shipped beside the safetensors


def _numbers(value: Any, kind: type | tuple[type, ...]) -> tuple[Any, ...] | None:
    if isinstance(value, list) and value and all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


def _labels(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, dict):
        keyed = sorted((int(k), str(v)) for k, v in value.items() if str(k).isdigit())
        return tuple(v for _, v in keyed)
    return ()


@one_line
def head_problems(
    num_classes: int,
    classifier: tuple[str, ...],
    tensors: Mapping[str, TensorInfo],
    config_label: str,
    weights_label: str,
) -> list[Problem]:
    """Each classifier head's shape against num_classes, as timm's load_state_dict would meet them."""
    problems = []
    for head in classifier:
        weight, bias = tensors.get(f"{head}.weight"), tensors.get(f"{head}.bias")
        if num_classes == 0:
            if weight is not None:
                problems.append(
                    Problem(
                        config_label,
                        f"num_classes is 0 (no classifier), but {weights_label} holds '{head}.weight' "
                        f"{list(weight.shape)}; timm would refuse the unexpected key, so set "
                        f"num_classes to {weight.shape[0]} or {FIX}",
                    )
                )
            continue
        if weight is None:
            problems.append(
                Problem(weights_label, f"has no '{head}.weight', the classifier pretrained_cfg names; {FIX}")
            )
        elif not weight.shape or weight.shape[0] != num_classes:
            problems.append(
                Problem(
                    config_label,
                    f"num_classes is {num_classes}, but the classifier '{head}.weight' in {weights_label} "
                    f"is {list(weight.shape)} ({weight.shape[0] if weight.shape else 0} classes); "
                    f"timm would fail to load it, so set num_classes to match or {FIX}",
                )
            )
        if (
            bias is not None
            and bias.shape != (num_classes,)
            and weight is not None
            and weight.shape[:1] == (num_classes,)
        ):
            problems.append(Problem(weights_label, f"'{head}.bias' is {list(bias.shape)}, not [{num_classes}]; {FIX}"))
    return problems


@one_line
def read_timm_model(files: Files, folder: str = "") -> tuple[TimmFacts | None, list[Problem]]:
    """`folder/config.json` (timm's) with `folder/model.safetensors`."""
    label = join(folder, "config.json")
    if label not in files:
        return None, [
            Problem(label, f"is missing; timm.create_model('hf-hub:…') reads the architecture from it, so {FIX}")
        ]
    config, problem = read_json_object(files[label], label)
    if problem is not None or config is None:
        return None, [problem] if problem else []
    architecture = config.get("architecture")
    if not isinstance(architecture, str) or not architecture:
        return None, [Problem(label, f"has no architecture (the timm model name, e.g. 'resnet50'); {FIX}")]
    cfg = config.get("pretrained_cfg", config)  # the older single-dict export keeps everything at the top
    cfg = cfg if isinstance(cfg, dict) else {}
    problems: list[Problem] = []
    num_classes = as_int(config.get("num_classes", cfg.get("num_classes")))
    if num_classes is None or num_classes < 0:
        problems.append(
            Problem(label, f"num_classes is {config.get('num_classes')!r}; timm needs a count of classes (0: no head)")
        )
        num_classes = None
    model_args = config.get("model_args")
    if (
        isinstance(model_args, dict)
        and num_classes is not None
        and model_args.get("num_classes", num_classes) != num_classes
    ):
        problems.append(
            Problem(
                label,
                f"model_args.num_classes is {model_args['num_classes']!r} but num_classes is {num_classes}; "
                f"timm builds the model from model_args, so make them agree or {FIX}",
            )
        )
    head = cfg.get("classifier")
    classifier = (
        (head,)
        if isinstance(head, str)
        else tuple(h for h in head if isinstance(h, str))
        if isinstance(head, list)
        else ()
    )
    labels = _labels(config.get("label_names", cfg.get("label_names")))
    if labels and num_classes and len(labels) != num_classes:
        problems.append(
            Problem(label, f"label_names has {len(labels)} names for {num_classes} classes; make them agree or {FIX}")
        )
    input_size = _numbers(cfg.get("input_size"), int)
    if input_size is not None and len(input_size) != 3:
        problems.append(
            Problem(label, f"pretrained_cfg.input_size is {list(input_size)}; timm expects [channels, height, width]")
        )
    weights, weight_problems = read_weights(files, folder, ("model",))
    problems += weight_problems
    weights_label = join(folder, "model.safetensors")
    pickle = join(folder, "pytorch_model.bin") in files
    warnings = (
        (
            f"{join(folder, 'pytorch_model.bin')}: a pickle shipped beside {weights_label}; "
            "loading a pickle can run code, and timm reads model.safetensors first, so leave it out (save_for_hf(..., "
            "safe_serialization=True))",
        )
        if pickle and weights is not None
        else ()
    )
    if weights is None and not weight_problems:
        problems.append(
            Problem(
                weights_label,
                "is missing"
                + (" (only the pickle pytorch_model.bin is shipped, which hf-release does not read)" if pickle else "")
                + f"; {FIX} with safe_serialization=True",
            )
        )
    if weights is not None and num_classes is not None:
        if not classifier and num_classes:
            problems.append(
                Problem(
                    label,
                    f"pretrained_cfg names no classifier, so the head cannot be checked against num_classes; {FIX}",
                )
            )
        problems += head_problems(num_classes, classifier, weights.tensors, label, weights_label)
    interpolation, crop, lic = cfg.get("interpolation"), cfg.get("crop_pct"), cfg.get("license")
    return TimmFacts(
        architecture=architecture,
        num_classes=num_classes,
        num_features=as_int(config.get("num_features")),
        classifier=classifier,
        input_size=input_size,
        mean=_numbers(cfg.get("mean"), (int, float)),
        std=_numbers(cfg.get("std"), (int, float)),
        interpolation=interpolation if isinstance(interpolation, str) else None,
        crop_pct=float(crop) if isinstance(crop, (int, float)) and not isinstance(crop, bool) else None,
        label_names=labels,
        license=lic if isinstance(lic, str) else None,
        parameter_count=weights.parameter_count if weights else None,
        warnings=warnings,
    ), problems
