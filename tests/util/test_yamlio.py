"""The one YAML reader: the same data and the same words as PyYAML's safe_load, with nesting bounded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from release.util import yamlio
from tests.helpers import ROOT

LIBRARY_CARDS = sorted((ROOT / "tests" / "fixtures" / "libraries").glob("*/README.md"))


def front_text(path: Path) -> str:
    match = re.match(r"^---\n(.*?)\n---\n", path.read_text("utf-8"), re.DOTALL)
    assert match, path
    return match.group(1)


@pytest.mark.parametrize("path", LIBRARY_CARDS, ids=lambda p: p.parent.name)
def test_library_written_front_matter_reads_as_safe_load_reads_it(path: Path) -> None:
    text = front_text(path)
    assert yamlio.load(text) == yaml.safe_load(text)


def test_the_example_cards_front_matter_reads_as_safe_load_reads_it(built: Path) -> None:
    text = front_text(built / "README.md")
    assert yamlio.load(text) == yaml.safe_load(text) != {}


@pytest.mark.parametrize("bad", ["a: [1, 2", "a: b: c", "a: *nope", "key: 'x\n- y", "a:\n  - b\n c: d", "\t- x"])
def test_a_refusal_is_in_pyyamls_own_words(bad: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.safe_load(bad)
    with pytest.raises(yaml.YAMLError) as exc:
        yamlio.load(bad)
    assert str(exc.value) == str(expected.value)


@pytest.mark.parametrize(
    "deep",
    ["a: " + "[" * 600 + "]" * 600, "".join("  " * i + f"k{i}:\n" for i in range(1000)) + "  " * 1000 + "v", "[" * 600],
)
def test_nesting_past_the_bound_is_refused_before_it_is_composed(deep: str) -> None:
    with pytest.raises(RecursionError):
        yaml.safe_load(deep)  # what PyYAML's own composer does with it
    with pytest.raises(yamlio.TooDeep, match="nested deeper than 64 levels"):
        yamlio.load(deep)


def test_exactly_the_bound_is_read() -> None:
    data = yamlio.load("[" * 64 + "1" + "]" * 64)
    for _ in range(63):
        data = data[0]
    assert data == [1]


def test_aliases_can_be_refused() -> None:
    assert yamlio.load("a: &x 1\nb: *x") == {"a": 1, "b": 1}
    with pytest.raises(yamlio.Aliased):
        yamlio.load("a: &x 1\nb: *x", aliases=False)
