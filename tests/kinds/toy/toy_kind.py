"""A test-only kind, as a new kind's author would write one: this module, its template (toy.md.j2 here)
and one registration (tests/kinds/test_registry.py registers it for the test's duration). Its files are
`*.toy`: a JSON object with "answer", which must be 42."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from release.errors import Problem
from release.kinds.kind import Kind
from release.kinds.own_files import card_part

TEMPLATE = Path(__file__).with_name("toy.md.j2")


def files_check(files: Mapping[str, Path], card: dict[str, Any]) -> tuple[dict[str, int] | None, list[Problem]]:
    read, problems = {}, []
    for name in sorted(n for n in files if n.endswith(".toy")):
        answer = json.loads(Path(files[name]).read_text("utf-8")).get("answer")
        if answer != 42:
            problems.append(Problem(name, f"answer is {answer!r}; a toy's answer is 42, so write it again"))
        read[name] = answer
    return read or None, problems


KIND = Kind(
    name="toy",
    template=str(TEMPLATE),  # a new kind ships its template in templates/; a test's lives beside it
    config_problems=lambda config, label: [],
    tensor_problems=lambda config, tensors, label, shapes: [],
    card_part=card_part(lambda read: [("Toy files", f"{len(read):,}")], lambda read: {"library_name": "toy"}),
    card_defaults={"library_name": "toy"},
    card_context=lambda spec, facts: {"toy": f'```bash\ntoy run {spec.repo_id} --revision="{spec.version}"\n```'},
    files_check=files_check,
)
