"""The rechecks' verdict is computed (Welch's t-test, TOST against the spec's margin) from bench files made
for each verdict: one llm-inference-bench file per server boot, the variant said by the served map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from release.card.evidence import Evidence, EvidenceMap, Series, Served
from release.card.facts import derive
from release.checks.bench import load_bench
from release.kinds import kind_named
from tests.helpers import EXAMPLE

ONE_BOOT = json.loads((EXAMPLE / "glm53-v5-recheck-1-adapter.json").read_text())


def derived(tmp_path: Path, adapter: list[float], stock: list[float], margin: float = 0.02):
    """The card's facts from bench files whose one cell has the given acceptance lengths."""
    bench = {}
    sides = {}
    for label, values in (("adapter", adapter), ("stock", stock)):
        files = []
        for index, value in enumerate(values, start=1):
            name = f"recheck-{index}-{label}.json"
            boot = json.loads(json.dumps(ONE_BOOT))
            boot["results"][0]["server_spec_accept_length"] = value
            (tmp_path / name).write_text(json.dumps(boot))
            bench[name] = load_bench(tmp_path / name, name)
            files.append(name)
        sides[label] = Series(label, tuple(files))
    served = Served("server_spec_accept_length", sides["adapter"], sides["stock"], None, margin)
    emap = EvidenceMap(current=None, rechecks=tuple(sorted(bench)), served=served, kind=kind_named("dflash2-drafter"))
    facts, problems = derive(emap, Evidence(bench=bench))
    assert problems == []
    return facts


@pytest.mark.parametrize(
    ("adapter", "stock", "verdict", "opening", "test_named"),
    [
        (
            [3.27, 3.28, 3.29],
            [3.28, 3.29, 3.27],
            "tied",
            "but produced no served acceptance gain",
            "tied within ±2% of the stock mean by two one-sided Welch t-tests (TOST), p < 0.001",
        ),
        (
            [3.60, 3.61, 3.62],
            [3.28, 3.29, 3.27],
            "different",
            "and raised served acceptance",
            "statistically different by Welch's t-test, p < 0.001",
        ),
        (
            [3.01, 3.30, 3.17],
            [3.28, 3.28, 3.28],
            "inconclusive",
            "but did not show a served acceptance gain",
            "inconclusive: neither a difference (Welch's t-test, p = 0.289) nor a tie within ±2% of the stock mean",
        ),
        (
            [3.28, 3.28, 3.28],
            [3.28, 3.28, 3.28],
            "tied",
            "but produced no served acceptance gain",
            "tied within ±2% of the stock mean by two one-sided Welch t-tests (TOST), p < 0.001",
        ),
        (
            [3.10, 3.10],
            [3.28, 3.28, 3.28],
            "different",
            "and lowered served acceptance",
            "statistically different by Welch's t-test, p < 0.001",
        ),
    ],
    ids=["tied", "different", "inconclusive", "identical-values", "identical-within-sides"],
)
def test_each_verdict_on_values_made_for_it(tmp_path: Path, adapter, stock, verdict, opening, test_named) -> None:
    facts = derived(tmp_path, adapter, stock)
    assert facts.kind_facts.served_verdict is not None and facts.kind_facts.served_verdict.verdict == verdict
    assert facts.kind_facts.served_clause.startswith(f"{opening} (")
    assert test_named in facts.kind_facts.served_clause
    assert ("statistically" in facts.kind_facts.served_clause) == (verdict == "different")
    assert {row[-1] for row in facts.kind_facts.rechecks.rows} == {verdict}
    assert f"n = {len(adapter)} vs {len(stock)}" in facts.kind_facts.recheck_line.text


def test_the_margin_is_the_specs(tmp_path: Path) -> None:
    """The example's spread is inconclusive at ±2% but a tie at ±20%: the margin reaches the test."""
    wide = derived(tmp_path, [3.01, 3.30, 3.17], [3.28, 3.28, 3.28], margin=0.2)
    assert (
        wide.kind_facts.served_verdict.verdict == "tied"
        and "tied within ±20% of the stock mean" in wide.kind_facts.served_clause
    )


def test_one_boot_a_side_is_not_tested(tmp_path: Path) -> None:
    facts = derived(tmp_path, [3.01], [3.28])
    assert facts.kind_facts.served_verdict is None
    assert facts.kind_facts.served_clause == (
        "but was not tested for served acceptance (adapter 3.01 vs stock 3.28; "
        "Welch's t-test needs at least 2 values per side)"
    )
    assert {row[-1] for row in facts.kind_facts.rechecks.rows} == {"—"}


def test_a_verdict_on_zeros_is_refused_with_why(tmp_path: Path) -> None:
    """0.0 acceptance length and 0.0 rate in every boot (a bench that measured nothing): no verdict, one line why."""
    bench, sides = {}, {}
    for label in ("adapter", "stock"):
        files = []
        for index in (1, 2, 3):
            name = f"recheck-{index}-{label}.json"
            boot = json.loads(json.dumps(ONE_BOOT))
            boot["results"][0].update(server_spec_accept_length=0.0, server_spec_accept_rate=0.0)
            (tmp_path / name).write_text(json.dumps(boot))
            bench[name] = load_bench(tmp_path / name, name)
            files.append(name)
        sides[label] = Series(label, tuple(files))
    served = Served("server_spec_accept_length", sides["adapter"], sides["stock"], None, 0.02)
    emap = EvidenceMap(current=None, rechecks=tuple(sorted(bench)), served=served, kind=kind_named("dflash2-drafter"))
    facts, problems = derive(emap, Evidence(bench=bench))
    assert [str(p) for p in problems] == [
        "README.md honest note: acceptance length not compared: the 3 adapter values are all 0: a constant zero is a "
        "tool's default, not a measurement; publish the run that measured it"
    ]
    assert facts.kind_facts.served_verdict is None
