"""The timm kind: an image model as timm's `save_for_hf` / `push_to_hf_hub` writes it — timm's own `config.json`
(`architecture`, `num_classes`, `pretrained_cfg`) and `model.safetensors` without `__metadata__`.

Checks are the reader's (release/kinds/timm_model/reader.py: the config timm reads, `num_classes` against the classifier
head's shape, named in timm's terms in one line naming config.json); the weights' header is checked as any kind's,
except that timm writes no `__metadata__.format` (this kind asks for none). A `pytorch_model.bin` (pickle) beside
the safetensors is a warning naming it. The card's facts: architecture, classes, input size, parameters, the label
names when few; front matter `library_name: timm`, `pipeline_tag: image-classification`; usage
`timm.create_model("hf-hub:REPO@VERSION", pretrained=True)`, pinned to the version. No transformers snippet.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds.kind import Kind
from release.kinds.own_files import card_part, short
from release.kinds.timm_model.reader import TimmFacts, read_timm_model
from release.spec import ReleaseSpec
from release.util.jsonio import read_json

logger = logging.getLogger(__name__)
FEW_LABELS = 20  # label names shown on the card up to this many classes (ImageNet's 1,000 are not)


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[TimmFacts | None, list[Problem]]:
    """timm's config.json and model.safetensors at the repo's root; the reader's warnings go to stderr."""
    facts, problems = read_timm_model(files)
    for warning in facts.warnings if facts is not None else ():
        logger.warning("warning: %s", warning)
    return facts, problems


def facts_rows(facts: TimmFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    rows = [("Architecture", code(facts.architecture))]
    if facts.num_classes is not None:
        rows.append(("Classes", f"{facts.num_classes:,}" if facts.num_classes else "0 (no classifier: features only)"))
    if facts.num_features is not None:
        rows.append(("Features", f"{facts.num_features:,}"))
    if facts.input_size is not None:
        channels, height, width = facts.input_size
        rows.append(("Input size", f"{channels} × {height} × {width}"))
    if facts.mean is not None and facts.std is not None:
        rows.append(("Normalization", cell(f"mean {list(facts.mean)}, std {list(facts.std)}")))
    if facts.interpolation or facts.crop_pct is not None:
        parts = [
            p for p in (facts.interpolation, f"crop {facts.crop_pct:g}" if facts.crop_pct is not None else None) if p
        ]
        rows.append(("Preprocessing", cell(", ".join(parts))))
    if facts.parameter_count is not None:
        rows.append(("Parameters", short(facts.parameter_count)))
    if facts.label_names and len(facts.label_names) <= FEW_LABELS:
        rows.append(("Labels", cell(", ".join(facts.label_names))))
    return rows


def metadata(facts: TimmFacts) -> dict[str, Any]:
    return {"library_name": "timm", "pipeline_tag": "image-classification"}


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`timm.create_model("hf-hub:REPO@VERSION", pretrained=True)`: timm reads config.json and the weights at that
    revision."""
    read: TimmFacts | None = facts.kind_facts.read
    if read is None:
        return {"timm": None}
    lines = [
        "import timm",
        "",
        f'model = timm.create_model("hf-hub:{spec.repo_id}@{spec.version}", pretrained=True)',
        "model.eval()",
    ]
    if read.num_classes:
        lines += [
            "",
            "config = timm.data.resolve_data_config({}, model=model)",
            "transform = timm.data.create_transform(**config)  # PIL image → the tensor the model expects",
        ]
    return {"timm": "```python\n" + "\n".join(lines) + "\n```"}


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []  # timm's config.json is the reader's (files_check): it has no `architectures`, which transformers needs


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []  # the classifier head against num_classes is the reader's (files_check)


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: the one model class timm's config.json names (`architecture`, where transformers' config.json
    lists `architectures`)."""
    config = next((d for d in detected if d.role == "config"), None)
    try:
        data = read_json(config.path) if config is not None else None
    except (OSError, ValueError, RecursionError):
        data = None
    named = data.get("architecture") if isinstance(data, dict) else None
    classes = architectures or ([named] if isinstance(named, str) else [])
    return f"a {', '.join(map(str, classes))} model" if classes else "a model"


KIND = Kind(
    name="timm",
    template="timm.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "timm", "pipeline_tag": "image-classification"},
    describe=describe,
    card_context=card_context,
    usage_pins=('revision="{version}"', '@{version}"'),
    files_check=files_check,
    library_reads=("weights", "config"),  # timm.create_model("hf-hub:…") reads config.json and the weights only
)
