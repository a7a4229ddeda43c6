"""Card lint on a staged release: each rule catches its fault, naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from release.card.lint import lint_text
from release.card.staged import lint_staged
from release.errors import VerifyFailed
from release.staged.manifest import Manifest
from release.verify import verify_staged
from tests.helpers import edit


def lint(staged: Path) -> list[str]:
    return [str(p) for p in lint_staged(staged, Manifest.load(staged / "release.json"))]


def test_the_untouched_card_is_clean(staged: Path) -> None:
    assert lint(staged) == []


# (what is changed in README.md, the text it becomes, what the lint must say)
FAULTS = {
    "missing section": ("\n## Ledger\n", "\n### Ledger\n", "the required section '## Ledger' is missing"),
    "empty section": (
        "\n## License\n\nGLM-5.3-Flash model license applies",
        "\n## License\n\n<!-- gone -->\n\n## Not license\n\nGLM-5.3-Flash model license applies",
        "the section '## License' is empty",
    ),
    "broken link": (
        "[results.tsv](results.tsv)",
        "[results.tsv](results-v4.tsv)",
        "link 'results-v4.tsv' does not resolve to a file of the release",
    ),
    "broken image": ("](assets/bench.png)", "](assets/chart.png)", "image 'assets/chart.png' does not resolve"),
    "link outside": ("[results.tsv](results.tsv)", "[results.tsv](../results.tsv)", "points outside the repo"),
    "null metadata": ("library_name: vllm\n", "library_name: vllm\nlanguage:\n", "front matter language is null"),
    "deeply nested metadata": (
        "library_name: vllm\n",
        "library_name: vllm\nextra: " + "[" * 600 + "]" * 600 + "\n",
        "front matter is not valid YAML: nested deeper than 64 levels",
    ),
    "null in a list": ("- dflash2\n", "- null\n", "front matter tags[1] is null"),
    "unknown license id": (
        "license: other\n",
        "license: glm-5.3\n",
        "front matter license 'glm-5.3' is not a Hub license id",
    ),
    "other without link": ("license_link: LICENSE\n", "", "license 'other' needs license_link"),
    "license link unresolved": (
        "license_link: LICENSE\n",
        "license_link: LICENSE.txt\n",
        "license_link 'LICENSE.txt' does not resolve",
    ),
    "bad relation": (
        "base_model_relation: finetune",
        "base_model_relation: fine-tune",
        "base_model_relation 'fine-tune' is not one of",
    ),
    "local path": (
        "Boot takes ~15–20 min.",
        "Boot takes ~15–20 min (logs in /home/spark/logs).",
        "local filesystem path",
    ),
    "local path in code": (
        "from huggingface_hub import snapshot_download\n",
        "from huggingface_hub import snapshot_download  # cache: /mnt/models\n",
        "local filesystem path",
    ),
    "windows path": ("Boot takes", "See C:\\models\\glm. Boot takes", "local filesystem path"),
    "file url": ("[results.tsv](results.tsv)", "[results.tsv](file:///srv/results.tsv)", "uses the file: scheme"),
    "leftover template": ("Boot takes", "{{ serving.boot }} Boot takes", "leftover template syntax"),
    "leftover statement": ("Boot takes", "{% if x %} Boot takes", "leftover template syntax"),
    "edited bench number": (
        "| 1 | 8192 | 47.9 |",
        "| 1 | 8192 | 49.9 |",
        "section 'Benchmark', table 'v5 vs v4', row 5 (1 / 8192), column 'tok/s v5': the card shows '49.9', the "
        "evidence gives '47.9'",
    ),
    "edited delta": (
        "| +19.8% |",
        "| +29.8% |",
        "column 'Δ tok/s': the card shows '+29.8%', the evidence gives '+19.8%'",
    ),
    "edited recheck": (
        "| adapter | 3 | 3.01–3.30 |",
        "| adapter | 3 | 3.11–3.30 |",
        "section 'Benchmark', table 'rechecks', row 1 (1 / 8192 / adapter), column 'Accept length min–max': the card "
        "shows '3.11–3.30', the evidence gives '3.01–3.30'",
    ),
    "edited ledger number": (
        "| `cce71fb` | 47.5 |",
        "| `cce71fb` | 48.5 |",
        "section 'Ledger', table 'ledger', row 2 (`cce71fb`), column 'tok_s': the card shows '48.5', the evidence "
        "gives '47.5'",
    ),
    "edited ledger status": (
        "| 108.4 | discard |",
        "| 108.4 | keep |",
        "column 'Status': the card shows 'keep', the evidence gives 'discard'",
    ),
    "dropped ledger row": ("| `18b348a` |", "| `18b348a-gone` |", "column 'Commit'"),
    "edited summary line": (
        "0 keep, 8 discard",
        "1 keep, 7 discard",
        "section 'Ledger', line **Summary:**: the card shows",
    ),
    "edited serving flag": (
        "| `--max-num-batched-tokens` | `7168` |",
        "| `--max-num-batched-tokens` | `8192` |",
        "section 'Serving config', table 'serving flags', row 9 (`--max-num-batched-tokens`), column 'Value'",
    ),
    "edited file size": ("| 1,163 B |", "| 1,164 B |", "section 'Files', table 'files'"),
    "edited served claim": (
        "(adapter 3.01–3.30 vs stock 3.28;",
        "(adapter 3.21–3.30 vs stock 3.28;",
        "section 'Honest note': a computed claim does not match the evidence: the card shows '(adapter 3.21–3.30 vs "
        "stock 3.28;",
    ),
    "edited verdict": (
        "| 8192 | adapter | 3 | 3.01–3.30 | 3.16 | 46.1–49.8 | 47.9 | inconclusive |",
        "| 8192 | adapter | 3 | 3.01–3.30 | 3.16 | 46.1–49.8 | 47.9 | tied |",
        "table 'rechecks', row 1 (1 / 8192 / adapter), column 'Verdict (acc. len)': the card shows 'tied', "
        "the evidence gives 'inconclusive'",
    ),
    "edited proxy metric": (
        "(0.57 → 0.64, reported",
        "(0.47 → 0.64, reported",
        "section 'Honest note': a computed claim does not match the evidence: the card shows '(0.47 → 0.64,'",
    ),
    "proxy shown as derived": (
        "0.64, reported by the authors, not derived from a file of this release)",
        "0.64)",
        "the evidence gives '0.57 → 0.64, reported by the authors",
    ),
    "edited verdict sentence": (
        "(Welch's t-test, p = 0.289) nor",
        "(Welch's t-test, p = 0.031) nor",
        "section 'Honest note': a computed claim does not match the evidence",
    ),
    "unpinned usage": (  # the snapshot_download call, continued to fit the code box (issue 40)
        'revision="v5"\n)',
        'revision="main"\n)',
        'does not pin this version: no code block has revision="v5"',
    ),
    "verify command changed": (  # continued to fit the code box (issue 40)
        "    --revision v5 \\\n    --local-dir GLM-5.3-Flash-DFlash2-TP4-Spark-v5",
        "    --local-dir GLM-5.3-Flash-DFlash2-TP4-Spark-v5",
        "section 'Verify this release' does not give the command 'hf download "
        "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark --revision v5",
    ),
    "model-index value": (
        "value: 47.91\n",
        "value: 49.9\n",
        "front matter model-index: Speculative decoding serving / llm-inference-bench / concurrency-1-context-8192 / "
        "tokens_per_second: metric_value is 49.9, the evidence gives 47.91",
    ),
    "model-index result dropped": (
        "    - type: ttft_mean_seconds\n      value: 0.138\n      name: Time to first token, mean (s)\n",
        "",
        "concurrency-1-context-0 / ttft_mean_seconds is missing; the evidence gives 0.138",
    ),
    "no mark": ("<!-- hf-release: generated card;", "<!-- hand-made card;", "has no hf-release generated mark"),
    "no front matter": ("---\nbase_model:", "base_model:", "has no YAML front matter"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_lint_catches(staged: Path, fault: str) -> None:
    old, new, expected = FAULTS[fault]
    edit(staged / "README.md", old, new)
    problems = lint(staged)
    assert any(expected in p for p in problems), problems


def test_every_hand_edit_is_detected_by_the_mark(staged: Path) -> None:
    edit(staged / "README.md", "Config unchanged.", "Config unchanged!")
    assert any("was edited by hand" in p for p in lint(staged))


def test_stale_release_digest_is_detected(staged: Path) -> None:
    text = (staged / "README.md").read_text()
    problems = lint_text(text, release_files={"LICENSE"}, release_digest="0" * 64)
    assert any("quotes release_digest" in str(p) and "this release's is 000000000000" in str(p) for p in problems)


def test_verify_fails_on_an_edited_number(staged: Path) -> None:
    edit(staged / "README.md", "| 1 | 8192 | 47.9 |", "| 1 | 8192 | 49.9 |")
    with pytest.raises(VerifyFailed) as caught:
        verify_staged(staged)
    assert any(p.file == "README.md" for p in caught.value.problems)


def test_template_syntax_inside_code_is_allowed(staged: Path) -> None:
    edit(staged / "README.md", "Boot takes", "`{{ not a leftover }}` Boot takes")
    assert not any("leftover template syntax" in p for p in lint(staged))


def test_the_numbers_are_rederived_from_the_manifest_record_not_the_card(staged: Path) -> None:
    """The card holds no hidden map; which file plays which part is read from release.json's `card`."""
    import json

    assert "hf-release:evidence" not in (staged / "README.md").read_text("utf-8")
    manifest = Manifest.load(staged / "release.json")
    assert manifest.card is not None and manifest.card["current"]["files"] == ["glm53-v5-champion.json"]
    swapped = json.loads((staged / "release.json").read_text("utf-8"))
    swapped["card"]["current"], swapped["card"]["previous"] = swapped["card"]["previous"], swapped["card"]["current"]
    (staged / "release.json").write_text(json.dumps(swapped), "utf-8")
    problems = lint(staged)
    assert any("table 'v4 vs v5'" in p or "the card shows" in p for p in problems), problems
