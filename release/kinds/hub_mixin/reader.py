"""A model as huggingface_hub's `PyTorchModelHubMixin.save_pretrained` writes it: `config.json` (the constructor's
arguments, which `from_pretrained` passes back to the class: `cls(**config)`), `model.safetensors` (safetensors'
`save_model`: no `__metadata__`, or only the names of shared tensors it dropped) and a README.md (library_name, tags
`model_hub_mixin`/`pytorch_model_hub_mixin`, a "- Code: <repo_url>" line), which init reads and leaves out.

`from_pretrained` downloads `model.safetensors` alone (no shards, no other name), falling back to `pytorch_model.bin`
(a pickle) only when it is missing; the class itself is the user's code, never shipped with the weights, so its name
and import path are the spec's (`[card.usage] model_class`), never read from the files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.formats.common import Files, one_line, read_json_object
from release.formats.safetensors_header import Weights, read_weights

CONFIG, WEIGHTS, INDEX, PICKLE = "config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"
README_NAME = "README.md"
FIX = "save the model again with its save_pretrained (PyTorchModelHubMixin)"
MIXIN_TAG = "model_hub_mixin"  # the tag the mixin gives every model it saves (its README's front matter)
# the mixin's README.md template: "- Code: {{ repo_url | default("[More Information Needed]", true) }}"
CODE_LINE = re.compile(r"^- Code: (https://\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class HubMixinFacts:
    arguments: Mapping[str, Any] | None  # config.json: the constructor's keyword arguments; None: no config.json
    weights: Weights
    model_class: str | None  # [card.usage] model_class: the import path the spec gives
    warnings: tuple[str, ...]  # e.g. a pickle shipped beside the safetensors


@one_line
def read_hub_mixin(files: Files, model_class: str | None = None) -> tuple[HubMixinFacts | None, list[Problem]]:
    """config.json and model.safetensors at the repo's root, as from_pretrained reads them."""
    problems: list[Problem] = []
    arguments: Mapping[str, Any] | None = None
    if CONFIG in files:
        config, problem = read_json_object(files[CONFIG], CONFIG)
        if problem is not None:
            # read_json_object says what is wrong in JSON's terms; the mixin's use of it says why it matters
            problems.append(
                Problem(problem.file, f"{problem.message} (from_pretrained passes it to the class as cls(**config))")
            )
        arguments = config
    if WEIGHTS not in files and INDEX in files:
        return None, [
            *problems,
            Problem(
                INDEX,
                f"is a sharded checkpoint; PyTorchModelHubMixin.from_pretrained loads only one {WEIGHTS}, so {FIX} "
                "(it writes one file)",
            ),
        ]
    weights, weight_problems = read_weights(files, "", ("model",))
    problems += weight_problems
    pickle = PICKLE in files
    if weights is None and not weight_problems:
        problems.append(
            Problem(
                WEIGHTS,
                "is missing: a release without weights"
                + (f" (only the pickle {PICKLE}, which hf-release does not read)" if pickle else "")
                + f"; PyTorchModelHubMixin.from_pretrained loads the weights from {WEIGHTS}, so add the file "
                f"save_pretrained wrote, or {FIX}",
            )
        )
    if weights is None or problems:
        return None, problems
    warnings = (
        (
            f"{PICKLE}: a pickle shipped beside {WEIGHTS}; from_pretrained reads {WEIGHTS} first and loading a "
            "pickle can run code, so leave it out",
        )
        if pickle
        else ()
    )
    return HubMixinFacts(arguments, weights, model_class, warnings), []


def readme_code_url(path: Path) -> str | None:
    """The "- Code: <url>" line of the README.md the mixin wrote (its repo_url), None when it gave none."""
    try:
        text = path.read_text("utf-8") if path.stat().st_size <= 1024 * 1024 else ""
    except (OSError, UnicodeDecodeError):
        return None
    found = CODE_LINE.search(text)
    return found.group(1) if found else None
