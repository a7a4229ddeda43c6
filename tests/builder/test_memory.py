"""Build's memory per file (issue 24: 50,000 files in 200 MB): what a build holds for each staged file stays
small — one compact record a file, not a Path, an os.stat_result and several parallel row objects."""

from __future__ import annotations

import gc
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import release.builder
from release.builder import build
from release.pipeline import Context
from release.spec import load_spec

FILES = 1_000
# Measured (bytes the finished build's context holds beyond the example's, per file, Python 3.11; the digest
# record saved, as a rebuild reads it): main before the compact record 2,324 B (a rebuild 2,333 B); with it
# 1,214 B (both). The bound leaves room for Python's own variation, not for another object per file.
MAX_BYTES_PER_FILE = 1_600
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType)


def held(ctx: Context) -> int:
    """Bytes of the objects reachable from what the build's steps made (the spec and kind, shared code, left out)."""
    roots = (
        [v for k, v in vars(ctx).items() if k not in ("spec", "kind", "template")] if hasattr(ctx, "__dict__") else []
    )
    seen: set[int] = set()
    total = 0
    while roots:
        obj = roots.pop()
        if id(obj) in seen or isinstance(obj, _SHARED):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        roots.extend(gc.get_referents(obj))
    return total


def test_a_build_holds_little_per_file(example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contexts: list[Any] = []
    real = release.builder.run_steps
    monkeypatch.setattr(release.builder, "run_steps", lambda ctx, steps: contexts.append(real(ctx, steps)) or ctx)
    build(load_spec(example), tmp_path / "alone")
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(FILES):
        (folder / f"{i:05}.bin").write_bytes(i.to_bytes(4, "big") * 250)  # 1,000 bytes each, all different
    with open(example, "a", encoding="utf-8") as spec:
        spec.write(f'\n[[files]]\nsource = "{folder}/*.bin"\npath_in_repo = "many/"\nrole = "extra"\n')
    build(load_spec(example), tmp_path / "dist")  # its digest record saved: held as a rebuild would hold it read
    alone, many = (held(ctx) for ctx in contexts)
    assert (many - alone) / FILES < MAX_BYTES_PER_FILE
