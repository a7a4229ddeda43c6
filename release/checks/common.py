"""What every artifact check shares: strict JSON reading (release/util/jsonio.py) and JSON Schema problems as
one-liners."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from release.errors import CheckFailed, Problem
from release.pipeline import Context, Done, Skipped, StepResult
from release.spec import key_path
from release.util import jsonio
from release.util.schemas import load_schema


def read_json(path: Path, label: str) -> Any:
    """Parse JSON strictly: no NaN/Infinity, no duplicate keys; one Problem on failure."""
    try:
        return jsonio.read_json(path, strict=True)
    except UnicodeDecodeError:
        raise CheckFailed(Problem(label, "is not UTF-8 text")) from None
    except jsonio.TooLarge as exc:
        raise CheckFailed(
            Problem(label, f"{exc}; hf-release reads JSON evidence up to {jsonio.MAX_BYTES // 1024 // 1024} MiB")
        ) from None
    except json.JSONDecodeError as exc:
        raise CheckFailed(
            Problem(label, f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        ) from None
    except ValueError as exc:
        raise CheckFailed(Problem(label, str(exc))) from None
    except RecursionError:
        raise CheckFailed(Problem(label, "nests arrays or objects too deeply to read; flatten it")) from None


def schema_problems(schema_name: str, data: Any, label: str) -> list[Problem]:
    """Every JSON Schema violation, one line each with its key path."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [Problem(label, f"{key_path(list(e.absolute_path)) or '(top level)'}: {_message(e)}") for e in errors]


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "contains":  # jsonschema's own text does not say what is wanted
        return f"{error.instance!r} has no item matching {json.dumps(error.validator_value)}"
    return error.message


def run_per_file(ctx: Context, role: str, load: Any) -> StepResult:
    """Apply `load(path, label)` to every staged file of a role; what it returns lands in ctx.parsed."""
    files = ctx.by_role(role)
    if not files:
        return Skipped(f"no {role} file in this release")
    valid = 0
    for f in files:
        try:
            ctx.parsed.add(f.path_in_repo, load(f.staged, f.path_in_repo))
            valid += 1
        except CheckFailed as exc:
            ctx.problems.extend(exc.problems)
    return Done(f"{valid}/{len(files)} {role} file(s) valid")
