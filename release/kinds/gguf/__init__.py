"""The GGUF kind: llama.cpp's single-file (or split) models, as llama.cpp's converter / the gguf package writes them.

Checks are the reader's (release/kinds/gguf/reader.py: header, metadata and tensor infos bounded, every tensor's
data within the file — a truncated file is refused naming it — split parts as a set). The card's facts
come from the headers (architecture, context length, quantization and tensor types, parameter count, a
chat template shipped); its front matter says `library_name: gguf` (transformers does not load the repo
without `gguf_file=`); its usage downloads the file at this revision for llama.cpp and loads it with
transformers' `gguf_file=`, each pinned to the version.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds.gguf.reader import GGUFModel, read_gguf_files
from release.kinds.kind import Kind
from release.kinds.own_files import card_part, short
from release.spec import ReleaseSpec


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[tuple[GGUFModel, ...] | None, list[Problem]]:
    models, problems = read_gguf_files(files)
    return (models or None), problems


def _quant(model: GGUFModel) -> str:
    return model.file_type_name or ", ".join(model.tensor_types)


def facts_rows(models: tuple[GGUFModel, ...]) -> list[tuple[str, str]]:
    from release.card.text import cell, code

    head = models[0]
    rows = []
    if head.architecture:
        rows.append(("Architecture", cell(head.architecture)))
    if head.name:
        rows.append(("Name", cell(head.name)))
    if head.context_length is not None:
        rows.append(("Context length", f"{head.context_length:,}"))
    if head.block_count is not None:
        rows.append(("Layers", f"{head.block_count:,}"))
    if head.vocab_size is not None:
        rows.append(("Vocabulary size", f"{head.vocab_size:,}"))
    counts = sorted({m.parameter_count for m in models})
    rows.append(("Parameters", " / ".join(short(c) for c in counts)))
    for model in models:
        types = ", ".join(f"{t} × {n:,}" for t, n in model.tensor_types.items())
        parts = f" ({model.split_count} parts)" if model.split_count > 1 else ""
        rows.append((code(model.files[0]) + parts, cell(f"{_quant(model)}: {types} tensors")))
    rows.append(("Chat template", "yes" if any(m.chat_template for m in models) else "no"))
    return rows


def metadata(models: tuple[GGUFModel, ...]) -> dict[str, Any]:
    """library_name gguf; pipeline_tag text-generation when every model is a language model (what llama.cpp runs)."""
    tag = {"pipeline_tag": "text-generation"} if models and all(m.language_model for m in models) else {}
    return {"library_name": "gguf", **tag}


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """llama.cpp on the file downloaded at this revision; transformers with gguf_file= at this revision."""
    models: tuple[GGUFModel, ...] | None = facts.kind_facts.read
    if not models:
        return {"llama_cpp": None, "transformers": None}
    model = models[0]
    first, repo, version = model.files[0], spec.repo_id, spec.version
    download = " ".join(
        ["hf download", *map(shlex.quote, [repo, *model.files, "--revision", version]), "--local-dir ."]
    )
    chat = any(m.chat_template for m in models)
    llama = [download, f"llama-cli -m {shlex.quote(first)}" + (" -cnv" if chat else ' -p "Hello"')]
    python = [
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "",
        f'tokenizer = AutoTokenizer.from_pretrained("{repo}", gguf_file="{first}", revision="{version}")',
        f'model = AutoModelForCausalLM.from_pretrained("{repo}", gguf_file="{first}", revision="{version}")',
    ]
    return {
        "llama_cpp": "```bash\n" + "\n".join(llama) + "\n```",
        "transformers": "```python\n" + "\n".join(python) + "\n```" if model.split_count == 1 else None,
    }


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: the architecture the first GGUF file's metadata names, and how many files."""
    from release.kinds.gguf.reader import read_gguf

    ggufs = [d for d in detected if d.role == "gguf"]
    if not ggufs:
        return "a model"
    model = read_gguf(ggufs[0].path, ggufs[0].path.name)[0]
    name = model.architecture if model is not None and model.architecture else ""
    return f"a {name + ' ' if name else ''}model in {len(ggufs)} GGUF file{'s' if len(ggufs) != 1 else ''}"


KIND = Kind(
    name="gguf",
    template="gguf.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_defaults={"library_name": "gguf"},
    describe=describe,
    card_context=card_context,
    usage_pins=("--revision {version}", 'revision="{version}"'),
    files_check=files_check,
    model_roles=("gguf",),
    library_reads=(),  # llama.cpp reads the .gguf file alone: its tokenizer and hyperparameters are inside
)
