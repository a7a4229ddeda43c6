"""Helpers for the format readers' tests: the committed library fixtures, copies to damage, problem asserts.

The default suite needs none of the libraries. Tests that cross-check a reader against the library that
wrote the file skip when it is absent (`pytest.importorskip`); to run them with the library venv's packages
after this venv's own (so hf-release's pins win where both have a package):

    .venv/bin/python -c "import sys; sys.path.append('/work/libvenv/lib/python3.11/site-packages'); \\
        import pytest; sys.exit(pytest.main(['-q', 'tests/formats']))"
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
