"""Unrecorded is not zero: bench files written by llm-inference-bench 0.4.18's own save_results in its duration mode
(acceptance length left at 0.0, only the rate measured; tests/evidence/fixtures/sustained) and a launcher that
takes the node rank as its argument (tests/evidence/fixtures/launch-per-rank.sh) build to a card that derives
the acceptance length, says so, and reads every rank."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from release.card.evidence import Evidence, EvidenceMap, evidence_map
from release.card.speculative.derived import cell_accept_length
from release.checks.bench import load_bench
from release.checks.launcher import load_launcher
from release.kinds import kind_named
from release.spec import load_spec
from tests.checks.helpers import LAUNCHER
from tests.helpers import EXAMPLE, ROOT

FIXTURES = ROOT / "tests" / "evidence" / "fixtures"
SUSTAINED = {p.name.replace("-sustained", ""): p for p in sorted((FIXTURES / "sustained").glob("*.json"))}
CARD: dict[str, Any] = load_spec(EXAMPLE / "release.toml").card


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example with its v5 bench files as 0.4.18's duration mode writes them and the per-rank launcher."""
    from release.builder import build

    root = tmp_path_factory.mktemp("sustained")
    shutil.copytree(EXAMPLE, root / "artifacts" / "v5")
    for name, path in SUSTAINED.items():
        shutil.copy(path, root / "artifacts" / "v5" / name)
    shutil.copy(FIXTURES / "launch-per-rank.sh", root / "artifacts" / "v5" / LAUNCHER)
    return build(load_spec(root / "artifacts" / "v5" / "release.toml"), root / "dist").dist


def test_the_card_derives_acceptance_length_and_says_how(built: Path) -> None:
    card = (built / "README.md").read_text()
    assert (
        "there it is derived, acceptance rate × 7 (num_speculative_tokens, from the launcher's `--speculative-config`)"
        in card
    )
    row = next(line for line in card.splitlines() if line.startswith("| 1 | 8192 |"))
    rate = next(
        c
        for c in json.loads(SUSTAINED["glm53-v5-champion.json"].read_text())["results"]
        if (c["concurrency"], c["context_tokens"]) == (1, 8192)
    )["server_spec_accept_rate"]
    assert "| 0.00 |" not in row and f"| {rate * 7:.2f} | 3.15 |" in row  # v5 derived beside v4 as it recorded it
    # the honest note's verdict is on the derived lengths, never on the zeros
    assert "adapter mean 0 vs stock 0" not in card
    assert (
        "served acceptance length (adapter 3.01–3.30 vs stock 3.28, derived as acceptance rate × 7; inconclusive"
        in card
    )
    record = json.loads((built / "release.json").read_text())
    derived = record["card"]["acceptance_length_derived"]
    assert (
        derived["formula"] == "server_spec_accept_rate × 7"
        and derived["k_from"] == "num_speculative_tokens in the launcher's --speculative-config"
    )
    assert "glm53-v5-champion.json" in derived["files"] and "glm53-v4-cudagraphs.json" not in derived["files"]
    # release.json's metrics hold what the files measured: no acceptance length, no zero latency
    assert not [k for k in record["metrics"] if k.startswith(("server_spec_accept_length", "request_latency"))]


def test_a_launcher_taking_the_rank_builds_with_every_rank(built: Path) -> None:
    card = (built / "README.md").read_text()
    assert "| `--port` | rank 0: `8000`; ranks 1, 2, 3: not given |" in card
    assert "**Launch order:** workers first (ranks 1, 2, 3), head last (rank 0)" in card


@cache
def evidence(launcher: bool = True) -> Evidence:
    bench = {name: load_bench(path, name) for name, path in SUSTAINED.items()}
    bench["glm53-v4-cudagraphs.json"] = load_bench(EXAMPLE / "glm53-v4-cudagraphs.json", "glm53-v4-cudagraphs.json")
    launchers = {LAUNCHER: load_launcher(EXAMPLE / LAUNCHER, LAUNCHER)} if launcher else {}
    return Evidence(bench=bench, launchers=launchers)


def with_bench(**changes: Any) -> dict[str, Any]:
    return {**CARD, "bench": {**CARD["bench"], **changes}}


def test_without_k_build_refuses_naming_the_field() -> None:
    _, problems = evidence_map(CARD, "release.toml", evidence(launcher=False), kind_named("dflash2-drafter"))
    assert [p.file for p in problems] == sorted(SUSTAINED)
    assert str(problems[0]) == (
        "glm53-v5-champion.json: server_spec_accept_length is the tool's default 0.0 in every cell, not a measurement "
        "(llm-inference-bench's duration mode records only server_spec_accept_rate); to derive it as "
        "server_spec_accept_rate × num_speculative_tokens, give K in the launcher's --speculative-config or in "
        "[card.bench] num_speculative_tokens"
    )


def accept_length(emap: EvidenceMap, cell: dict[str, Any], path: str) -> float | None:
    """A cell's acceptance length as the card's speculative part reads it with this map."""
    return cell_accept_length(cell, path, emap.derived_length, emap.acceptance_length)


def test_k_from_the_spec_in_the_tokens_per_step_convention() -> None:
    card = with_bench(acceptance_length="tokens-per-step", num_speculative_tokens=7)
    emap, problems = evidence_map(card, "release.toml", evidence(launcher=False), kind_named("dflash2-drafter"))
    assert (
        problems == []
        and emap.derived_length is not None
        and emap.derived_length.k_from == "[card.bench] num_speculative_tokens"
    )
    cell = evidence().bench["glm53-v5-champion.json"].cells[0]
    assert accept_length(emap, cell, "glm53-v5-champion.json") == pytest.approx(1 + cell["server_spec_accept_rate"] * 7)
    recorded = evidence().bench["glm53-v4-cudagraphs.json"].cells[0]
    assert (
        accept_length(emap, recorded, "glm53-v4-cudagraphs.json") == recorded["server_spec_accept_length"]
    )  # as measured


def test_k_in_the_spec_and_the_launcher_must_agree() -> None:
    _, problems = evidence_map(
        with_bench(num_speculative_tokens=5), "release.toml", evidence(), kind_named("dflash2-drafter")
    )
    assert [str(p) for p in problems] == [
        "release.toml card.bench.num_speculative_tokens: is 5 but the launcher's --speculative-config says 7; give "
        "one K"
    ]
