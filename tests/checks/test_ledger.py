"""results.tsv, the experiment ledger: header, column count, statuses, finite metrics, one baseline first."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.checks.ledger import load_ledger
from release.errors import CheckFailed
from tests.checks.helpers import check_problems
from tests.helpers import EXAMPLE, edit

LABEL = "results.tsv"
HEADER = "commit\ttok_s\taccept_len\tmemory_gb\tstatus\tdescription"
BASELINE = "ecfd8ea\t47.9\t3.17\t108.6\tkeep\tv5 baseline: TP4"
TRIAL = "cce71fb\t47.5\t3.17\t108.9\tdiscard\tmax-num-batched-tokens 8192"


def ledger_problems_of(tmp_path: Path, *lines: str, raw: bytes | None = None) -> list[str]:
    path = tmp_path / "results.tsv"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CheckFailed) as exc:
        load_ledger(path, LABEL)
    assert all(p.file.startswith(LABEL) for p in exc.value.problems), exc.value.problems
    return [str(p) for p in exc.value.problems]


def test_example_ledger_passes() -> None:
    ledger = load_ledger(EXAMPLE / "results.tsv", LABEL)
    assert ledger.metric_columns == ("tok_s", "accept_len", "memory_gb")
    assert ledger.baseline.commit == "ecfd8ea" and ledger.baseline.metrics["tok_s"] == 47.9
    assert len(ledger.trials) == len(ledger.rows) - 1 >= 1
    assert all(r.status in ("keep", "discard", "crash") for r in ledger.rows)


def test_minimal_ledger_passes(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(f"{HEADER}\n{BASELINE}\n\n{TRIAL}\n")
    ledger = load_ledger(path, LABEL)
    assert [r.line for r in ledger.rows] == [2, 4]  # blank lines are skipped, numbers stay true


def test_wrong_column_count(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, HEADER, BASELINE, "cce71fb\t47.5\t3.17\tdiscard\tshort row") == [
        "results.tsv:3: has 5 tab-separated columns, the header has 6"
    ]


def test_unknown_status(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, HEADER, BASELINE, TRIAL.replace("discard", "kept")) == [
        "results.tsv:3: status 'kept' is not one of keep, discard, crash"
    ]


def test_non_numeric_value_in_a_declared_number_column(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(f"{HEADER}\n{BASELINE}\n{TRIAL.replace('47.5', 'fast')}\n")
    with pytest.raises(CheckFailed) as exc:
        load_ledger(path, LABEL, column_types={"tok_s": "number"})
    assert [str(p) for p in exc.value.problems] == ["results.tsv:3: tok_s 'fast' is not a finite number"]


def test_column_types_come_from_the_data(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    header = "commit\tval_bpb\tval_pass\tstatus\tdescription"
    path.write_text(
        f"{header}\nabc1234\t0.997\ttrue\tkeep\tbaseline\nbcd2345\t0.0\tN/A\tcrash\trevert warmup to baseline "
        "schedule\n"
        "cde3456\t0.991\ttrue\tkeep\tlr 0.04 (from 0.03)\n"
    )
    ledger = load_ledger(path, LABEL)
    assert ledger.metric_columns == ("val_bpb",) and ledger.text_columns == ("val_pass",)
    assert ledger.baseline.commit == "abc1234"  # the first keep row; the "… to baseline …" trial is a trial
    assert [r.commit for r in ledger.trials] == ["bcd2345", "cde3456"]
    assert [r.texts["val_pass"] for r in ledger.rows] == ["true", "N/A", "true"]
    # declared as text, a column of numbers stays text
    assert load_ledger(path, LABEL, column_types={"val_bpb": "text"}).metric_columns == ()


def test_a_stray_word_among_numbers_is_a_problem(tmp_path: Path) -> None:
    assert ledger_problems_of(
        tmp_path, HEADER, BASELINE, TRIAL.replace("47.5", "fast"), TRIAL.replace("47.5", "N/A")
    ) == [
        "results.tsv:3: tok_s 'fast' is not a number, unlike the column's other values; fix it, or declare the column "
        "as text in the spec"
    ]


def test_declared_column_must_exist(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(f"{HEADER}\n{BASELINE}\n")
    with pytest.raises(CheckFailed) as exc:
        load_ledger(path, LABEL, column_types={"tok/s": "number", "tok_s": "float"})  # type: ignore[dict-item]
    assert [str(p) for p in exc.value.problems] == [
        "results.tsv: the spec declares column 'tok/s' as 'number'; expected a header column and one of number, text",
        "results.tsv: the spec declares column 'tok_s' as 'float'; expected a header column and one of number, text",
    ]


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity"])
def test_non_finite_metric(tmp_path: Path, value: str) -> None:
    assert ledger_problems_of(tmp_path, HEADER, BASELINE, TRIAL.replace("108.9", value)) == [
        f"results.tsv:3: memory_gb {value!r} is not a finite number"
    ]


def test_bad_commit_hash(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, HEADER, BASELINE, TRIAL.replace("cce71fb", "HEAD~1")) == [
        "results.tsv:3: commit 'HEAD~1' is not a short git hash (7–40 hex digits)"
    ]


def test_baseline_is_the_first_keep_row(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(
        f"{HEADER}\n{TRIAL}\n{BASELINE.replace('v5 baseline', 'first kept')}\n{TRIAL.replace('cce71fb', 'ddd1111')}\n"
    )
    ledger = load_ledger(path, LABEL)
    assert ledger.baseline.commit == "ecfd8ea" and [r.line for r in ledger.trials] == [2, 4]


def test_baseline_named_by_the_spec(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(f"{HEADER}\n{BASELINE}\n{TRIAL}\n")
    assert load_ledger(path, LABEL, baseline="cce71fb").baseline.line == 3


def test_baseline_named_by_the_spec_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "results.tsv"
    path.write_text(f"{HEADER}\n{BASELINE}\n")
    with pytest.raises(CheckFailed) as exc:
        load_ledger(path, LABEL, baseline="0000000")
    assert [str(p) for p in exc.value.problems] == [
        "results.tsv: has 0 rows with the spec's baseline commit '0000000'; expected exactly one"
    ]


def test_no_kept_row(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, HEADER, TRIAL) == [
        "results.tsv: has no row with status 'keep'; the first kept row is the baseline (or name one in the spec)"
    ]


def test_missing_header_column(tmp_path: Path) -> None:
    [problem] = ledger_problems_of(tmp_path, HEADER.replace("\tstatus", ""), BASELINE)
    assert problem.startswith(
        "results.tsv: line 1: header ['commit', 'tok_s', 'accept_len', 'memory_gb', 'description'] has missing "
        "column(s) status;"
    )
    assert problem.endswith("expected commit, metric columns, status, description")


def test_no_metric_column(tmp_path: Path) -> None:
    [problem] = ledger_problems_of(tmp_path, "commit\tstatus\tdescription", "ecfd8ea\tkeep\tbaseline")
    assert "has no metric column" in problem


def test_empty_file(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, raw=b"") == ["results.tsv: is empty; it needs a header row and a baseline row"]


def test_blank_first_line(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, raw=b"\n\n") == [
        "results.tsv: is empty; it needs a header row and a baseline row"
    ]


def test_not_utf8(tmp_path: Path) -> None:
    assert ledger_problems_of(tmp_path, raw=HEADER.encode() + b"\n\xff\xfe\n") == ["results.tsv: is not UTF-8 text"]


def test_field_above_the_csv_limit(tmp_path: Path) -> None:
    [problem] = ledger_problems_of(tmp_path, HEADER, BASELINE + "x" * 200_000)
    assert problem.startswith("results.tsv: cannot be read as tab-separated values: field larger than field limit")


def test_every_row_problem_at_once(tmp_path: Path) -> None:
    problems = ledger_problems_of(
        tmp_path,
        HEADER,
        BASELINE,
        TRIAL.replace("discard", "maybe"),
        TRIAL.replace("cce71fb", "HEAD"),
        "1234567\t1\t2\n",
    )
    assert [p.split(":")[1] for p in problems] == ["3", "4", "5"]


def test_bad_ledger_through_the_checks(example: Path, tmp_path: Path) -> None:
    edit(example.parent / "results.tsv", "\tdiscard\tNCCL_PROTO=LL128", "\tdropped\tNCCL_PROTO=LL128")
    assert check_problems(example, tmp_path / "stage") == [
        "results.tsv:9: status 'dropped' is not one of keep, discard, crash"
    ]


def test_a_to_baseline_trial_and_a_text_column_pass_the_checks(example: Path, tmp_path: Path) -> None:
    ledger = example.parent / "results.tsv"
    lines = ledger.read_text().splitlines()
    rows = [line.split("\t") for line in lines]
    for index, cells in enumerate(rows):
        cells.insert(4, "val_pass" if index == 0 else ("N/A" if index == 1 else "true"))
    rows.append(["aaa1111", "47.1", "3.17", "108.6", "true", "discard", "revert warmup to baseline schedule"])
    ledger.write_text("\n".join("\t".join(cells) for cells in rows) + "\n")
    assert check_problems(example, tmp_path / "stage") == []
    parsed = load_ledger(ledger, LABEL)
    assert parsed.text_columns == ("val_pass",) and parsed.baseline.commit == "ecfd8ea"
    assert parsed.trials[-1].description == "revert warmup to baseline schedule"


def test_card_ledger_keys_reach_build_card_and_verify(example: Path, build_example) -> None:
    """[card.ledger] names the baseline and declares a column's type; the card's ledger table shows the text
    column, and verify re-reads the ledger the same way (from release.json's card record)."""
    from release.verify import verify_staged

    ledger = example.parent / "results.tsv"
    rows = [line.split("\t") for line in ledger.read_text().splitlines()]
    for index, cells in enumerate(rows):
        cells.insert(
            4, "val_pass" if index == 0 else ("0" if index == 2 else "true")
        )  # one number: still text, as declared
    ledger.write_text("\n".join("\t".join(cells) for cells in rows) + "\n")
    spec = example.read_text().replace(
        "[card.usage]", '[card.ledger]\nbaseline = "cce71fb"\ncolumn_types = { val_pass = "text" }\n\n[card.usage]'
    )
    example.write_text(spec)
    dist = build_example()
    card = (dist / "README.md").read_text()
    assert "| Commit | tok_s | accept_len | memory_gb | val_pass | Status | Description |" in card
    assert "| --- | ---: | ---: | ---: | --- | --- | --- |" in card
    assert "| `cce71fb` | 47.5 | 3.17 | 108.9 | 0 | discard |" in card
    assert (
        "**Summary:** baseline `cce71fb` (tok_s 47.5, accept_len 3.17, memory_gb 108.9, val_pass 0); 8 single-knob "
        "trials: 1 keep" in card
    )
    verify_staged(dist)  # re-derived with the same baseline and types, or the summary line would differ
