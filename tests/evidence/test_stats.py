"""The rechecks' verdict is computed: Welch's t-test and TOST equivalence, each verdict on values made for it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from release.evidence.stats import compare


def welch(candidate: list[float], baseline: list[float]) -> Any:
    """scipy's own Welch test, the reference; scipy.stats is imported here, not at collection (~2 CPU-s per worker)."""
    from scipy import stats

    return stats.ttest_ind(candidate, baseline, equal_var=False)


def test_tied_within_the_margin() -> None:
    result = compare([47.9, 48.0, 48.1, 47.95, 48.05], [47.95, 48.05, 48.0, 47.9, 48.1])
    assert result.verdict == "tied"
    assert result.tost_p_value < 0.05 and result.ci_low < 0 < result.ci_high
    # TOST at alpha 0.05 ⇔ the 90% Welch interval lies inside ±margin (scipy's own interval)
    low, high = welch([47.9, 48.0, 48.1, 47.95, 48.05], [47.95, 48.05, 48.0, 47.9, 48.1]).confidence_interval(0.90)
    assert -result.margin < low < high < result.margin == pytest.approx(0.02 * 48.0)
    assert result.sentence("tok/s").startswith(
        "Tied within ±2% of the baseline mean by two one-sided Welch t-tests (TOST), p "
    )
    assert "statistically" not in result.sentence().lower()


def test_different() -> None:
    result = compare([47.9, 48.0, 48.1], [45.0, 45.1, 44.9])
    assert result.verdict == "different" and result.difference == pytest.approx(3.0)
    # the same figures as scipy's own Welch test
    reference = welch([47.9, 48.0, 48.1], [45.0, 45.1, 44.9])
    assert result.p_value == pytest.approx(reference.pvalue)
    low, high = reference.confidence_interval(0.95)
    assert (result.ci_low, result.ci_high) == (pytest.approx(low), pytest.approx(high))
    sentence = result.sentence("tok/s")
    assert sentence.startswith(
        "Statistically different by Welch's t-test, p < 0.001: candidate mean 48 tok/s vs baseline 45 tok/s"
    )
    assert "n = 3 vs 3" in sentence


def test_inconclusive_with_three_spread_rechecks() -> None:
    result = compare([47.9, 46.5, 49.2], [47.0, 48.8, 46.9])
    assert result.verdict == "inconclusive"
    assert result.p_value > 0.05 and result.tost_p_value > 0.05
    sentence = result.sentence()
    assert sentence.startswith("Inconclusive: neither a difference (Welch's t-test, p = ")
    assert "statistically" not in sentence.lower()


def test_identical_values_on_both_sides() -> None:
    result = compare([47.9, 47.9, 47.9], [47.9, 47.9, 47.9])
    assert (result.verdict, result.difference, result.p_value, result.ci_low, result.ci_high) == (
        "tied",
        0.0,
        1.0,
        0.0,
        0.0,
    )


def test_constant_but_unequal_values() -> None:
    result = compare([48.0, 48.0], [45.0, 45.0])
    assert (result.verdict, result.p_value, result.difference) == ("different", 0.0, 3.0)


def test_margin_is_set_by_the_caller() -> None:
    values = ([47.9, 48.0, 48.1, 47.95, 48.05], [47.45, 47.55, 47.5, 47.4, 47.6])  # 1% apart
    assert compare(*values, margin_fraction=0.02).verdict == "tied"
    assert compare(*values, margin_fraction=0.002).verdict == "different"


@pytest.mark.parametrize("values", [[1.0], [1.0, float("nan")]])
def test_too_few_or_non_finite_values(values: list[float]) -> None:
    with pytest.raises(ValueError, match="the candidate needs at least 2 finite values"):
        compare(values, [1.0, 2.0])


def test_scipy_is_imported_lazily() -> None:
    code = "import sys, release.evidence.stats; print('scipy' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )


@pytest.mark.parametrize(
    ("candidate", "baseline", "message"),
    [
        (
            [None, 3.1, 3.2],
            [3.2, 3.3, 3.25],
            "1 of the 3 candidate values are not recorded (the tool wrote its default where "
            "it did not measure); an absent value is not a 0",
        ),
        (
            [0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0],
            "the 3 candidate values are all 0: a constant zero is a tool's default, not a "
            "measurement; publish the run that measured it",
        ),
        ([3.1, 3.2], [0, 0, 0], "the 3 baseline values are all 0"),
    ],
    ids=["absent", "constant-zero", "zero-baseline"],
)
def test_absent_or_constant_zero_inputs_are_refused_with_why(candidate, baseline, message) -> None:
    with pytest.raises(ValueError) as exc:
        compare(candidate, baseline)
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)
