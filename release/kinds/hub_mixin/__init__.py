"""The hub-mixin kind: a PyTorch model shared with huggingface_hub's `PyTorchModelHubMixin` — an `nn.Module` subclass
that also inherits the mixin, whose `save_pretrained` writes `config.json` (the constructor's arguments: no
`architectures`, no `model_type`), `model.safetensors` and its own README.md.

Detected (release/kinds/registry.py) by that config.json — none of the keys transformers' save_pretrained always
writes — beside `model.safetensors`, and by init from the README's `model_hub_mixin` tag, which init writes into the
spec (build never stages that README: hf-release writes the card). The README is not shipped: init carries its
front matter (`library_name`, tags) into `[card.metadata]` and its "Code:" URL into `[card.usage] code_url`. No
transformers rule applies: the checks are the reader's (release/kinds/hub_mixin/reader.py). The class is the user's
code, which the mixin does not name: init leaves `[card.usage] model_class` as a marked placeholder (build warns,
push refuses it without --allow-placeholder). The card's facts: the constructor's arguments, tensors and
parameters; usage `from MODULE import CLASS` + `CLASS.from_pretrained(REPO, revision=VERSION)`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from release.errors import Problem
from release.kinds.hub_mixin.reader import MIXIN_TAG, README_NAME, HubMixinFacts, read_hub_mixin, readme_code_url
from release.kinds.kind import CardPlaceholder, Kind
from release.kinds.own_files import card_part, short
from release.spec import ReleaseSpec

logger = logging.getLogger(__name__)
MAX_ARGUMENTS = 30  # constructor arguments shown one per row; more are counted
MAX_VALUE = 60  # characters of one argument's JSON shown; a longer list or object is described
TAGS = [MIXIN_TAG, "pytorch_model_hub_mixin"]  # the tags the mixin gives a PyTorch model

MODEL_CLASS = CardPlaceholder(
    key="usage.model_class",
    value="your_module.YourModelClass",
    comment="placeholder: the mixin does not write the class; give its import path (module.Class), "
    "e.g. tinynet.model.TinyNet",
    fix="give the import path of the model's class (module.Class, the nn.Module subclass that inherits "
    "PyTorchModelHubMixin): the card's usage imports it and calls its from_pretrained",
)


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[HubMixinFacts | None, list[Problem]]:
    """config.json and model.safetensors at the repo's root; the reader's warnings, and tags that drop the mixin's
    own, go to stderr."""
    facts, problems = read_hub_mixin(files, card.get("usage", {}).get("model_class"))
    for warning in facts.warnings if facts is not None else ():
        logger.warning("warning: %s", warning)
    tags = card.get("metadata", {}).get("tags")
    if facts is not None and tags is not None and MIXIN_TAG not in tags:
        logger.warning(
            "warning: [card.metadata] tags leave out %s, the tag huggingface_hub gives a model its mixin saved; "
            "add it back so the Hub lists the model with the mixin's",
            MIXIN_TAG,
        )
    return facts, problems


def _value(value: Any) -> str:
    from release.card.text import code_cell

    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= MAX_VALUE:
        return code_cell(text)
    if isinstance(value, list):
        return f"a list of {len(value)} values"
    if isinstance(value, dict):
        return f"an object of {len(value)} keys"
    return code_cell(text[:MAX_VALUE] + "…")


def facts_rows(facts: HubMixinFacts) -> list[tuple[str, str]]:
    from release.card.text import cell, code_cell

    rows = [("Saved with", "huggingface_hub's `PyTorchModelHubMixin`")]
    if facts.model_class:
        rows.append(("Class", code_cell(facts.model_class)))
    if facts.arguments is None:
        rows.append(("Constructor arguments", "none (no config.json: the class is built with its defaults)"))
    else:
        names = sorted(facts.arguments)
        rows += [(f"Argument {code_cell(n)}", _value(facts.arguments[n])) for n in names[:MAX_ARGUMENTS]]
        if len(names) > MAX_ARGUMENTS:
            rows.append(("More arguments", cell(f"{len(names) - MAX_ARGUMENTS} more in config.json")))
    weights = facts.weights
    rows.append(("Parameters", short(weights.parameter_count)))
    rows.append(("Tensors", f"{len(weights.tensors):,}"))
    by_dtype = weights.parameters_by_dtype
    if by_dtype:
        rows.append(("Tensor dtype", cell(", ".join(by_dtype) if len(by_dtype) > 1 else next(iter(by_dtype)))))
    return rows


def metadata(facts: HubMixinFacts) -> dict[str, Any]:
    return {"tags": list(TAGS)}  # library_name is the mixin's README's (carried into [card.metadata] by init)


def card_context(spec: ReleaseSpec, facts: Any) -> dict[str, str | None]:
    """`from MODULE import CLASS` then `CLASS.from_pretrained(REPO, revision=VERSION)`: the mixin builds the class
    from config.json's arguments and loads model.safetensors at that revision; where the class's code lives."""
    read: HubMixinFacts | None = facts.kind_facts.read
    usage = spec.card.get("usage", {})
    model_class, url = usage.get("model_class"), usage.get("code_url")
    if read is None or not model_class:
        return {"hub_mixin": None, "hub_mixin_class": None, "hub_mixin_code": None}
    from release.card.text import code

    module, name = model_class.rsplit(".", 1)  # the schema holds it to module.Class
    lines = [
        f"from {module} import {name}",
        "",
        f'model = {name}.from_pretrained("{spec.repo_id}", revision="{spec.version}")',
    ]
    return {
        "hub_mixin": "```python\n" + "\n".join(lines) + "\n```",
        "hub_mixin_class": f"{code(name)} from {code(module)}",
        # an https URL the schema checked, quoted so that no character of it ends the Markdown link
        "hub_mixin_code": f"[{code(url)}]({quote(url, safe=':/?#@!$&*+,;=%~._-')})" if url else None,
    }


def init_card(files: Mapping[str, Any]) -> dict[str, tuple[Any, str]]:
    """The mixin's README.md (its repo_url on the "Code:" line) → [card.usage] code_url."""
    readme = next((files[p] for p in files if p.casefold() == README_NAME.casefold()), None)
    url = readme_code_url(readme) if readme is not None else None
    return (
        {"usage.code_url": (url, "where the class's code lives: the mixin's repo_url, from its README.md")}
        if url
        else {}
    )


def _no_config_rules(config: dict[str, Any], label: str) -> list[Problem]:
    return []  # config.json is the constructor's arguments, the class's to accept: nothing transformers asks applies


def _no_tensor_rules(
    config: dict[str, Any], tensors: Mapping[str, Any], label: str, check_shapes: bool
) -> list[Problem]:
    return []  # the tensors are the class's state dict: no naming or layer rule of transformers applies


def describe(detected: list[Any], architectures: list[str]) -> str:
    """init's summary: the mixin does not name the class, so the summary names the mixin."""
    return "a PyTorchModelHubMixin model"


KIND = Kind(
    name="hub-mixin",
    template="hub-mixin.md.j2",
    config_problems=_no_config_rules,
    tensor_problems=_no_tensor_rules,
    card_part=card_part(facts_rows, metadata),
    card_requires=(MODEL_CLASS.key,),
    describe=describe,
    card_context=card_context,
    files_check=files_check,
    card_placeholders=(MODEL_CLASS,),
    init_card=init_card,
    library_reads=("weights", "config"),  # from_pretrained reads config.json and model.safetensors alone
)
