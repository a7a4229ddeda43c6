"""Acceptance length where a bench file did not record it: derived from the acceptance rate and the number of
speculative tokens (K) the launcher's --speculative-config or the spec's [card.bench] gives.

card/evidence.py's `EvidenceMap` carries the result (release.json records it as `acceptance_length_derived`), and
imports this module where it derives or reads one: this module imports nothing of card/evidence.py, whose
speculative part (this package) imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from release.checks.bench import BenchRun
from release.checks.launcher import Launcher
from release.errors import Problem
from release.evidence.bench_metrics import ACCEPT_LENGTH, ACCEPT_RATE

K_FROM_LAUNCHER = "num_speculative_tokens in the launcher's --speculative-config"
K_FROM_SPEC = "[card.bench] num_speculative_tokens"


@dataclass(frozen=True)
class DerivedLength:
    """Acceptance length where a bench file did not record it (0.0 beside a non-zero acceptance rate, see
    evidence/bench_metrics.py): accepted ÷ drafts = acceptance rate × num_speculative_tokens (K), in the card's
    convention (+1 for tokens per step)."""

    num_speculative_tokens: int
    k_from: str  # where K was read, as the card says it
    files: tuple[str, ...]  # the bench files it is derived for

    def value(self, rate: float, convention: str) -> float:
        fraction = rate if rate <= 1 else rate / 100  # a fraction (llm-inference-bench) or a percentage
        return round(fraction * self.num_speculative_tokens + (1 if convention == "tokens-per-step" else 0), 6)

    def formula(self, convention: str) -> str:
        plus = " + 1" if convention == "tokens-per-step" else ""
        return f"{ACCEPT_RATE} × {self.num_speculative_tokens}{plus}"

    def as_dict(self, convention: str) -> dict[str, Any]:
        return {
            "field": ACCEPT_LENGTH,
            "formula": self.formula(convention),
            "num_speculative_tokens": self.num_speculative_tokens,
            "k_from": self.k_from,
            "files": list(self.files),
        }

    @classmethod
    def from_dict(cls, data: Any) -> DerivedLength | None:
        if not data:
            return None
        return cls(int(data["num_speculative_tokens"]), str(data["k_from"]), tuple(map(str, data["files"])))


def cell_accept_length(cell: dict[str, Any], path: str, derived: DerivedLength | None, convention: str) -> float | None:
    """A cell's acceptance length in the card's convention: as recorded, else derived (None: neither)."""
    value, rate = cell.get(ACCEPT_LENGTH), cell.get(ACCEPT_RATE)
    if value is not None:
        return float(value)
    if derived is None or path not in derived.files or rate is None:
        return None
    return derived.value(float(rate), convention)


def derived_length(
    paths: list[str],
    bench: Mapping[str, BenchRun],
    launcher: Launcher | None,
    card_bench: dict[str, Any],
    spec_name: str,
) -> tuple[DerivedLength | None, list[Problem]]:
    """Where the card's bench files (`paths`) do not record acceptance length, how it is derived — or why it cannot
    be: K from the launcher's --speculative-config or from [card.bench] (`card_bench`), one K where both give it."""
    missing = [p for p in paths if p in bench and bench[p].not_recorded(ACCEPT_LENGTH)]
    if not missing:
        return None, []
    spec_config = launcher.spec_config if launcher is not None else None
    from_launcher = (spec_config or {}).get("num_speculative_tokens")
    from_launcher = (
        from_launcher
        if isinstance(from_launcher, int) and not isinstance(from_launcher, bool) and from_launcher > 0
        else None
    )
    from_spec = card_bench.get("num_speculative_tokens")
    if from_launcher is not None and from_spec is not None and from_launcher != from_spec:
        return None, [
            Problem(
                f"{spec_name} card.bench.num_speculative_tokens",
                f"is {from_spec} but the launcher's --speculative-config says {from_launcher}; give one K",
            )
        ]
    if from_launcher is not None:
        return DerivedLength(from_launcher, K_FROM_LAUNCHER, tuple(missing)), []
    if from_spec is not None:
        return DerivedLength(from_spec, K_FROM_SPEC, tuple(missing)), []
    return None, [
        Problem(
            path,
            f"{bench[path].not_recorded(ACCEPT_LENGTH)} (llm-inference-bench's duration mode "
            f"records only {ACCEPT_RATE}); to derive it as {ACCEPT_RATE} × num_speculative_tokens, "
            "give K in the launcher's --speculative-config or in [card.bench] num_speculative_tokens",
        )
        for path in missing
    ]
