"""llm-inference-bench JSONs: strict JSON (no NaN/Infinity, no duplicate keys), the cell schema, request counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from release.checks.bench import load_bench
from tests.checks.helpers import BENCH_FILES, check_problems, refusal_messages
from tests.helpers import EXAMPLE, edit

LABEL = "glm53-v5-champion.json"


def champion() -> dict[str, Any]:
    return json.loads((EXAMPLE / LABEL).read_text())


def bench_problems_of(tmp_path: Path, bench: dict[str, Any] | str) -> list[str]:
    path = tmp_path / LABEL
    path.write_text(bench if isinstance(bench, str) else json.dumps(bench, indent=1))
    return refusal_messages(load_bench, path, LABEL)


@pytest.mark.parametrize("name", BENCH_FILES)
def test_example_bench_files_pass(name: str) -> None:
    run = load_bench(EXAMPLE / name, name)
    assert run.metadata["engine"] == "vllm"
    assert run.cells and all(c["completed_request_count"] <= c["request_count"] for c in run.cells)


def test_missing_metric(tmp_path: Path) -> None:
    bench = champion()
    del bench["results"][3]["aggregate_tps"]
    assert bench_problems_of(tmp_path, bench) == ["results[3]: 'aggregate_tps' is a required property"]


def test_missing_metadata(tmp_path: Path) -> None:
    bench = champion()
    del bench["metadata"]
    assert bench_problems_of(tmp_path, bench) == ["(top level): 'metadata' is a required property"]


def test_no_cells(tmp_path: Path) -> None:
    bench = champion()
    bench["results"] = []
    assert bench_problems_of(tmp_path, bench) == ["results: [] should be non-empty"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literal(tmp_path: Path, literal: str) -> None:
    text = (EXAMPLE / LABEL).read_text()
    assert '"ttft_avg": 0.138' in text
    assert bench_problems_of(tmp_path, text.replace('"ttft_avg": 0.138', f'"ttft_avg": {literal}', 1)) == [
        f"holds {literal}, which is not a JSON number; write a finite number or null"
    ]


@pytest.mark.parametrize("literal", ["1e400", "-1E+309"])
def test_a_number_infinite_once_parsed(tmp_path: Path, literal: str) -> None:
    """Finite as written, infinite as a float: refused, not printed as `inf` tok/s."""
    text = (EXAMPLE / LABEL).read_text()
    assert bench_problems_of(tmp_path, text.replace('"ttft_avg": 0.138', f'"ttft_avg": {literal}', 1)) == [
        f"holds {literal}, which is beyond a float's range (it reads as {float(literal)}); write a finite number or "
        "null"
    ]


def test_string_where_a_number_belongs(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][0]["request_count"] = "3"
    assert bench_problems_of(tmp_path, bench) == ["results[0].request_count: '3' is not of type 'integer'"]


def test_float_where_an_integer_belongs(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][0]["concurrency"] = 1.5
    assert bench_problems_of(tmp_path, bench) == ["results[0].concurrency: 1.5 is not of type 'integer'"]


def test_boolean_where_a_number_belongs(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][1]["aggregate_tps"] = True
    assert bench_problems_of(tmp_path, bench) == ["results[1].aggregate_tps: True is not of type 'number'"]


def test_negative_latency(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][0]["ttft_avg"] = -0.1
    assert bench_problems_of(tmp_path, bench) == ["results[0].ttft_avg: -0.1 is less than the minimum of 0"]


def test_completed_more_than_requested(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][2]["completed_request_count"] = bench["results"][2]["request_count"] + 1
    assert bench_problems_of(tmp_path, bench) == [
        "results[2]: completed_request_count exceeds request_count; publish the bench's own output, not an edited copy"
    ]


def test_every_request_completed_passes(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][2]["completed_request_count"] = bench["results"][2]["request_count"]
    path = tmp_path / LABEL
    path.write_text(json.dumps(bench))
    assert load_bench(path, LABEL).cells[2]["completed_request_count"] == bench["results"][2]["request_count"]


def test_duplicate_keys(tmp_path: Path) -> None:
    text = (EXAMPLE / LABEL).read_text().replace('"engine": "vllm",', '"engine": "vllm",\n    "engine": "sglang",', 1)
    assert bench_problems_of(tmp_path, text) == ["key 'engine' appears twice"]


def test_not_json(tmp_path: Path) -> None:
    [message] = bench_problems_of(tmp_path, (EXAMPLE / LABEL).read_text()[:-50])
    assert message.startswith("is not valid JSON: ") and " at line " in message


def test_every_schema_problem_at_once(tmp_path: Path) -> None:
    bench = champion()
    bench["results"][0]["request_count"] = "3"
    del bench["results"][5]["num_errors"]
    bench["metadata"]["engine"] = 7
    assert bench_problems_of(tmp_path, bench) == [
        "metadata.engine: 7 is not of type 'string'",
        "results[0].request_count: '3' is not of type 'integer'",
        "results[5]: 'num_errors' is a required property",
    ]


def test_each_bad_bench_file_reported_through_the_checks(example: Path, tmp_path: Path) -> None:
    edit(example.parent / "glm53-v5-recheck-1-adapter.json", '"ttft_avg": ', '"ttft_avg": NaN, "x": ')
    bad = json.loads((example.parent / "glm53-v5-recheck-2-stock.json").read_text())
    bad["results"][0]["completed_request_count"] = 99
    (example.parent / "glm53-v5-recheck-2-stock.json").write_text(json.dumps(bad))
    assert check_problems(example, tmp_path / "stage") == [
        "glm53-v5-recheck-1-adapter.json: holds NaN, which is not a JSON number; write a finite number or null",
        "glm53-v5-recheck-2-stock.json: results[0]: completed_request_count exceeds request_count; publish the "
        "bench's own output, not an edited copy",
    ]


# --- unrecorded is not zero: llm-inference-bench 0.4.18's duration mode, written by its own save_results -------

SUSTAINED = Path(__file__).parents[1] / "evidence" / "fixtures" / "sustained"


def test_a_tools_default_where_it_did_not_measure_reads_as_absent() -> None:
    run = load_bench(SUSTAINED / "glm53-v5-sustained-champion.json", "champion.json")
    assert run.metadata["version"] == "0.4.18" and run.metadata["decode_mode"] == "duration"
    cell = run.cells[0]
    assert cell["server_spec_accept_length"] is None and cell["server_spec_accept_rate"] > 0  # 0.0 beside a rate
    assert cell["request_latency_avg"] is None and cell["e2e_output_tps_per_user_avg"] is None  # no request completed
    assert cell["ttft_avg"] > 0 and cell["aggregate_tps"] > 0  # measured values stay as written
    assert run.unrecorded["server_spec_accept_length"] == len(run.cells) == 12
    assert (
        run.not_recorded("server_spec_accept_length")
        == "server_spec_accept_length is the tool's default 0.0 in every cell, not a measurement"
    )
    assert run.not_recorded("aggregate_tps") is None


def test_a_measured_zero_beside_a_zero_rate_and_completed_requests_stays() -> None:
    from release.evidence.bench_metrics import unrecorded

    assert (
        unrecorded(
            {
                "server_spec_accept_length": 0.0,
                "server_spec_accept_rate": 0.0,
                "ttft_avg": 0.0,
                "completed_request_count": 3,
            }
        )
        == ()
    )
    assert unrecorded(
        {
            "server_spec_accept_length": 0.0,
            "server_spec_accept_rate": 0.41,
            "ttft_avg": 0.0,
            "completed_request_count": 0,
        }
    ) == ("server_spec_accept_length", "ttft_avg")
