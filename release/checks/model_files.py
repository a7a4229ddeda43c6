"""Check the small files of a model release by role: tokenizer, generation config, evaluation results.

Each must be what its tool writes: tokenizer.json a `tokenizers` serialization (an object with a
`model`), tokenizer_config.json / special_tokens_map.json objects, chat_template.jinja a template that
parses, vocab/merges text files, tokenizer.model non-empty; generation_config.json an object,
and an `eval` file an lm-evaluation-harness results JSON, read by release/evidence/lm_eval.py.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.checks.common import read_json, run_per_file
from release.errors import CheckFailed, Problem
from release.evidence.lm_eval import LmEvalError, LmEvalRun, load_results
from release.pipeline import Context, StepResult


@dataclass(frozen=True)
class JsonFile:
    data: dict[str, Any]


def _object(path: Path, label: str, what: str) -> dict[str, Any]:
    data = read_json(path, label)
    if not isinstance(data, dict):
        raise CheckFailed(Problem(label, f"holds a JSON {type(data).__name__}; {what} is a JSON object"))
    return data


@dataclass(frozen=True)
class TokenizerAsset:
    """A tokenizer file that is not JSON (tokenizer.model, merges.txt, vocab.txt, chat_template.jinja)."""

    name: str


def load_tokenizer_file(path: Path, label: str) -> JsonFile | TokenizerAsset:
    """A tokenizer's JSON files are checked as JSON; a chat template must parse as Jinja; vocab and merges
    files must be text; other files (a sentencepiece tokenizer.model) are only required to be non-empty."""
    name = posixpath.basename(label)
    if name.endswith(".json"):
        data = _object(path, label, "a tokenizer file")
        if name == "tokenizer.json" and not isinstance(data.get("model"), dict):
            raise CheckFailed(
                Problem(
                    label,
                    "has no `model` object; save the tokenizer with tokenizers' Tokenizer.save or save_pretrained",
                )
            )
        return JsonFile(data)
    if path.stat().st_size == 0:
        raise CheckFailed(Problem(label, "is empty; save the tokenizer again with save_pretrained"))
    if name.endswith((".jinja", ".txt")):
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            raise CheckFailed(
                Problem(label, "is not UTF-8 text; save the tokenizer again with save_pretrained")
            ) from None
        if name.endswith(".jinja"):
            import jinja2  # only for a chat template: verify's lint reads these files too, and most releases have none

            try:
                jinja2.Environment().parse(text)
            except jinja2.TemplateSyntaxError as exc:
                raise CheckFailed(
                    Problem(f"{label}:{exc.lineno}", f"chat template syntax error: {exc.message}; fix the template")
                ) from None
    return TokenizerAsset(name)


def load_generation_config(path: Path, label: str) -> JsonFile:
    return JsonFile(_object(path, label, "generation_config.json"))


def load_eval(path: Path, label: str) -> LmEvalRun:
    try:
        return load_results(path)
    except LmEvalError as exc:
        raise CheckFailed(Problem(label, f"{exc}; ship the harness's results_*.json as it wrote it")) from None


class CheckTokenizer:
    name = "check-tokenizer"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "tokenizer", load_tokenizer_file)


class CheckGenerationConfig:
    name = "check-generation-config"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "generation-config", load_generation_config)


class CheckEval:
    name = "check-eval"

    def run(self, ctx: Context) -> StepResult:
        return run_per_file(ctx, "eval", load_eval)
