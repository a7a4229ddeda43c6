"""What the format readers share: bounded reads of small JSON files, and lookups in a release's files.

A release's files are given as a mapping path_in_repo → local path (a staging folder, or the
artifacts themselves), so a reader works the same before and after staging and never lists a folder.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from release.errors import Problem
from release.util.jsonio import TooLarge, parse, read_bounded

MAX_JSON_BYTES = 16 * 1024 * 1024  # configs are kilobytes; a tokenizer_config.json with a long chat template, < 1 MB
MAX_JSON_DEPTH = 64  # configs nest a few levels (quantization_config.config_groups…); 64 is far above any real one

Files = Mapping[str, Path]
F = TypeVar("F", bound=Callable[..., Any])
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(text: str) -> str:
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def one_line(function: F) -> F:
    """Problems a reader returns quote names from the files (tensor names, keys, module paths): escape any control or
    bidi character in them, so that every problem stays one line that reads as it is."""

    def clean(problems: list[Problem]) -> list[Problem]:
        return [
            p
            if not (_CONTROL.search(p.file) or _CONTROL.search(p.message))
            else Problem(_escape(p.file), _escape(p.message))
            for p in problems
        ]

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        if isinstance(result, list):
            return clean(result)
        return (*result[:-1], clean(result[-1]))

    return wrapper  # type: ignore[return-value]


def open_regular(path: Path, label: str) -> tuple[int | None, Problem | None]:
    """The size of a regular file, or the problem of reading it (missing, a folder, a FIFO or device)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, Problem(label, "is missing; add it to the release")
    except OSError as exc:
        return None, Problem(label, f"cannot be read ({exc.strerror or exc}); check the file's permissions")
    if not stat.S_ISREG(info.st_mode):
        return None, Problem(
            label, "is not a regular file (a folder, FIFO or device); point the release at the file itself"
        )
    return info.st_size, None


def read_json(path: Path, label: str, *, max_bytes: int = MAX_JSON_BYTES) -> tuple[Any, Problem | None]:
    """A small JSON file, parsed within jsonio's bounds: (value, None), or (None, the one problem that stopped it)."""
    size, problem = open_regular(path, label)
    if problem is not None or size is None:
        return None, problem
    try:
        value = parse(read_bounded(path, max_bytes), max_depth=MAX_JSON_DEPTH)
    except TooLarge as exc:
        return None, Problem(
            label,
            f"is {exc.size:,} bytes, more than the {max_bytes:,} a JSON config may be; "
            "check that this is the right file",
        )
    except OSError as exc:
        return None, Problem(label, f"cannot be read ({exc.strerror or exc}); check the file's permissions")
    except RecursionError:  # jsonio's TooDeep
        return None, Problem(
            label, f"nests deeper than {MAX_JSON_DEPTH} levels; this is not a config the library wrote"
        )
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a 5,000-digit number
        return None, Problem(label, f"is not valid JSON ({_one_line(exc)}); re-save it with the library that wrote it")
    return value, None


def read_json_object(
    path: Path, label: str, *, max_bytes: int = MAX_JSON_BYTES
) -> tuple[dict[str, Any] | None, Problem | None]:
    """Like read_json, for a file that must hold one JSON object."""
    value, problem = read_json(path, label, max_bytes=max_bytes)
    if problem is not None:
        return None, problem
    if not isinstance(value, dict):
        return None, Problem(
            label, f"holds a JSON {type_name(value)}, not an object; re-save it with the library that wrote it"
        )
    return value, None


def type_name(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def as_int(value: Any) -> int | None:
    """An integer JSON value (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def join(folder: str, name: str) -> str:
    """A path in the repo: `name` inside `folder` ("" is the repo's root)."""
    return f"{folder.rstrip('/')}/{name}" if folder else name


def under(files: Files, folder: str) -> dict[str, Path]:
    """The files inside `folder` (any depth), keyed by their path relative to it."""
    if not folder:
        return dict(files)
    prefix = folder.rstrip("/") + "/"
    return {name[len(prefix) :]: path for name, path in files.items() if name.startswith(prefix)}


def quote_list(items: list[str] | tuple[str, ...], limit: int = 8) -> str:
    """`a`, `b`, … and N more: a list quoted back in one readable line."""
    shown = ", ".join(f"'{item}'" for item in items[:limit])
    return shown + (f" and {len(items) - limit:,} more" if len(items) > limit else "")


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]
