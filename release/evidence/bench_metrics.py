"""The llm-inference-bench cell fields hf-release reads as metrics, defined once.

Every release records each of them per cell in release.json (`metrics`, changes.py: what the next
version compares with); the card's `model-index` (evidence/model_index.py) holds those with a metric type.
"""

from __future__ import annotations

from dataclasses import dataclass


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
