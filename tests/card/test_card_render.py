"""The rendered card of the example release: the seed's content, numbers from the evidence, the chart."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard
from markdown_it import MarkdownIt

from release.builder import build
from release.card.mark import generated_mark, hand_edited
from release.card.staged import card_diff, lint_staged, render_card
from release.errors import CheckFailed, InputError
from release.spec import load_spec
from release.staged.manifest import Manifest
from release.verify import verify_staged
from tests.helpers import EXAMPLE, edit

# The finding in one sentence first (under a lead that does not repeat the heading), then the figures.
HONEST_NOTE = (
    "**Proxy-eval trap:** The adapter improved teacher-forced top-1 but did not show a served acceptance gain. "
    "We publish it because it is the exact champion artifact we validated — not because the fine-tune is proven to "
    "help."
    "\n\n"
    "**The evidence:** teacher-forced top-1 (0.57 → 0.64, reported by the authors, not derived from a file of this "
    "release); served acceptance length (adapter 3.01–3.30 vs stock 3.28; inconclusive: neither a difference "
    "(Welch's t-test, p = 0.289) nor a tie within ±2% of the stock mean (two one-sided Welch t-tests (TOST), "
    "p = 0.708) is shown: adapter mean 3.16 vs stock 3.28, difference −0.12 (95% CI −0.481 to +0.241), n = 3 vs 3)."
)


def card(dist: Path) -> str:
    return (dist / "README.md").read_text("utf-8")


def front(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


def section(text: str, heading: str) -> str:
    body = text.split(f"\n## {heading}\n", 1)[1]
    return body.split("\n## ", 1)[0]


def test_card_carries_the_seed_honest_note_with_numbers_from_the_rechecks(built: Path) -> None:
    assert HONEST_NOTE in section(card(built), "Honest note")


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # the stock values are identical
def test_honest_note_numbers_are_the_recheck_files_numbers() -> None:
    """Recompute the served range and Welch's test independently of release/card from the recheck JSONs:
    one untouched llm-inference-bench file per server boot, the variant named by the file (as the spec maps it)."""
    from scipy import stats

    lengths: dict[str, list[float]] = {"adapter": [], "stock": []}
    files = sorted(EXAMPLE.glob("glm53-v5-recheck-*.json"))
    assert len(files) == 6
    for path in files:
        data = json.loads(path.read_text())
        assert "summary_table_by_drafter" not in data and all("drafter" not in c for c in data["results"])
        lengths[path.stem.rsplit("-", 1)[1]] += [c["server_spec_accept_length"] for c in data["results"]]
    adapter = f"{min(lengths['adapter']):.2f}–{max(lengths['adapter']):.2f}"
    stock = {f"{v:.2f}" for v in lengths["stock"]}
    assert len(stock) == 1
    assert f"(adapter {adapter} vs stock {stock.pop()};" in HONEST_NOTE
    welch = stats.ttest_ind(lengths["adapter"], lengths["stock"], equal_var=False)
    low, high = welch.confidence_interval()
    assert f"(Welch's t-test, p = {welch.pvalue:.3f})" in HONEST_NOTE
    assert f"(95% CI −{abs(low):.3g} to +{high:.3g})" in HONEST_NOTE


def test_card_carries_lineage_credit_license_and_citation(built: Path) -> None:
    text = card(built)
    lineage = section(text, "Lineage & credit")
    for name in (
        "zai-org/GLM-5.3-Flash",
        "incoai/GLM-5.3-Flash-DFlash2",
        "MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks",
        "Reederey",
        "autoresearch",
        "@runsonai",
        "@ciprianveg",
        "arXiv:2602.06036",
    ):
        assert name in lineage, name
    assert "We did not do this alone, and this release deliberately says so:" in lineage
    assert "chunk clamp 2048→7168" in lineage
    license_ = section(text, "License")
    assert "GLM-5.3-Flash model license applies (inherited from the base model" in license_
    assert "[LICENSE](LICENSE)" in license_
    citation = section(text, "Citation")
    assert "@misc{chen2026dflash," in citation
    assert "Jian Chen and Yesheng Liang and Zhijian Liu" in citation
    assert "eprint        = {2602.06036}" in citation


def test_front_matter_is_valid_hub_metadata(built: Path) -> None:
    text = card(built)
    meta = front(text)
    assert meta["license"] == "other"
    assert meta["license_name"] == "glm-5.3-flash"
    assert meta["license_link"] == "LICENSE" and (built / "LICENSE").is_file()
    assert meta["base_model"] == "incoai/GLM-5.3-Flash-DFlash2"
    assert meta["base_model_relation"] == "finetune"
    assert meta["library_name"] == "vllm"
    assert meta["pipeline_tag"] == "text-generation"
    assert None not in meta.values()
    assert ModelCard(text).data.to_dict()["license_link"] == "LICENSE"


def test_generated_mark_quotes_the_release_digest(built: Path) -> None:
    text = card(built)
    manifest = Manifest.load(built / "release.json")
    assert generated_mark(text) == manifest.release_digest
    assert hand_edited(text) is False
    assert hand_edited(text.replace("Config unchanged.", "Config changed.")) is True
    assert generated_mark("# a card written by hand\n") is None
    assert hand_edited("# a card written by hand\n") is None


def test_chart_is_shipped_hashed_and_embedded(built: Path) -> None:
    manifest = Manifest.load(built / "release.json")
    chart = manifest.file("assets/bench.png")
    readme = manifest.file("README.md")
    assert chart is not None and chart.role == "chart" and chart.generated
    assert readme is not None and readme.role == "card" and readme.generated
    data = (built / "assets/bench.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) == chart.size
    assert b"Software" not in data  # no matplotlib version stamp: builds stay byte-identical
    assert "![v5 vs v4: tok/s and acceptance length per cell](assets/bench.png)" in section(card(built), "Benchmark")


def test_bench_table_cells_come_from_the_bench_json(built: Path) -> None:
    def cell(name: str, conc: int, ctx: int) -> dict:
        data = json.loads((EXAMPLE / name).read_text())
        return next(c for c in data["results"] if (c["concurrency"], c["context_tokens"]) == (conc, ctx))

    v5, v4 = cell("glm53-v5-champion.json", 8, 32768), cell("glm53-v4-cudagraphs.json", 8, 32768)
    delta = (v5["aggregate_tps"] - v4["aggregate_tps"]) / v4["aggregate_tps"] * 100
    row = (
        f"| 8 | 32768 | {v5['aggregate_tps']:.1f} | {v4['aggregate_tps']:.1f} | {delta:+.1f}% | "
        f"{v5['ttft_avg']:.2f} | {v4['ttft_avg']:.2f} | "
        f"{v5['inter_token_latency_avg'] * 1000:.1f} | {v4['inter_token_latency_avg'] * 1000:.1f} | "
        f"{v5['server_spec_accept_length']:.2f} | {v4['server_spec_accept_length']:.2f} | "
        f"{v5['server_spec_accept_rate'] * 100:.1f}% | {v4['server_spec_accept_rate'] * 100:.1f}% |"
    )
    bench = section(card(built), "Benchmark")
    assert row in bench
    assert "no +1 for the bonus token" in bench  # the acceptance-length convention is stated
    assert "| 1 | 8192 | adapter | 3 | 3.01–3.30 |" in bench and bench.count("| inconclusive |") == 2


def test_ledger_lists_the_baseline_and_every_trial_with_its_status(built: Path) -> None:
    ledger = section(card(built), "Ledger")
    rows = [line.split("\t") for line in (EXAMPLE / "results.tsv").read_text().splitlines()[1:] if line.strip()]
    for commit, *_, status, description in rows:
        assert re.search(rf"^\| `{commit}` \|.*\| {status} \| {re.escape(description)} \|$", ledger, re.M), commit
    assert "**Summary:** baseline `ecfd8ea`" in ledger


def test_serving_config_and_usage_come_from_the_launcher(built: Path) -> None:
    text = card(built)
    serving = section(text, "Serving config")
    assert "| `--max-num-batched-tokens` | `7168` |" in serving
    assert "| `--enforce-eager` | (set) |" in serving
    assert "**Launch order:** workers first (ranks 1, 2, 3), head last (rank 0)" in serving
    assert "[launch-glm53-dflash2-tp4-v5.sh](launch-glm53-dflash2-tp4-v5.sh)" in serving
    usage = section(text, "How to use this version")
    assert (
        'snapshot_download(\n    repo_id="spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark", revision="v5"\n)' in usage
    )  # wrapped
    # wrapped one key a line to fit the code box (issue 40)
    assert '    "model": "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark",\n    "num_speculative_tokens": 7,\n' in usage
    assert '    "revision": "v5"\n  }\'' in usage


def test_files_table_lists_every_file_but_the_card(built: Path) -> None:
    manifest = Manifest.load(built / "release.json")
    files = section(card(built), "Files")
    for f in manifest.files:
        if f.role == "card":
            assert "[README.md]" not in files
            continue
        assert f"| [{f.path_in_repo}]({f.path_in_repo}) | {f.size:,} B | `{f.sha256[:12]}` |" in files


def test_every_required_section_is_present_and_the_built_card_lints_clean(built: Path) -> None:
    tokens = MarkdownIt("commonmark").parse(card(built))
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    for name in (
        "Summary",
        "Honest note",
        "Serving config",
        "Benchmark",
        "Ledger",
        "Files",
        "How to use this version",
        "Lineage & credit",
        "License",
        "Citation",
    ):
        assert name in headings
    assert lint_staged(built, Manifest.load(built / "release.json")) == []
    assert verify_staged(built).files == len(Manifest.load(built / "release.json").files)


def test_two_builds_are_byte_identical(built: Path, spec_copy) -> None:
    from release.card.chart import _drawn

    _drawn.clear()  # really draw the chart again, not reuse the memoized bytes
    again = build(load_spec(spec_copy()), built.parent.parent / "dist-again").dist
    for name in ("README.md", "assets/bench.png", "assets/honest-note.png", "release.json"):
        assert (again / name).read_bytes() == (built / name).read_bytes(), name


def test_spec_data_with_template_syntax_prints_literally(spec_copy, tmp_path: Path) -> None:
    spec = spec_copy()
    edit(spec, 'subject = "the adapter"', 'subject = "the {{ 7*7 }} {% if true %}adapter{% endif %} {# x #}"')
    dist = build(load_spec(spec), tmp_path / "dist").dist
    text = card(dist)
    assert "49" not in section(text, "Honest note")
    html = MarkdownIt("commonmark").render(section(text, "Honest note"))
    assert "The {{ 7*7 }} {% if true %}adapter{% endif %} {# x #} improved" in html
    assert lint_staged(dist, Manifest.load(dist / "release.json")) == []


def test_undefined_template_variable_is_a_problem_naming_template_and_variable(spec_copy, tmp_path: Path) -> None:
    spec = spec_copy()
    (spec.parent / "card.md.j2").write_text(
        "# {{ card.title }}\n\n## Summary\n\n{{ card.summary }} {{ no_such_thing }}\n"
    )
    edit(spec, "[card]\n", '[card]\ntemplate = "card.md.j2"\n')
    with pytest.raises(CheckFailed) as caught:
        build(load_spec(spec), tmp_path / "dist")
    messages = [str(p) for p in caught.value.problems]
    assert any(m.startswith("card.md.j2:5: ") and "'no_such_thing' is undefined" in m for m in messages), messages
    assert not (tmp_path / "dist" / "v5").exists()


def render(spec_path: Path, built: Path, template: Path | None = None):
    """Render the card for a (changed) spec against the evidence of the built example, without a build."""
    from release.card.render import produce, template_for
    from release.card.staged import load_staged_evidence
    from release.kinds import kind_named

    spec = load_spec(spec_path)
    manifest = Manifest.load(built / "release.json")
    evidence, problems = load_staged_evidence(built, manifest, include_chart=False)
    assert problems == []
    kind = kind_named("dflash2-drafter")
    return produce(spec, kind, evidence, manifest.release_digest, template_for(spec, template, kind))


def test_template_override_is_used(built: Path, spec_copy, tmp_path: Path) -> None:
    from release.card.render import TEMPLATES

    custom = tmp_path / "custom.md.j2"
    custom.write_text(
        (TEMPLATES / "modelcard.md.j2").read_text().replace("{% block what %}\n", "{% block what %}\nCustom line.\n\n")
    )
    rendered, problems = render(spec_copy(), built, custom)
    assert problems == [] and "Custom line." in section(rendered.text, "Summary")


@pytest.mark.parametrize("where", ["--template", "[card] template"])
def test_a_missing_template_is_refused_before_anything_is_staged(spec_copy, tmp_path: Path, where: str) -> None:
    spec = spec_copy()
    override = None
    if where == "--template":
        override = tmp_path / "nowhere.md.j2"
    else:
        edit(spec, "[card]\n", '[card]\ntemplate = "nowhere.md.j2"\n')
    with pytest.raises(InputError, match="card template not found") as exc:
        build(load_spec(spec), tmp_path / "dist", template=override)
    assert [p.file for p in exc.value.problems] == [str(override or spec.parent / "nowhere.md.j2")]
    assert not (tmp_path / "dist").exists()  # no staging folder: nothing was collected or hashed


def test_claimed_recheck_count_must_match_the_evidence(built: Path, spec_copy) -> None:
    spec = spec_copy()
    edit(spec, "rechecks = 3", "rechecks = 4")
    _, problems = render(spec, built)
    assert any("claims 4 rechecks but the adapter evidence has 3 file(s)" in p.message for p in problems), problems


def test_served_claim_follows_the_evidence_not_the_wish(built: Path, spec_copy) -> None:
    """Swap the roles: the stock drafter as the candidate is still 'inconclusive', worded from the data."""
    spec = spec_copy()
    edit(
        spec,
        'candidate_label = "adapter"\nbaseline_label = "stock"',
        'candidate_label = "stock"\nbaseline_label = "adapter"',
    )
    edit(
        spec,
        'candidate = ["glm53-v5-recheck-*-adapter.json"]\nbaseline = ["glm53-v5-recheck-*-stock.json"]',
        'candidate = ["glm53-v5-recheck-*-stock.json"]\nbaseline = ["glm53-v5-recheck-*-adapter.json"]',
    )
    rendered, problems = render(spec, built)
    assert problems == []
    assert "The adapter improved teacher-forced top-1 but did not show a served acceptance gain." in rendered.text
    assert "served acceptance length (stock 3.28 vs adapter 3.01–3.30; inconclusive: " in rendered.text


def test_prose_claiming_another_verdict_fails_the_build(built: Path, spec_copy) -> None:
    """The seed's "statistically tied" in the spec's prose, or a declared claim the figures do not
    give, is a problem."""
    spec = spec_copy()
    edit(spec, 'claim = "inconclusive"', 'claim = "tied"')
    edit(
        spec,
        "not because the fine-tune is proven to help.",
        "not because the fine-tune is proven to help: statistically tied across 3 rechecks.",
    )
    _, problems = render(spec, built)
    messages = sorted(f"{p.file.split()[-1]}: {p.message.split(' (')[0]}" for p in problems)
    assert messages == [
        "card.honest_note.served.claim: claims 'tied'; the served evidence gives 'inconclusive'",
        "card.honest_note.text: says 'statistically'; the card states the verdict itself, next to the test that backs "
        "it — remove the word from the prose",
        "card.honest_note.text: says 'tied', which claims 'tied'; the served evidence gives 'inconclusive'",
    ], problems


def test_a_recheck_file_of_no_variant_is_a_problem(built: Path, spec_copy) -> None:
    spec = spec_copy()
    edit(spec, 'baseline = ["glm53-v5-recheck-*-stock.json"]', 'baseline = ["glm53-v5-recheck-[12]-stock.json"]')
    _, problems = render(spec, built)
    assert [p.file for p in problems if "exactly one of" in p.message] == ["glm53-v5-recheck-3-stock.json"], problems


def test_merge_relation_with_one_base_model_is_refused(built: Path, spec_copy) -> None:
    spec = spec_copy()
    edit(spec, 'base_model_relation = "finetune"', 'base_model_relation = "merge"')
    _, problems = render(spec, built)
    assert any("'merge' means several models merged" in p.message for p in problems), problems


def test_base_model_must_be_credited_in_the_lineage(built: Path, spec_copy) -> None:
    spec = spec_copy()
    edit(spec, 'name = "incoai/GLM-5.3-Flash-DFlash2"', 'name = "the vendor drafter"')
    _, problems = render(spec, built)
    assert any("'incoai/GLM-5.3-Flash-DFlash2' is not credited in [card.lineage]" in p.message for p in problems), (
        problems
    )


def test_a_glob_matching_no_bench_file_is_a_problem(built: Path, spec_copy) -> None:
    spec = spec_copy()
    edit(spec, 'files = ["glm53-v4-cudagraphs.json"]', 'files = ["glm53-v3-*.json"]')
    _, problems = render(spec, built)
    assert any("'glm53-v3-*.json' matches no bench file" in p.message for p in problems), problems


def test_card_typos_and_unknown_licenses_fail_the_spec(spec_copy) -> None:
    spec = spec_copy()
    edit(spec, 'label = "proxy-eval trap"', 'lable = "proxy-eval trap"')
    with pytest.raises(InputError, match="unknown key"):
        load_spec(spec)
    spec = spec_copy("other")
    edit(spec, 'id = "other"', 'id = "glm-license"')
    with pytest.raises(InputError, match="card.license.id"):
        load_spec(spec)


def test_render_card_rerenders_the_staged_card_and_keeps_verify_green(built: Path, spec_copy, tmp_path: Path) -> None:
    spec = spec_copy()
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(built, dist)
    edit(spec, "Config unchanged.", "Config unchanged, really.")
    preview = render_card(load_spec(spec), dist, write=False)
    assert card(dist) == preview.previous  # nothing written
    diff = card_diff(preview.previous, preview.text, old_label="staged", new_label="rendered")
    assert "-**What this is:**" in diff and "+**What this is:**" in diff and "really." in diff
    assert card_diff(preview.text, preview.text) == ""
    result = render_card(load_spec(spec), dist)
    assert card(dist) == result.text and "Config unchanged, really." in result.text
    assert Manifest.load(dist / "release.json").spec_sha256 == load_spec(spec).sha256
    verify_staged(dist)  # manifest and SHA256SUMS rewritten for the new card
    rewritten = Manifest.load(dist / "release.json")
    assert rewritten.changes == Manifest.load(built / "release.json").changes is not None  # what build recorded is kept


def test_render_card_with_nothing_to_change_writes_nothing(built: Path, tmp_path: Path) -> None:
    """A staged (perhaps published) release is left byte for byte as it is."""
    dist = tmp_path / "dist" / "v5"
    shutil.copytree(built, dist)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in dist.iterdir() if p.is_file()}
    result = render_card(load_spec(built.parent.parent / "artifacts" / "v5" / "release.toml"), dist)
    assert result.text == result.previous
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in dist.iterdir() if p.is_file()} == before


def test_missing_optional_content_becomes_an_html_comment(built: Path, spec_copy) -> None:
    spec = spec_copy()
    text = spec.read_text()
    start, end = text.index("ops_notes = ["), text.index("original_work = [")
    spec.write_text(text[:start] + text[end:])
    edit(spec, '[card.bench.previous]\nlabel = "v4"\nfiles = ["glm53-v4-cudagraphs.json"]\n', "")
    rendered, problems = render(spec, built)
    assert problems == []
    assert "<!-- no ops notes: [card].ops_notes is not set -->" in rendered.text and "## Ops notes" not in rendered.text
    assert "<!-- no previous version measured on the same cells -->" in rendered.text
    assert "Δ tok/s" not in rendered.text and "| tok/s v5 | TTFT v5 (s) |" in rendered.text


def test_printing_a_value_that_is_not_there_is_a_template_problem(built: Path, spec_copy, tmp_path: Path) -> None:
    spec = spec_copy()
    text = spec.read_text()
    start = text.index('what = """')
    end = text.index('Config unchanged."""\n') + len('Config unchanged."""\n')
    spec.write_text(text[:start] + text[end:])
    template = tmp_path / "unguarded.md.j2"
    template.write_text("# {{ card.title }}\n\n{{ what }}\n")
    rendered, problems = render(spec, built, template)
    assert rendered is None
    assert len(problems) == 1, problems
    assert problems[0].file.endswith("unguarded.md.j2:3")
    assert "printed a value that is not there (None)" in problems[0].message


def test_a_template_is_compiled_once_per_process_and_again_once_edited(
    built: Path, spec_copy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from release.card.sandbox import BoundedSandbox

    compiled: list[str | None] = []
    real = BoundedSandbox.compile

    def counted(self: BoundedSandbox, source: str, name: str | None = None, *args: object, **kwargs: object) -> object:
        compiled.append(name)
        return real(self, source, name, *args, **kwargs)

    monkeypatch.setattr(BoundedSandbox, "compile", counted)
    spec = spec_copy()
    template = tmp_path / "own.md.j2"
    template.write_text("# {{ card.title }}\n")
    first, _ = render(spec, built, template)
    again, _ = render(spec, built, template)
    template.write_text("# {{ card.title }}, edited\n")  # the same file, other source
    edited, _ = render(spec, built, template)
    assert compiled == ["own.md.j2", "own.md.j2"]
    assert first.text == again.text and edited.text.endswith(", edited\n") and edited.text != first.text


def test_a_chart_path_taken_by_an_artifact_is_refused_without_touching_it(spec_copy, tmp_path: Path) -> None:
    spec = spec_copy()
    edit(spec, 'chart = "assets/bench.png"', 'chart = "results.png"')
    (spec.parent / "results.png").write_bytes(b"not a chart")
    edit(
        spec,
        'source = "results.tsv"\nrole = "ledger"\n',
        'source = "results.tsv"\nrole = "ledger"\n\n[[files]]\nsource = "results.png"\nrole = "extra"\n',
    )
    with pytest.raises(
        InputError, match="path_in_repo 'results.png' is written by hf-release itself"
    ):  # refused at collect, before any check
        build(load_spec(spec), tmp_path / "dist")
    assert (spec.parent / "results.png").read_bytes() == b"not a chart"


def test_a_custom_template_written_for_the_earlier_variables_still_renders(built: Path, spec_copy) -> None:
    """A project's own template, copied from the default before the shared parts (tests/fixtures/templates/):
    every variable it names is still given, and the lint finds the honest note's claims in its old wording."""
    from release.card.lint import lint_text

    old = Path(__file__).parents[1] / "fixtures" / "templates" / "modelcard-v5-self-contained.md.j2"
    rendered, problems = render(spec_copy(), built, old)
    assert problems == []
    assert (
        "**Honest note (proxy-eval trap):** the adapter improved teacher-forced top-1 (0.57 → 0.64, reported by the"
        in rendered.text
    )
    files = {f.path_in_repo for f in Manifest.load(built / "release.json").files} | set(rendered.charts)
    assert (
        lint_text(rendered.text, release_files=files, emap=rendered.facts.map, facts=rendered.facts, label="README.md")
        == []
    )
