"""The tests share one set of helpers: a helper function is defined in one test module only (shared ones live in
tests/helpers.py or a package's helpers.py / conftest.py), no two fixtures have the same body, and the `hub`
fixture is defined once (tests/conftest.py; local Hubs start only through tests.helpers.local_hub).

A module may still override a fixture of the same name with its own meaning (pytest's scoping), as
tests/cli/test_contract.py's `built` (a Run of `hf-release build`) does the session's `built`."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.helpers import ROOT

TESTS = ROOT / "tests"


def is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)


def top_level_functions(tests: Path) -> list[tuple[str, ast.FunctionDef]]:
    """(module path, function) for every top-level function of every test module (fixture data left out)."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        if "fixtures" in path.relative_to(tests).parts:
            continue
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("test_"):
                found.append((path.relative_to(tests).as_posix(), node))
    return found


def helpers_defined_twice(tests: Path) -> dict[str, list[str]]:
    where = defaultdict(list)
    for module, node in top_level_functions(tests):
        if not is_fixture(node) and not node.name.startswith("pytest_"):  # hooks: one per conftest by design
            where[node.name].append(module)
    return {name: modules for name, modules in where.items() if len(modules) > 1}


def fixtures_with_one_body(tests: Path) -> list[list[str]]:
    bodies = defaultdict(list)
    for module, node in top_level_functions(tests):
        if is_fixture(node):
            bodies[ast.dump(ast.Module(body=node.body, type_ignores=[]))].append(f"{module}::{node.name}")
    return [places for places in bodies.values() if len(places) > 1]


def test_no_helper_is_defined_in_two_test_modules() -> None:
    assert helpers_defined_twice(TESTS) == {}


def test_no_two_fixtures_are_copies_of_each_other() -> None:
    assert fixtures_with_one_body(TESTS) == []


def test_the_hub_fixture_is_defined_once() -> None:
    hubs = [module for module, node in top_level_functions(TESTS) if is_fixture(node) and node.name == "hub"]
    assert hubs == ["conftest.py"]


def test_the_checks_catch_a_copied_helper_and_a_copied_fixture(tmp_path: Path) -> None:
    copied = (
        "import pytest\n\ndef load(path):\n    return path\n\n"
        "@pytest.fixture\ndef made(tmp_path):\n    return tmp_path\n"
    )
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(copied.replace("made", f"made_{name}"))
    assert list(helpers_defined_twice(tmp_path)) == ["load"]
    assert len(fixtures_with_one_body(tmp_path)) == 1
