"""What changed since the previous version: computed at build from the staged (or the Hub's) previous
release, recorded in release.json, written into the commit description and the tag message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from release.builder import build
from release.card.changes import changes_facts
from release.card.evidence import EvidenceMap
from release.card.lint import lint_text
from release.card.staged import load_staged_evidence
from release.card.text import Line
from release.errors import InputError
from release.history.compare import Changes, compare, describe
from release.hub.client import HubClient, connect
from release.kinds import kind_named
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.spec import load_spec
from release.staged.manifest import Manifest
from tests.helpers import READ_TOKEN, REPO, TOKEN, cli, copy_as_version, edit
from tests.history.helpers import snapshot


def test_compare_files_config_metrics_ledger() -> None:
    old = snapshot(
        "v5",
        {
            "config.json": ("config", b'{"a": 1, "b": {"c": 2}, "gone": true}'),
            "results.tsv": ("ledger", b"commit\tstatus\tdescription\nabc1234\tkeep\tbaseline\n"),
            "old.bin": ("extra", b"x"),
            "same.bin": ("extra", b"same"),
        },
        {"aggregate_tps c1 ctx0": 50.0, "ttft_avg c1 ctx0": 0.2},
    )
    new = snapshot(
        "v6",
        {
            "config.json": ("config", b'{"a": 1, "b": {"c": 3}, "new": "x"}'),
            "results.tsv": (
                "ledger",
                b"commit\tstatus\tdescription\nabc1234\tkeep\tbaseline\ndef5678\tdiscard\ttry K=8\n",
            ),
            "new.bin": ("extra", b"yy"),
            "same.bin": ("extra", b"same"),
        },
        {"aggregate_tps c1 ctx0": 52.5, "ttft_avg c1 ctx0": 0.2},
    )
    changes = compare(new, old, "v5")
    assert [(f["path"], f["change"]) for f in changes.files] == [
        ("config.json", "changed"),
        ("new.bin", "added"),
        ("old.bin", "removed"),
        ("results.tsv", "changed"),
    ]
    assert next(f for f in changes.files if f["path"] == "new.bin")["new_size"] == 2
    assert [(c["key"], c["old"], c["new"]) for c in changes.config] == [
        ("b.c", "2", "3"),
        ("gone", "true", "(absent)"),
        ("new", "(absent)", '"x"'),
    ]
    assert changes.metrics == [{"metric": "aggregate_tps c1 ctx0", "old": 50.0, "new": 52.5, "delta": 2.5}]
    assert changes.ledger_rows_added == ["def5678\tdiscard\ttry K=8"]
    text = describe(changes, "Retrained the adapter.")
    assert text.startswith("Retrained the adapter.\n\nChanges since v5:")
    assert "- config config.json: b.c: 2 → 3" in text and "aggregate_tps c1 ctx0: 50.0 → 52.5 (+2.5)" in text
    assert Changes.from_dict(json.loads(json.dumps(changes.as_dict()))) == changes
    heading, table, line = changes_facts(changes.as_dict())
    assert heading == "Changes since v5" and table is not None
    assert len(table.rows) == len(changes.files) + len(changes.config) + len(changes.metrics) + len(
        changes.ledger_rows_added
    )
    # a first release has no Changes section (issue 40), only the line, which the files section prints
    assert changes_facts(compare(new, None, None).as_dict()) == (
        None,
        None,
        Line("First release", "nothing to compare with"),
    )


def make_v6(example: Path) -> Path:
    """v6: a copy of v5 with one config key changed and one ledger row added; v5's bench files declared to
    still apply (the config is part of the model they measured), labelled as v5's."""
    v6 = copy_as_version(example, "v6").parent
    edit(v6 / "config.json", '"initializer_range": 0.02', '"initializer_range": 0.01')
    with (v6 / "release.toml").open("a") as f:
        f.write(
            '\n[[card.still_applies]]\nfiles = ["glm53-v5-*.json"]\nreason = "initializer_range is read only in '
            'training"\n'
        )
    with (v6 / "results.tsv").open("a") as f:
        f.write("0a1b2c3\t47.0\t3.10\t108.0\tdiscard\tK=8 drafts\n")
    return v6 / "release.toml"


def test_build_records_changes_and_push_describes_them(example: Path, tmp_path: Path, hub: LocalHub) -> None:
    dist = tmp_path / "dist"
    v5 = build(load_spec(example), dist)
    first = Manifest.load(v5.dist / "release.json")
    assert first.changes is not None and first.changes["since"] is None and first.metrics
    v6 = build(load_spec(make_v6(example)), dist)
    changes = Changes.from_dict(Manifest.load(v6.dist / "release.json").changes or {})
    assert changes.since == "v5"
    assert {f["path"] for f in changes.files} == {"config.json", "results.tsv"}
    assert [(c["key"], c["old"], c["new"]) for c in changes.config] == [("initializer_range", "0.02", "0.01")]
    assert changes.ledger_rows_added == ["0a1b2c3\t47.0\t3.10\t108.0\tdiscard\tK=8 drafts"]
    assert changes.metrics == []  # the same bench evidence

    # the card says so, and verify re-derives the section from release.json's record
    card = (v6.dist / "README.md").read_text("utf-8")
    section = card.split("## Changes since v5\n", 1)[1].split("\n## ", 1)[0]
    assert "| config key | `config.json: initializer_range` | `0.02` | `0.01` |" in section
    assert "| ledger row added | 0a1b2c3 | — | 47.0 3.10 108.0 discard K=8 drafts |" in section
    assert "**Compared with:** v5: 2 files, 1 config key, 0 metrics, 1 ledger row" in section
    assert "**First release:** nothing to compare with" in (v5.dist / "README.md").read_text("utf-8")
    edited = card.replace("| `0.02` | `0.01` |", "| `0.02` | `0.001` |")
    found = lint_text(
        edited,
        release_files={f.path_in_repo for f in Manifest.load(v6.dist / "release.json").files},
        release_digest=None,
        version="v6",
        evidence=load_staged_evidence(v6.dist, Manifest.load(v6.dist / "release.json"))[0],
        emap=EvidenceMap.from_record(Manifest.load(v6.dist / "release.json").card, kind_named),
        label="README.md",
        repo_id=REPO,
    )
    assert any("section 'Changes since v5', table 'changes'" in str(p) and "'`0.001`'" in str(p) for p in found), found

    push(v5.dist, PushOptions(endpoint=hub.url, token=TOKEN))
    push(v6.dist, PushOptions(endpoint=hub.url, token=TOKEN, message="Lower init range; K=8 tried and discarded."))
    latest = HfApi(endpoint=hub.url, token=TOKEN).list_repo_commits(REPO)[0]
    assert latest.title.startswith("Release v6")
    assert latest.message.startswith("Lower init range; K=8 tried and discarded.\n\nChanges since v5:")
    assert "- config config.json: initializer_range: 0.02 → 0.01" in latest.message

    # compare with the Hub's v5 when it is not staged here
    shutil.rmtree(v5.dist)
    again = build(
        load_spec(tmp_path / "artifacts" / "v6" / "release.toml"),
        dist,
        since="hub:v5",
        hub=lambda: connect(hub.url, TOKEN),
    )
    from_hub = Changes.from_dict(Manifest.load(again.dist / "release.json").changes or {})
    assert from_hub.since == "hub:v5" and from_hub.config == changes.config
    assert from_hub.ledger_rows_added == changes.ledger_rows_added


@pytest.mark.parametrize("since", ["v4", "v6", "v7", "hub:v9", "../x"])
def test_a_bad_since_fails_before_anything_is_staged(
    since: str, example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_v6(example)
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "v6", "--since", since)
    assert run.code == 2
    (line,) = run.err.strip().splitlines()
    assert line.startswith("--since: ")
    assert not (tmp_path / "dist").exists()


def test_bench_metrics_follow_the_cards_globs(example: Path) -> None:
    """`card.bench.current.files` are globs: the recorded metrics read the same files the card does."""
    from release.checks.bench import load_bench
    from release.history.compare import release_metrics

    bench = {
        "glm53-v5-champion.json": load_bench(example.parent / "glm53-v5-champion.json", "glm53-v5-champion.json").cells
    }
    assert (
        release_metrics(bench, {}, ["glm53-v5-*.json"]) == release_metrics(bench, {}, ["glm53-v5-champion.json"]) != {}
    )


@pytest.mark.parametrize("damaged", ["[1]", '{"format": "hf-release/manifest/1"}', "not json"])
def test_a_damaged_release_json_on_the_hub_is_one_line(damaged: str, tmp_path: Path) -> None:
    from release.builder.previous import hub_snapshot

    class Api:
        def get_paths_info(self, repo_id: str, paths: list[str], revision: str) -> list[object]:
            return []

        def hf_hub_download(self, repo_id: str, path: str, revision: str, cache_dir: Path) -> str:
            target = Path(cache_dir) / path
            target.write_text(damaged)
            return str(target)

    with pytest.raises(InputError) as exc:
        hub_snapshot(HubClient(Api(), "http://127.0.0.1:9"), REPO, "v5")
    [problem] = exc.value.problems
    assert problem.file == "--since hub:v5" and "pick another version" in problem.message


def test_since_hub_unreachable_is_a_remote_failure_at_once(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listens at the endpoint: exit 3, one line, no retries waited out (huggingface_hub's download
    would wait 23 s, then fall back to its empty cache, which read as "no release.json at v5")."""
    import socket
    import time

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    waited: list[float] = []
    monkeypatch.setattr(time, "sleep", waited.append)
    copy_as_version(example, "v6")  # the Hub is asked before anything is staged
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "v6", "--since", "hub:v5", "--endpoint", f"http://127.0.0.1:{port}")
    assert run.code == 3
    (line,) = run.err.strip().splitlines()
    assert "cannot reach the Hub" in line and waited == []
    assert not (tmp_path / "dist").exists()


def test_since_hub_a_tag_without_release_json_is_input(
    example: Path, tmp_path: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(REPO)
    api.upload_file(path_or_fileobj=b"hand-uploaded\n", path_in_repo="notes.md", repo_id=REPO)
    api.create_tag(REPO, tag="v5")
    copy_as_version(example, "v6")  # the Hub is asked before anything is staged
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_TOKEN", READ_TOKEN)
    for since, said in (("hub:v5", "has no release.json at v5"), ("hub:v4", "has no tag v4 on the Hub")):
        run = cli(capsys, "build", "v6", "--since", since, "--endpoint", hub.url)
        assert run.code == 2
        (line,) = run.err.strip().splitlines()
        assert said in line and "pick" in line


def test_the_previous_version_is_one_of_the_same_repo(tmp_path: Path) -> None:
    """A project staging a model and its adapter side by side: the model's v3 compares with the model's v1,
    never with the adapter's v2."""
    from release.builder.previous import find_previous
    from release.staged.manifest import write_manifest

    for version, repo in (("v1", "acme/model"), ("v2", "acme/model-adapter")):
        write_manifest(tmp_path / version, Manifest(repo_id=repo, version=version, spec_sha256="0" * 64, files=()))
    found = find_previous("v3", tmp_path, None, None, "acme/model")
    assert found is not None and found[0] == "v1"
    assert find_previous("v3", tmp_path, None, None, "acme/other") is None


def test_neither_staged_nor_published_the_previous_spec_is_compared(example: Path, tmp_path: Path) -> None:
    """v5 was never built here nor pushed, but every file its spec names is present: v6 compares with it, says so,
    and hashes only what v6 does not share with it (the files v6 reuses are hard-linked: one digest each)."""
    v6 = build(load_spec(make_v6(example)), tmp_path / "dist")
    changes = Changes.from_dict(Manifest.load(v6.dist / "release.json").changes or {})
    assert changes.since == "spec:v5"
    assert {f["path"] for f in changes.files} == {"config.json", "results.tsv"} and changes.metrics == []
    assert changes.evidence[0]["measured_on"] == "v5" and changes.evidence[0]["still_applies"]
    card = (v6.dist / "README.md").read_text("utf-8")
    assert "## Changes since v5\n" in card and "**Compared with:** spec:v5: 2 files" in card


def test_offline_the_refusal_names_since_spec_and_it_builds(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh checkout offline: the Hub cannot say whether v5 was published, so the default is refused (exit 3)
    naming the option that works; `--since spec:v5`, the label the card's "Compared with" line uses, builds."""
    make_v6(example)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = cli(capsys, "build", "v6")
    assert run.code == 3
    (line,) = run.err.strip().splitlines()
    assert "to build offline, compare with v5's spec and its files (--since spec:v5)" in line
    assert not (tmp_path / "dist").exists()
    run = cli(capsys, "build", "v6", "--since", "spec:v5")
    assert run.code == 0, run.err
    card = (tmp_path / "dist" / "v6" / "README.md").read_text("utf-8")
    assert "## Changes since v5\n" in card and "**Compared with:** spec:v5: 2 files" in card
    (example.parent / "model.safetensors").unlink()  # v5's weights gone too: only the Hub can say what v5 held
    shutil.rmtree(tmp_path / "dist")
    run = cli(capsys, "build", "v6")
    assert run.code == 3 and "--since spec:v5" not in run.err
    assert "v5's spec names files not here (model.safetensors: no such file" in run.err
    assert "build where the Hub is reachable" in run.err


@pytest.mark.parametrize(
    ("since", "said"),
    [("spec:v4", "no spec v4/release.toml in"), ("spec:v5", "names files not here (model.safetensors: no such file")],
)
def test_since_spec_without_the_spec_or_its_files_is_one_line(
    since: str,
    said: str,
    example: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    make_v6(example)
    (example.parent / "model.safetensors").unlink()  # v6 has its own copy: v5's spec no longer stands for v5
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "v6", "--since", since)
    assert run.code == 2
    (line,) = run.err.strip().splitlines()
    assert line.startswith(f"--since {since}: ") and said in line
    assert not (tmp_path / "dist").exists()


def test_generation_config_keys_are_compared_and_only_what_the_model_has_is_counted() -> None:
    """generation_config.json's keys are compared as config.json's are; a model with no metrics and no ledger is
    not told "0 metrics, 0 ledger rows" (issue 38, new user's list)."""
    files = {
        "config.json": ("config", b'{"model_type": "llama"}'),
        "generation_config.json": ("generation-config", b'{"max_new_tokens": 64, "temperature": 0.7}'),
    }
    old = snapshot("v1", files, {})
    new = snapshot("v2", {**files, "generation_config.json": ("generation-config", b'{"max_new_tokens": 128}')}, {})
    changes = compare(new, old, "v1")
    assert [(c["file"], c["key"], c["old"], c["new"]) for c in changes.config] == [
        ("generation_config.json", "max_new_tokens", "64", "128"),
        ("generation_config.json", "temperature", "0.7", "(absent)"),
    ]
    assert changes.compared == ["config"]
    _, _, line = changes_facts(changes.as_dict())
    assert line == Line("Compared with", "v1: 1 file, 2 config keys")
    unchanged = changes_facts(compare(old, old, "v1").as_dict())[2]
    assert unchanged == Line("Unchanged", "no file or config key changed")
    # a record written before `compared` existed keeps its four counts (verify re-derives the card from it)
    legacy = {k: v for k, v in changes.as_dict().items() if k != "compared"}
    assert changes_facts(legacy)[2] == Line("Compared with", "v1: 1 file, 2 config keys, 0 metrics, 0 ledger rows")
    # a first release records no `compared`: its release.json stays as it was
    assert "compared" not in compare(new, None, None).as_dict()


def test_a_changed_generation_config_is_in_the_card(tmp_path: Path) -> None:
    from tests.kinds.helpers import make_release

    v1 = make_release(tmp_path / "artifacts" / "v1")
    edit(v1, '[[files]]\nsource = "results_2026-11-30.json"\nrole = "eval"\n', "")  # no metrics, and no ledger
    (v1.parent / "results_2026-11-30.json").unlink()
    dist = tmp_path / "dist"
    build(load_spec(v1), dist)
    shutil.copytree(v1.parent, v1.parent.with_name("v2"))
    v2 = v1.parent.with_name("v2") / "release.toml"
    edit(v2, 'version = "v1"', 'version = "v2"')
    edit(v2, "Tiny Llama (v1)", "Tiny Llama (v2)")
    edit(v2.parent / "generation_config.json", '"max_new_tokens": 64', '"max_new_tokens": 128')
    card = (build(load_spec(v2), dist).dist / "README.md").read_text("utf-8")
    section = card.split("## Changes since v1\n", 1)[1].split("\n## ", 1)[0]
    assert "| config key | `generation_config.json: max_new_tokens` | `64` | `128` |" in section
    assert "**Compared with:** v1: 1 file, 1 config key\n" in section


def test_a_model_without_metrics_hears_nothing_of_metrics_from_an_older_record() -> None:
    """A previous release.json built before metrics were recorded: the note that they were not compared is for a
    model that has metrics; one with none is told nothing about them (issue 38, new user's list)."""
    files = {"config.json": ("config", b'{"model_type": "llama"}')}
    old = snapshot("v1", files, None)
    changes = compare(snapshot("v2", {"config.json": ("config", b'{"model_type": "mistral"}')}, {}), old, "v1")
    assert changes.notes == [] and changes.compared == ["config"]
    assert changes_facts(changes.as_dict())[2] == Line("Compared with", "v1: 1 file, 1 config key")
    measured = compare(snapshot("v2", files, {"hellaswag acc_norm": 0.26}), old, "v1")
    assert measured.notes == [
        "the previous release.json records no metrics (built by an older hf-release); metrics not compared"
    ]
