"""Model card metadata validation as the Hub applies it when a README.md is committed (`/api/validate-yaml`).

The Hub validates the YAML front matter with a schema (Joi) and answers 400 with one message per problem,
worded the Joi way: `"license" must be one of [...]`, `"tags" must be an array`,
`"model-index[0].results" is required`. The rules here are the ones a release touches — `license`,
`base_model` and `base_model_relation`, `tags`, `model-index` — read from the Hub's model card
documentation (docs/hub/model-cards.md, repositories-licenses.md) and the client's `repocard_data.py`.
They are written as a JSON Schema, and jsonschema's errors are reworded into the Hub's messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError

from release.spec import hub_lists
from release.util import yamlio

# The Hub's license ids, in the order it lists them in its error message, and its base-model relations.
LICENSES = tuple(hub_lists()["license"]["enum"])
BASE_MODEL_RELATIONS = tuple(hub_lists()["base_model_relation"]["enum"])
# A model id as the client validates repo ids (utils/_validators.py), namespace optional.
MODEL_ID = r"^(?:[\w.-]+/)?[\w.-]{1,96}$"
EMPTY_METADATA_WARNING = (
    "empty or missing yaml metadata in repo card (https://huggingface.co/docs/hub/model-cards#model-card-metadata)"
)
MAX_ERRORS = 20  # what one answer lists; the Hub stops early too
MAX_NODES = 100_000  # values in the metadata, counted through YAML aliases (which can nest exponentially)
MAX_DEPTH = yamlio.MAX_DEPTH  # nesting levels, refused from the event stream: the bound of hf-release's own reader
_FRONT_MATTER = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")

_STRING = {"type": "string"}
_NAMED_TYPE = {"type": "object", "required": ["type"], "properties": {"type": _STRING, "name": _STRING}}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "license": {"anyOf": [{"enum": list(LICENSES)}, {"type": "array", "items": {"enum": list(LICENSES)}}]},
        "license_name": _STRING,
        "license_link": _STRING,
        "library_name": _STRING,
        "pipeline_tag": _STRING,
        "tags": {"type": "array", "items": _STRING},
        "datasets": {"type": "array", "items": _STRING},
        "base_model": {
            "anyOf": [
                {"type": "string", "pattern": MODEL_ID},
                {"type": "array", "items": {"type": "string", "pattern": MODEL_ID}},
            ]
        },
        "base_model_relation": {"enum": list(BASE_MODEL_RELATIONS)},
        "model-index": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "results"],
                "properties": {
                    "name": _STRING,
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["task", "dataset", "metrics"],
                            "properties": {
                                "task": _NAMED_TYPE,
                                "dataset": {
                                    "type": "object",
                                    "required": ["type", "name"],
                                    "properties": {
                                        "type": _STRING,
                                        "name": _STRING,
                                        "config": _STRING,
                                        "split": _STRING,
                                        "revision": _STRING,
                                    },
                                },
                                "metrics": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["type", "value"],
                                        "properties": {
                                            "type": _STRING,
                                            "name": _STRING,
                                            "config": _STRING,
                                            "verified": {"type": "boolean"},
                                        },
                                    },
                                },
                                "source": {"type": "object", "properties": {"name": _STRING, "url": _STRING}},
                            },
                        },
                    },
                },
            },
        },
    },
}
_VALIDATOR = Draft202012Validator(_SCHEMA)
_JOI_TYPES = {"array": "an array", "object": "of type object", "string": "a string", "boolean": "a boolean"}


def front_matter(text: str) -> tuple[Any, str | None]:
    """The YAML block at the top of a README, parsed: (data, None), (None, None) if absent, or (None, error)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, None
    try:
        return yamlio.load(match.group(2)), None
    except yaml.YAMLError as exc:
        return None, f"Invalid YAML in README.md: {exc}"


def validate_card(text: str, repo_type: str = "model") -> tuple[list[str], list[str]]:
    """(errors, warnings) the Hub would answer for this README.md content."""
    data, error = front_matter(text)
    if error:
        return [error], []
    if data is None:
        return [], [EMPTY_METADATA_WARNING]
    if not isinstance(data, dict):
        return ['"value" must be of type object'], []
    if _too_many_nodes(data):
        return [
            f"README.md metadata holds more than {MAX_NODES} values (YAML aliases count each time they are used)"
        ], []
    if repo_type != "model":
        return [], []  # dataset and Space cards have their own schemas, which a model release never sends
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [_joi_message(e) for e in errors[:MAX_ERRORS]], []


def _too_many_nodes(data: Any) -> bool:
    budget, stack = MAX_NODES, [data]
    while stack:
        budget -= 1
        if budget < 0:
            return True
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _label(path: Iterable[Any]) -> str:
    label = ""
    for part in path:
        label += f"[{part}]" if isinstance(part, int) else (f".{part}" if label else str(part))
    return label or "value"


def _joi_message(error: ValidationError) -> str:
    label = _label(error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f'"{label}.{missing}" is required' if label != "value" else f'"{missing}" is required'
    if error.validator == "type":
        return f'"{label}" must be {_JOI_TYPES.get(str(error.validator_value), error.validator_value)}'
    if error.validator == "enum":
        return f'"{label}" must be one of [{", ".join(map(str, error.validator_value))}]'
    if error.validator == "pattern":
        return f'"{label}" with value "{error.instance}" fails to match the required pattern: /{error.validator_value}/'
    if error.validator == "anyOf":
        if label == "license" and not isinstance(error.instance, list):
            return f'"{label}" must be one of [{", ".join(LICENSES)}, array]'  # the Hub's words, "array" included
        # Report the rule of the alternative the value was closest to: the most specific one it broke.
        inner = [e for e in error.context or [] if e.validator != "type"]
        if inner:
            return _joi_message(max(inner, key=lambda e: len(e.absolute_path)))
        return f'"{label}" does not match any of the allowed types'
    return f'"{label}" is invalid'


EVAL_RESULTS_FOLDER = ".eval_results/"


def validate_eval_results(content: bytes) -> list[str]:
    """What the Hub's published eval-results schema (hub-docs eval_results.yaml, transcribed in
    release/schemas/eval-results.schema.json) refuses in one `.eval_results/*.yaml` file. How the Hub answers such
    a file is not documented; the local Hub refuses the commit, so a rehearsal catches it."""
    from release.util.schemas import load_schema

    try:
        data = yamlio.load(content.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        return [f"not readable YAML: {str(exc).splitlines()[0]}"]
    validator = Draft202012Validator(load_schema("eval-results.schema.json"))
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_label(e.absolute_path) or 'the file'}: {e.message}" for e in errors[:MAX_ERRORS]]
