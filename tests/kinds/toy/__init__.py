"""A test-only kind, as a new kind's author would write one: this folder (its KIND here, its reader in reader.py),
its template (toy.md.j2, here beside it) and one registration (tests/kinds/test_registry.py TOY, registered for a
test's duration). Its files are `*.toy`; the card shows how many and their answers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds.kind import Kind
from release.kinds.own_files import card_part
from tests.kinds.toy.reader import ToyFacts, read_toys

TEMPLATE = Path(__file__).with_name("toy.md.j2")


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[ToyFacts | None, list[Problem]]:
    return read_toys(files)


def facts_rows(facts: ToyFacts) -> list[tuple[str, str]]:
    answers = sorted({str(a) for a in facts.answers.values()})
    return [("Toy files", f"{len(facts.answers):,}"), ("Answers", ", ".join(answers))]


KIND = Kind(
    name="toy",
    template=str(TEMPLATE),  # a new kind ships its template in templates/; a test's lives beside it
    config_problems=lambda config, label: [],
    tensor_problems=lambda config, tensors, label, shapes: [],
    card_part=card_part(facts_rows, lambda facts: {"library_name": "toy"}),
    card_defaults={"library_name": "toy"},
    card_context=lambda spec, facts: {"toy": f'```bash\ntoy run {spec.repo_id} --revision="{spec.version}"\n```'},
    files_check=files_check,
)
