"""Is the candidate tied with, different from, or not distinguishable from the baseline? Computed, not asserted.

Interface (pure; scipy is imported only when `compare` runs — start-up time is a benchmark target):

    compare(candidate, baseline, margin_fraction=0.02, alpha=0.05) -> Comparison
    Comparison.verdict       "tied" | "different" | "inconclusive"
    Comparison.sentence(unit) one sentence for the card, with the test named and its figures
    refusal(values, name) -> str | None   why a sample cannot be compared: values not recorded (None), or all
                             zero (a tool's default where it measured nothing) — compare raises ValueError with it

Method: Welch's t-test (unequal variances) on the two samples gives the difference of means
(candidate − baseline), its 95% confidence interval and a two-sided p. Equivalence is two one-sided
Welch t-tests (TOST) against ±margin, margin = margin_fraction × |baseline mean|. Verdict:
- "tied"         TOST p < alpha: the difference is shown to lie inside ±margin;
- "different"    otherwise, Welch p < alpha: a significant difference;
- "inconclusive" neither — e.g. 3 rechecks with this spread can show neither a tie nor a difference.
Identical values (zero variance on both sides) need no distribution: equal means are tied, unequal
means are different, both with p = 0 or 1 exactly; no division by zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, variance
from typing import Literal

Verdict = Literal["tied", "different", "inconclusive"]
WELCH = "Welch's t-test"
TOST = "two one-sided Welch t-tests (TOST)"


@dataclass(frozen=True)
class Comparison:
    verdict: Verdict
    n_candidate: int
    n_baseline: int
    mean_candidate: float
    mean_baseline: float
    difference: float  # mean_candidate − mean_baseline
    ci_low: float  # 95% confidence interval of the difference (Welch)
    ci_high: float
    p_value: float  # Welch's two-sided p for "no difference"
    tost_p_value: float  # TOST p for "difference outside ±margin"
    margin: float  # absolute equivalence margin
    margin_fraction: float
    alpha: float

    def sentence(self, unit: str = "", candidate: str = "candidate", baseline: str = "baseline") -> str:
        """One sentence for the card; "statistically" appears only next to the test that backs it."""
        clause = self.clause(unit, candidate, baseline)
        return clause[0].upper() + clause[1:] + "."

    def clause(self, unit: str = "", candidate: str = "candidate", baseline: str = "baseline") -> str:
        """The verdict with its test and figures, to go inside a sentence (lower case, no full stop)."""
        u = f" {unit}" if unit else ""
        figures = (
            f"{candidate} mean {_num(self.mean_candidate)}{u} vs {baseline} {_num(self.mean_baseline)}{u}, "
            f"difference {_signed(self.difference)}{u} (95% CI {_signed(self.ci_low)} to {_signed(self.ci_high)}), "
            f"n = {self.n_candidate} vs {self.n_baseline}"
        )
        pct = f"±{_num(self.margin_fraction * 100)}% of the {baseline} mean"
        if self.verdict == "tied":
            return f"tied within {pct} by {TOST}, {_p(self.tost_p_value)}: {figures}"
        if self.verdict == "different":
            return f"statistically different by {WELCH}, {_p(self.p_value)}: {figures}"
        return (
            f"inconclusive: neither a difference ({WELCH}, {_p(self.p_value)}) nor a tie within {pct} "
            f"({TOST}, {_p(self.tost_p_value)}) is shown: {figures}"
        )


def compare(
    candidate: Sequence[float | None],
    baseline: Sequence[float | None],
    *,
    margin_fraction: float = 0.02,
    alpha: float = 0.05,
) -> Comparison:
    """Welch's t-test and TOST equivalence of candidate vs baseline values. Needs ≥ 2 finite values per side,
    recorded and not all zero."""
    sides: list[list[float]] = []
    for name, values in (("candidate", candidate), ("baseline", baseline)):
        reason = refusal(values, name)
        if reason is not None:
            raise ValueError(reason)
        side = [v for v in values if v is not None]  # all of them: refusal() found no None
        if len(side) < 2 or not all(math.isfinite(v) for v in side):
            raise ValueError(f"the {name} needs at least 2 finite values to compare; it has {list(values)}")
        sides.append(side)
    a, b = sides
    if not (margin_fraction >= 0 and 0 < alpha < 1):
        raise ValueError(f"margin_fraction must be ≥ 0 and alpha in (0, 1); got {margin_fraction}, {alpha}")
    n1, n2 = len(a), len(b)
    m1, m2 = fmean(a), fmean(b)
    diff = m1 - m2
    margin = margin_fraction * abs(m2)
    se2 = variance(a) / n1 + variance(b) / n2
    if se2 == 0:  # identical values on each side: the difference is known exactly
        p = 1.0 if diff == 0 else 0.0
        tost = 0.0 if abs(diff) < margin or (diff == 0 and margin == 0) else 1.0
        ci_low = ci_high = diff
    else:
        # scipy.special's Student-t functions are what scipy.stats.t calls (cdf = stdtr(df, x), sf =
        # stdtr(df, -x), ppf = stdtrit(df, q)), without the 2 s import of scipy.stats
        from scipy.special import stdtr, stdtrit

        se = math.sqrt(se2)
        df = se2**2 / ((variance(a) / n1) ** 2 / (n1 - 1) + (variance(b) / n2) ** 2 / (n2 - 1))
        p = float(2 * stdtr(df, -abs(diff) / se))
        half = float(stdtrit(df, 0.975)) * se
        ci_low, ci_high = diff - half, diff + half
        # H0a: diff ≤ −margin, H0b: diff ≥ +margin; both rejected → equivalent
        tost = max(float(stdtr(df, -(diff + margin) / se)), float(stdtr(df, (diff - margin) / se)))
    verdict: Verdict = "tied" if tost < alpha else "different" if p < alpha else "inconclusive"
    return Comparison(verdict, n1, n2, m1, m2, diff, ci_low, ci_high, p, tost, margin, margin_fraction, alpha)


def refusal(values: Sequence[float | None], name: str) -> str | None:
    """Why these values cannot be compared, or None: a statistic on unrecorded values or on a tool's zeros
    would be a verdict on nothing."""
    absent = sum(v is None for v in values)
    what = f"{len(values)} {name} values" if name else f"{len(values)} values"
    if absent:
        return (
            f"{absent} of the {what} are not recorded (the tool wrote its default where it did not measure); "
            "an absent value is not a 0"
        )
    if values and all(v == 0 for v in values):
        return (
            f"the {what} are all 0: a constant zero is a tool's default, not a measurement; "
            "publish the run that measured it"
        )
    return None


def _num(value: float) -> str:
    return f"{value:.4g}"


def _signed(value: float) -> str:
    return ("+" if value > 0 else "−" if value < 0 else "±") + f"{abs(value):.3g}"


def _p(value: float) -> str:
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"
