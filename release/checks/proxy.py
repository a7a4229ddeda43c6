"""The honest note's proxy metric, read from an evidence file of the release when the spec names one.

`[card.honest_note.proxy] evidence = "proxy-eval.json"` with `before` / `after` as key paths into that
JSON file (e.g. ["stock", "teacher_forced_top1"]): the card then quotes the file. Without `evidence`
the spec's typed numbers are shown as reported by the authors, not derived (release/card/facts.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from release.checks.common import read_json
from release.errors import CheckFailed, Problem
from release.pipeline import Context, Done, Skipped, StepResult


@dataclass(frozen=True)
class ProxyMetric:
    """The proxy metric's two values as an evidence file states them."""

    before: float
    after: float


def load_proxy(path: Path, label: str, before: Sequence[str], after: Sequence[str]) -> ProxyMetric:
    data = read_json(path, label)
    values, problems = [], []
    for name, keys in (("before", before), ("after", after)):
        value = data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            problems.append(
                Problem(
                    label,
                    f"{' → '.join(keys)} is {value!r}, not a number; point [card.honest_note.proxy] "
                    f"{name} at the number this file holds",
                )
            )
        else:
            values.append(float(value))
    if problems:
        raise CheckFailed(problems)
    return ProxyMetric(*values)


class CheckProxyEvidence:
    name = "check-proxy-evidence"

    def run(self, ctx: Context) -> StepResult:
        proxy = ctx.spec.card.get("honest_note", {}).get("proxy", {})
        if "evidence" not in proxy:
            return Skipped("no proxy-metric evidence file (a typed proxy metric is shown as reported by the authors)")
        staged = next((f for f in ctx.files if f.path_in_repo == proxy["evidence"]), None)
        if staged is None:
            ctx.problems.append(
                Problem(
                    f"{ctx.spec.path.name} card.honest_note.proxy.evidence",
                    f"{proxy['evidence']!r} is not a file of the release; add it to [[files]]",
                )
            )
            return Done("proxy-metric evidence missing")
        try:
            ctx.parsed.add(
                staged.path_in_repo, load_proxy(staged.staged, staged.path_in_repo, proxy["before"], proxy["after"])
            )
        except CheckFailed as exc:
            ctx.problems.extend(exc.problems)
        return Done(f"proxy metric read from {staged.path_in_repo}")
