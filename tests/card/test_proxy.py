"""The honest note's proxy metric: typed in the spec it is marked as reported, from a file of the
release it is quoted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from release.verify import VerifyFailed, verify_staged
from tests.checks.helpers import check_problems
from tests.helpers import edit

TYPED = '[card.honest_note.proxy]\nmetric = "teacher-forced top-1"\nbefore = 0.57\nafter = 0.64\n'
FROM_FILE = (
    '[card.honest_note.proxy]\nmetric = "teacher-forced top-1"\nevidence = "proxy-eval.json"\n'
    'before = ["stock", "teacher_forced_top1"]\nafter = ["adapter", "teacher_forced_top1"]\n'
)


def with_proxy_file(spec: Path, values: dict) -> None:
    (spec.parent / "proxy-eval.json").write_text(json.dumps(values))
    edit(spec, TYPED, FROM_FILE)
    edit(
        spec,
        'source = "LICENSE"\nrole = "license"\n',
        'source = "LICENSE"\nrole = "license"\n\n[[files]]\nsource = "proxy-eval.json"\nrole = "extra"\n',
    )


def test_a_proxy_metric_from_a_file_is_quoted_and_verify_rederives_it(example: Path, build_example) -> None:
    with_proxy_file(example, {"stock": {"teacher_forced_top1": 0.57}, "adapter": {"teacher_forced_top1": 0.66}})
    dist = build_example()
    card = (dist / "README.md").read_text()
    assert "The adapter improved teacher-forced top-1 but did not show" in card
    assert "teacher-forced top-1 (0.57 → 0.66, from [proxy-eval.json](proxy-eval.json)); served" in card
    assert "reported by the authors" not in card
    verify_staged(dist)
    # The figure is re-derived from the staged file: a hand-edited one is named (besides the card's sha256).
    card_path = dist / "README.md"
    card_path.write_text(card.replace("(0.57 → 0.66, from", "(0.57 → 0.68, from"))
    with pytest.raises(VerifyFailed) as failed:
        verify_staged(dist)
    assert any("the card shows '(0.57 → 0.68,'" in str(p) and "0.66" in str(p) for p in failed.value.problems), (
        failed.value.problems
    )


def test_a_proxy_key_path_that_holds_no_number_is_a_problem(example: Path, tmp_path: Path) -> None:
    with_proxy_file(example, {"stock": {"teacher_forced_top1": "0.57"}, "adapter": {}})
    assert check_problems(example, tmp_path / "stage") == [
        "proxy-eval.json: adapter → teacher_forced_top1 is None, not a number; point [card.honest_note.proxy] after "
        "at the number this file holds",
        "proxy-eval.json: stock → teacher_forced_top1 is '0.57', not a number; point [card.honest_note.proxy] before "
        "at the number this file holds",
    ]


def test_a_proxy_file_outside_the_release_is_a_problem(example: Path, tmp_path: Path) -> None:
    edit(example, TYPED, FROM_FILE)
    assert check_problems(example, tmp_path / "stage") == [
        "release.toml card.honest_note.proxy.evidence: 'proxy-eval.json' is not a file of the release; add it to "
        "[[files]]"
    ]
