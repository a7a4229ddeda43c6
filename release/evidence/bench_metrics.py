"""The llm-inference-bench cell fields hf-release reads as metrics, defined once.

Every release records each of them per cell in release.json (`metrics`, changes.py: what the next
version compares with); the card's `model-index` (evidence/model_index.py) holds those with a metric type.
`unrecorded(cell)` names the fields a cell holds only as the tool's default (0.0 where it measured
nothing): they are read as absent (None), never as zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BenchMetric:
    field: str  # the cell's field
    metric_type: str | None = None  # its model-index metric type; None: recorded in release.json only
    pretty: str = ""  # its model-index metric name


# In the order the model-index lists them per cell. TTFT is the mean, in seconds (the caller converts a file
# that records milliseconds).
BENCH_METRICS: tuple[BenchMetric, ...] = (
    BenchMetric("aggregate_tps", "tokens_per_second", "Aggregate throughput (tok/s)"),
    BenchMetric("server_spec_accept_length", "acceptance_length", "Acceptance length (accepted ÷ drafts, no +1)"),
    BenchMetric("ttft_avg", "ttft_mean_seconds", "Time to first token, mean (s)"),
    BenchMetric("inter_token_latency_avg"),
)
# (cell field, metric type, pretty name) of each metric the model-index holds
MODEL_INDEX_METRICS: tuple[tuple[str, str, str], ...] = tuple(
    (m.field, m.metric_type, m.pretty) for m in BENCH_METRICS if m.metric_type is not None
)


# --- what the tool writes when it did not measure -------------------------------------------------
# llm-inference-bench's cell is a dataclass whose fields default to 0.0, and it writes them all. In its
# default duration (sustained) mode, version 0.4.18 copies only server_spec_accept_rate into the cell:
# server_spec_accept_length keeps its 0.0; streams rarely finish inside a cell, so request latencies stay 0
# with completed_request_count 0. Such a 0 is "not recorded", never a measurement.
ACCEPT_LENGTH = "server_spec_accept_length"
ACCEPT_RATE = "server_spec_accept_rate"
LATENCY_PREFIXES = ("ttft_", "time_to_second_token_", "inter_token_latency_", "request_latency_", "e2e_")


def unrecorded(cell: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields of a bench cell that hold the tool's default, not a measurement (see above), in cell order."""
    out = []
    for name, value in cell.items():
        if value != 0 or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if name == ACCEPT_LENGTH and _positive(cell.get(ACCEPT_RATE)):
            out.append(name)
        elif name.startswith(LATENCY_PREFIXES) and cell.get("completed_request_count") == 0:
            out.append(name)
    return tuple(out)


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
