"""The diffusers-pipeline kind: `model_index.json` and one folder per component, as `DiffusionPipeline.save_pretrained`
writes them.

Checks are the reader's (release/kinds/diffusers_pipeline/reader.py): every component model_index.json names has its
folder, its config (whose `_class_name` is the class named) and its weights or vocabulary; a problem names the file
in diffusers' terms (a transformers component too: diffusers wrote the pipeline, so the fix is to save the pipeline
again). The files inside a component folder take role `component` (the registry's `named_by`, reader.py
component_folders), so that a pipeline's several config.json are not "N files have role 'config'". The card: the
pipeline class and, per component, its library, class and parameters (a total only as the sum of the components,
said so); `library_name: diffusers`,
`pipeline_tag` from the pipeline class; usage `DiffusionPipeline.from_pretrained(repo, revision=version)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.formats import transformers_config
from release.kinds.diffusers_pipeline.reader import FIX, PipelineFacts, read_diffusers_pipeline
from release.kinds.kind import Kind, LoadProof
from release.kinds.own_files import card_part, short
from release.spec import ReleaseSpec

# what the transformers reader advises for a component's files; a pipeline's are re-saved with diffusers instead
TRANSFORMERS_FIXES = (transformers_config.FIX, "save the model with save_pretrained")


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[PipelineFacts | None, list[Problem]]:
    """The pipeline at the repo's root and every component it names, read and checked."""
    facts, problems = read_diffusers_pipeline(files, "")
    return facts, [_diffusers_terms(p) for p in problems]


def _diffusers_terms(problem: Problem) -> Problem:
    message = problem.message
    for fix in TRANSFORMERS_FIXES:
        message = message.replace(fix, FIX)
    return problem if message == problem.message else Problem(problem.file, message)


def facts_rows(facts: PipelineFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    rows = [("Pipeline", code(facts.pipeline_class))]
    if facts.pipeline_tag:
        rows.append(("Task", cell(facts.pipeline_tag)))
    for c in facts.components:
        what = f"{c.library} {c.class_name}"
        if c.parameter_count is not None:
            what += f", {short(c.parameter_count)} parameters" + (f" ({c.dtype})" if c.dtype else "")
        if c.variant:
            what += f", variant {c.variant}"
        rows.append((f"Component {code(c.name)}", cell(what)))
    counted = [c for c in facts.components if c.parameter_count is not None]
    if len(counted) > 1:
        rows.append((f"Parameters, the {len(counted)} model components together", short(facts.parameter_count)))
    if facts.absent:
        rows.append(("Not included (optional)", ", ".join(code(a) for a in facts.absent)))
    if facts.diffusers_version:
        rows.append(("Saved with", cell(f"diffusers {facts.diffusers_version}")))
    return rows


def metadata(facts: PipelineFacts) -> dict[str, Any]:
    out: dict[str, Any] = {"library_name": "diffusers"}
    if facts.pipeline_tag:
        out["pipeline_tag"] = facts.pipeline_tag
    return out


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`DiffusionPipeline.from_pretrained(this repo, revision=this version)`."""
    if facts.kind_facts.read is None:
        return {"diffusers": None}
    lines = [
        "from diffusers import DiffusionPipeline",
        "",
        f'pipe = DiffusionPipeline.from_pretrained("{spec.repo_id}", revision="{spec.version}")',
    ]
    return {"diffusers": "```python\n" + "\n".join(lines) + "\n```"}


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []  # the components' configs are the reader's (files_check)


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: the pipeline class model_index.json names."""
    from release.util.jsonio import read_json

    pipeline = next((d for d in detected if d.role == "pipeline-index"), None)
    try:
        index = read_json(pipeline.path) if pipeline is not None else None
    except (OSError, ValueError, RecursionError):
        index = None
    name = index.get("_class_name") if isinstance(index, dict) else None
    return f"a diffusers {name if isinstance(name, str) and name else 'pipeline'}"


# each component reports its keys: diffusers' models (ModelMixin) and a transformers text encoder
DIFFUSERS_MODELS = ("diffusers.models.modeling_utils:ModelMixin", "transformers.modeling_utils:PreTrainedModel")

KIND = Kind(
    name="diffusers-pipeline",
    template="diffusers-pipeline.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "diffusers"},
    describe=describe,
    card_context=card_context,
    files_check=files_check,
    model_roles=("pipeline-index", "component"),
    load_proof=LoadProof(
        "diffusers",
        "diffusers",
        "diffusers transformers torch",
        load_reports=DIFFUSERS_MODELS,
        meta_device=False,
    ),
)
