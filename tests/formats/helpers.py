"""Helpers for the format readers' tests: the committed library fixtures, copies to damage, problem asserts.

The default suite needs none of the libraries. Tests that cross-check a reader against the library that
wrote the file skip when it is absent (`pytest.importorskip`); to run them with the library venv's packages
after this venv's own (so hf-release's pins win where both have a package):

    .venv/bin/python -c "import sys; sys.path.append('/work/libvenv/lib/python3.11/site-packages'); \\
        import pytest; sys.exit(pytest.main(['-q', 'tests/formats', 'tests/kinds']))"
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from release.errors import Problem
from tests.helpers import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "libraries"


def copy_fixture(name: str, tmp_path: Path) -> Path:
    """A private copy of tests/fixtures/libraries/NAME that a test may damage."""
    dest = tmp_path / name
    shutil.copytree(FIXTURES / name, dest)
    return dest


def release_files(folder: Path, prefix: str = "") -> dict[str, Path]:
    """Every file under `folder`, keyed by its path in the repo (under `prefix`), as a release lists them."""
    base = prefix.rstrip("/") + "/" if prefix else ""
    return {base + p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def only_problem(problems: list[Problem], file: str, *fragments: str) -> Problem:
    """The one problem of a run: about `file`, its message holding every fragment, on one line."""
    assert len(problems) == 1, "\n".join(map(str, problems)) or "no problem"
    problem = problems[0]
    assert problem.file == file, str(problem)
    for fragment in fragments:
        assert fragment in problem.message, f"{fragment!r} not in {problem}"
    assert "\n" not in str(problem) and "Traceback" not in str(problem)
    return problem


# --- damage at random: no reader may raise on any of it ---

ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    -1,
    0,
    10**30,
    1.5,
    float("nan"),
    "",
    "x" * 300,
    [],
    {},
    [1, "a", None],
    {"a": {"b": []}},
)


def json_mutants(value: Any, rng: random.Random, count: int) -> list[Any]:
    """Copies of a parsed JSON value with one node (any depth) replaced by a value of another type."""
    paths: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        paths.append(path)
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack.extend((child, path + (key,)) for key, child in children)
    mutants = []
    for _ in range(count):
        copy = json.loads(json.dumps(value))
        path = rng.choice(paths)
        if not path:
            mutants.append(rng.choice(ODD_VALUES))
            continue
        parent = copy
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = rng.choice(ODD_VALUES)
        mutants.append(copy)
    return mutants


def byte_mutants(data: bytes, rng: random.Random, count: int) -> list[bytes]:
    """Copies of a file cut short, with bytes overwritten, or with a run of bytes dropped."""
    mutants = []
    for i in range(count):
        at = rng.randrange(len(data))
        if i % 3 == 0:
            mutants.append(data[:at])
        elif i % 3 == 1:
            mutants.append(data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at + 8 :])
        else:
            mutants.append(data[:at] + data[at + rng.randint(1, 64) :])
    return mutants


def survives(read: Callable[[], tuple[Any, list[Problem]]]) -> None:
    """The reader returns (facts or None, problems) on damaged input: every problem one line, no exception."""
    facts, problems = read()
    assert all(isinstance(p, Problem) and "\n" not in str(p) for p in problems)
    assert facts is not None or problems, "nothing read and nothing said"


def damage_every_file(
    tmp_path: Path,
    fixture: str,
    read: Callable[[dict[str, Path]], tuple[Any, list[Problem]]],
    count: int = 40,
    seed: int = 0,
) -> int:
    """Damage each file of a fixture in turn (JSON by node, binary by bytes), `count` ways each;
    returns the cases run."""
    rng = random.Random(seed)
    folder = copy_fixture(fixture, tmp_path)
    files = release_files(folder)
    cases = 0
    for path in files.values():
        original = path.read_bytes()
        if path.suffix == ".json":
            mutants = [json.dumps(m).encode() for m in json_mutants(json.loads(original), rng, count)]
        else:
            mutants = byte_mutants(original, rng, count)
        for mutant in mutants:
            path.write_bytes(mutant)
            survives(lambda: read(files))
            cases += 1
        path.write_bytes(original)
    return cases
