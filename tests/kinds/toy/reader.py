"""The toy kind's reader, as a kind's own reader sits in its folder (release/kinds/<kind>/reader.py): its files are
`*.toy`, each a JSON object whose "answer" must be 42."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from release.errors import Problem


@dataclass(frozen=True)
class ToyFacts:
    answers: dict[str, object]  # path in the repo → the file's answer


def read_toys(files: Mapping[str, Path]) -> tuple[ToyFacts | None, list[Problem]]:
    """Every `*.toy` file of the release (None: there is none), and a problem for each answer that is not 42."""
    answers: dict[str, object] = {}
    problems = []
    for name in sorted(n for n in files if n.endswith(".toy")):
        answer = json.loads(Path(files[name]).read_text("utf-8")).get("answer")
        if answer != 42:
            problems.append(Problem(name, f"answer is {answer!r}; a toy's answer is 42, so write it again"))
        answers[name] = answer
    return (ToyFacts(answers) if answers else None), problems
