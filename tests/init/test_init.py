"""`hf-release init`: roles and kind detected from real files; the next version from the previous one."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from release.builder import build
from release.errors import CheckFailed
from release.hub.client import connect
from release.init import init_from_files, init_from_previous
from release.init.detect import detect_kind, scan
from release.localhub import LocalHub
from release.publish.push import PushOptions, push
from release.spec import load_spec
from release.status import project_status
from tests.helpers import EXAMPLE, REPO, TOKEN, cli, edit, load_script, problem_lines, transformers_folder


def test_roles_and_kind_of_a_transformers_model(tmp_path: Path) -> None:
    found = scan(transformers_folder(tmp_path / "model"))
    roles = {d.path.name: d.role for d in found}
    assert roles == {
        "model-00001-of-00003.safetensors": "weights",
        "model-00002-of-00003.safetensors": "weights",
        "model-00003-of-00003.safetensors": "weights",
        "model.safetensors.index.json": "weights-index",
        "config.json": "config",
        "generation_config.json": "generation-config",
        "tokenizer.json": "tokenizer",
        "tokenizer_config.json": "tokenizer",
        "special_tokens_map.json": "tokenizer",
        "LICENSE": "license",
        "results_2026-11-30.json": "eval",
        "notes.md": "extra",
    }
    assert next(d for d in found if d.role == "license").license_id == "apache-2.0"
    assert detect_kind(found)[0].name == "transformers"


def test_roles_and_kind_of_the_example_drafter() -> None:
    found = scan(EXAMPLE)
    roles = {d.path.name: d.role for d in found}
    assert roles["model.safetensors"] == "weights" and roles["config.json"] == "config"
    assert roles["launch-glm53-dflash2-tp4-v5.sh"] == "launcher" and roles["results.tsv"] == "ledger"
    assert sorted(n for n, r in roles.items() if r == "bench") == sorted(p.name for p in EXAMPLE.glob("glm53-v*.json"))
    assert roles["LICENSE"] == "license" and roles["release.toml"] == "extra"  # scan sees it; init leaves it out
    assert detect_kind(found)[0].name == "dflash2-drafter"


def test_a_file_that_only_looks_like_weights_is_extra(tmp_path: Path) -> None:
    (tmp_path / "fake.safetensors").write_bytes(b"not a safetensors file")
    (tmp_path / "run.sh").write_text("echo no server here\n")
    assert [d.role for d in scan(tmp_path)] == ["extra", "extra"]


def test_init_files_writes_sources_where_they_are(tmp_path: Path) -> None:
    inside = transformers_folder(tmp_path / "artifacts" / "incoming")
    outside = transformers_folder(tmp_path.parent / f"{tmp_path.name}-node-disk")
    (inside / "release.toml").write_text("# an older spec: hf-release's input, never a release file\n")
    result = init_from_files(tmp_path, "1.0.0", inside, "acme/llama-mini")
    data = tomllib.loads(result.spec.read_text())
    assert result.spec == tmp_path / "artifacts" / "1.0.0" / "release.toml"
    assert data["release"] == {"repo_id": "acme/llama-mini", "version": "1.0.0"}
    assert '# kind = "transformers"' in result.spec.read_text()
    assert {f["source"] for f in data["files"]} >= {"../incoming/config.json", "../incoming/LICENSE"}
    assert "../incoming/release.toml" not in {f["source"] for f in data["files"]}
    assert data["card"]["license"]["id"] == "apache-2.0" and data["card"]["title"] == "acme/llama-mini"
    text = result.spec.read_text()
    written, placeholders = text.split("# Words only you can write", 1)
    assert "\n# [card.lineage]" in placeholders  # placeholders are comments, never published words
    filled = written + "\n".join(line.removeprefix("# ") for line in placeholders.splitlines()[1:])
    assert tomllib.loads(filled)["card"]["lineage"]["entries"][0]["role"] == "base-model"  # valid once uncommented
    far = init_from_files(tmp_path, "1.0.1", outside, "acme/llama-mini")
    assert all(Path(f["source"]).is_absolute() for f in tomllib.loads(far.spec.read_text())["files"])
    shutil.rmtree(outside)


def test_init_files_spec_builds_without_edits(tmp_path: Path) -> None:
    model = transformers_folder(tmp_path / "artifacts" / "incoming")
    spec = init_from_files(tmp_path, "v1", model, "acme/llama-mini").spec
    staged = build(load_spec(spec), tmp_path / "dist").dist
    card = (staged / "README.md").read_text()
    assert "llama-mini: a LlamaForCausalLM model (transformers), weights in 3 safetensors files." in card
    assert "lineage" not in card.lower() and "citation" not in card.lower()  # nobody wrote them: left out


def test_everyday_tokenizer_files_and_an_old_readme(tmp_path: Path) -> None:
    """What save_pretrained writes beside the JSON files builds; the author's old README.md is left out, said so."""
    model = transformers_folder(tmp_path / "artifacts" / "incoming")
    (model / "chat_template.jinja").write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    (model / "merges.txt").write_text("#version: 0.2\na b\n")
    (model / "tokenizer.model").write_bytes(b"\x0a\x05hello")  # sentencepiece: binary
    (model / "README.md").write_text("# My model\n")
    spec = init_from_files(tmp_path, "v1", model, "acme/llama-mini").spec
    assert "# Left out: README.md" in spec.read_text()
    staged = build(load_spec(spec), tmp_path / "dist").dist
    assert {"chat_template.jinja", "merges.txt", "tokenizer.model"} <= {p.name for p in staged.iterdir()}
    (model / "chat_template.jinja").write_text("{% for m in messages %}")
    with pytest.raises(CheckFailed, match="chat template syntax error"):
        build(load_spec(spec), tmp_path / "dist")


def test_init_never_overwrites_and_needs_a_valid_version(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before = example.read_bytes()
    for args in (
        ["init", "v5", "--from", "v5"],
        ["init", "v5.lock", "--from", "v5"],
        ["init", "v6", "--files", str(tmp_path)],
        ["init", "v6"],
    ):
        run = cli(capsys, *args)
        assert run.code == 2, args
        assert len(run.err.strip().splitlines()) == 1
    assert example.read_bytes() == before and not (tmp_path / "artifacts" / "v6").exists()


def test_next_version_from_the_previous_one_builds_pushes_and_keeps_v5(
    example: Path, tmp_path: Path, hub: LocalHub
) -> None:
    root, dist = tmp_path, tmp_path / "dist"
    v5 = build(load_spec(example), dist)
    push(v5.dist, PushOptions(endpoint=hub.url, token=TOKEN))
    # the author re-measured the ledger for v6 and put it in the new folder; everything else is unchanged
    (root / "artifacts" / "v6").mkdir()
    shutil.copy(example.parent / "results.tsv", root / "artifacts" / "v6" / "results.tsv")
    edit(
        root / "artifacts" / "v6" / "results.tsv",
        "\tdiscard\tmax-num-batched-tokens 8192",
        "\tdiscard\tmax-num-batched-tokens 8192 (re-run)",
    )
    (root / "artifacts" / "v6" / "results_2026-12-01T10-00-00.json").write_text("{}")  # lm-eval's new, timestamped name
    result = init_from_previous(root, "v6", "v5")
    assert "model.safetensors" in (result.reused or []) and "results.tsv" not in (result.reused or [])
    assert result.unlisted == ["results_2026-12-01T10-00-00.json"]  # said, not silently left out
    spec = load_spec(result.spec)
    assert spec.version == "v6"
    assert {f.source for f in spec.files} >= {"../v5/model.safetensors", "results.tsv"}
    v6 = build(spec, dist)
    # the 2.3 GB drafter is reused in place: the staged v6 file is the v5 file, not a copy
    assert (v6.dist / "model.safetensors").stat().st_ino == (example.parent / "model.safetensors").stat().st_ino
    card = (v6.dist / "README.md").read_text()
    assert "(v6)" in card and "(v5)" not in card and "`v5`" not in card
    assert "## Changes since v5\n" in card and "| file changed | `results.tsv` |" in card
    assert "`glm53-v5-recheck-3-stock.json` measured on v5, the same weights as this version's" in card  # reuse, said
    assert "tok/s v5" in card and "tok/s v6" not in card
    pushed = push(v6.dist, PushOptions(endpoint=hub.url, token=TOKEN))

    description = HfApi(endpoint=hub.url, token=TOKEN).list_repo_commits(REPO)[0].message
    assert description.startswith("Changes since v5:\n- changed results.tsv (")  # the one file the author replaced
    tags = {t.name: t.target_commit for t in HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs(REPO).tags}
    assert tags["v6"] == pushed.commit and tags["v5"] != pushed.commit
    statuses = project_status(root, dist, connect(hub.url, TOKEN))
    assert [(s.version, s.hub, s.hub_matches) for s in statuses] == [
        ("v5", "published", True),
        ("v6", "published", True),
    ]


def drafter_folder(folder: Path) -> Path:
    """The example's files with a drafter whose shapes are the ones its (miniature) config implies."""
    from release.kinds.dflash2_drafter.inventory import write_drafter

    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("release.toml"))
    tiny_config = load_script(EXAMPLE.parent / "make_drafter.py")["tiny_config"]
    config = tiny_config(json.loads((folder / "config.json").read_text()))
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    write_drafter(folder / "model.safetensors", config, data="random", seed=1)
    return folder


def test_init_files_for_a_drafter_asks_only_for_the_honest_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = drafter_folder(tmp_path / "node-disk")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    result = init_from_files(project, "v5", node, REPO)
    data = tomllib.loads(result.spec.read_text())
    assert result.kind == "dflash2-drafter"
    assert data["card"]["usage"] == {"target_model": "zai-org/GLM-5.3-Flash"}  # what the launcher serves
    assert data["card"]["bench"]["current"]["files"] == ["glm53-v5-champion.json"]  # the full grid, newest
    run = cli(capsys, "build", "v5")
    assert run.code == 1
    (line,) = problem_lines(run.err)  # the one thing only the authors can write (after the steps that ran)
    assert "needs [card.honest_note]" in line
    text = result.spec.read_text()
    head, note = text.split("# [card.honest_note]", 1)
    filled = head + "[card.honest_note]\n" + "\n".join(line.removeprefix("# ") for line in note.splitlines()[1:]) + "\n"
    result.spec.write_text(filled)
    staged = build(load_spec(result.spec), project / "dist").dist
    assert "zai-org/GLM-5.3-Flash" in (staged / "README.md").read_text()


def test_the_readmes_next_version_steps_run_as_written(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """README "Next version": its shell lines and `init` run in a project as written; the changed file is then
    v6's own source, and build would find nothing in artifacts/v6/ that the spec leaves out."""
    import re
    import subprocess

    from release.builder.collect import unnamed_files
    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"### Next version\n\n```bash\n(.*?)```", readme, re.DOTALL)
    assert block, "README has no Next version block"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "results.tsv").write_text((example.parent / "results.tsv").read_text() + "extra\n")
    monkeypatch.chdir(tmp_path)
    for line in lines:
        if line.startswith("hf-release init"):
            run = cli(capsys, *line.split()[1:])
            assert run.code == 0, run.err
        elif line.startswith("hf-release"):
            assert line.split()[1] in ("build", "push"), line  # run end to end by the test above
        else:
            subprocess.run(["bash", "-ec", line], cwd=tmp_path, check=True)
    spec = load_spec(tmp_path / "artifacts" / "v6" / "release.toml")
    assert "results.tsv" in [f.source for f in spec.files]  # v6's own, not ../v5/results.tsv
    assert unnamed_files(spec, {(spec.root / f.source) for f in spec.files if "*" not in f.source}) == []


def test_the_keyless_signer_follows_the_version(example: Path, tmp_path: Path) -> None:
    """v5 is signed by the workflow run of tag v5; v6's card must name the v6 tag's run, never v5's."""
    from release.errors import InputError

    identity = "https://github.com/spark-lab/hf-release/.github/workflows/release.yml@refs/tags/"
    edit(
        example,
        "[card.license]",
        f'[card.signature]\nmethod = "sigstore"\nidentity = "{identity}v5"\n'
        'issuer = "https://token.actions.githubusercontent.com"\n\n[card.license]',
    )
    spec = init_from_previous(tmp_path, "v6", "v5").spec
    assert load_spec(spec).card["signature"]["identity"] == identity + "v6"
    edit(spec, f"{identity}v6", f"{identity}v5")  # copied by hand instead
    with pytest.raises(
        InputError, match=r"release.toml:\d+ card.signature.identity: names the tag v5, but this release is v6"
    ):
        load_spec(spec)


def test_evidence_of_other_weights_is_never_this_versions(example: Path, tmp_path: Path) -> None:
    """v6 ships new weights and keeps v5's bench files: build refuses them as v6's evidence until the spec
    declares that they still apply, and the card then says they were measured on v5."""
    dist = tmp_path / "dist"
    build(load_spec(example), dist)
    (tmp_path / "artifacts" / "v6").mkdir()
    weights = bytearray((example.parent / "model.safetensors").read_bytes())
    weights[-1] ^= 1  # other weights, same header
    (tmp_path / "artifacts" / "v6" / "model.safetensors").write_bytes(bytes(weights))
    spec = init_from_previous(tmp_path, "v6", "v5").spec
    assert 'label = "v5"' in spec.read_text()  # the reused bench files keep the version that measured them
    with pytest.raises(CheckFailed) as refused:
        build(load_spec(spec), dist)
    stale = sorted(p.file for p in refused.value.problems)
    assert stale == [
        "glm53-v5-champion.json",
        *(f"glm53-v5-recheck-{n}-{side}.json" for n in (1, 2, 3) for side in ("adapter", "stock")),
    ]
    assert all(
        "measured on v5 and unchanged since, but the model changed since v5" in p.message
        for p in refused.value.problems
    )
    with spec.open("a") as f:
        f.write(
            '\n[[card.still_applies]]\nfiles = ["glm53-v5-*.json"]\nreason = "the new weights differ in one value"\n'
        )
    v6 = build(load_spec(spec), dist)
    card = (v6.dist / "README.md").read_text()
    assert "`glm53-v5-champion.json`, `glm53-v5-recheck-1-adapter.json`" in card
    assert (
        "`glm53-v5-recheck-3-stock.json` measured on v5; the weights changed since; the authors state it still "
        "applies: "
        "the new weights differ in one value" in card
    )
    assert "tok/s v6" not in card and "v6 vs v4" not in card
    record = json.loads((v6.dist / "release.json").read_text())["evidence"]
    assert record["glm53-v5-champion.json"]["measured_on"] == "v5"


def test_another_kinds_folders_follow_the_detected_kind(tmp_path: Path) -> None:
    """1_Pooling/ and 2_Normalize/ without the modules.json that makes a sentence-transformers release: the release
    is transformers, those files are extra (said why), and the spec init wrote builds."""
    from tests.helpers import ROOT

    model = tmp_path / "model"
    shutil.copytree(ROOT / "tests" / "fixtures" / "libraries" / "sentence-transformers", model)
    (model / "modules.json").unlink()
    (model / "README.md").unlink()
    shutil.copy(EXAMPLE / "LICENSE", model / "LICENSE")
    result = init_from_files(tmp_path, "v1", model, "acme/st")
    assert result.kind == "transformers"
    roles = {d.path.relative_to(model).as_posix(): (d.role, d.why) for d in result.files}
    assert roles["1_Pooling/config.json"][0] == "extra" and roles["sentence_bert_config.json"][0] == "extra"
    assert "but this release is transformers" in roles["1_Pooling/config.json"][1]
    build(load_spec(result.spec), tmp_path / "dist")


def test_a_folder_name_writes_no_toml(tmp_path: Path) -> None:
    """A newline, a quote and a bracket in the folder's name (said in comments) stay in their comment."""
    name = 'evil"]\n[release]\nkind = "sentence-transformers"\n["x'
    model = transformers_folder(tmp_path / name)
    (model / "LICENSE").unlink()  # the no-license block names the folder too
    result = init_from_files(tmp_path, "v1", model, "acme/llama-mini")
    data = tomllib.loads(result.spec.read_text())
    assert set(data) == {"release", "files", "card"}
    assert data["release"] == {"repo_id": "acme/llama-mini", "version": "v1"}
    assert all(Path(f["source"]).parent == model.resolve() for f in data["files"])  # values written by tomlkit
    assert "\\n[release]\\nkind" in result.spec.read_text()  # the name, escaped, in the comments


def test_a_name_that_is_not_utf8_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder or file name that is not UTF-8 (bytes os.fsdecode keeps as surrogates) cannot be written in TOML: one
    line per name, exit 2, and no empty spec left behind to block the next init."""
    import os

    monkeypatch.chdir(tmp_path)
    folder = transformers_folder(tmp_path / os.fsdecode(b"bad\xffname"))
    run = cli(capsys, "init", "v1", "--files", folder, "--repo-id", "acme/llama-mini")
    assert run.code == 2 and "Traceback" not in run.err
    (line,) = run.err.strip().splitlines()
    assert line.endswith(
        "/bad\\xffname: its name is not UTF-8, which neither a release spec (TOML) nor the Hub can hold; rename it"
    )
    assert not (tmp_path / "artifacts" / "v1").exists()
    model = transformers_folder(tmp_path / "model")
    shutil.copy(model / "config.json", model / os.fsdecode(b"old\xfe.json"))
    run = cli(capsys, "init", "v1", "--files", model, "--repo-id", "acme/llama-mini")
    assert run.code == 2 and "old\\xfe.json: its name is not UTF-8" in run.err
    (model / os.fsdecode(b"old\xfe.json")).unlink()
    assert cli(capsys, "init", "v1", "--files", model, "--repo-id", "acme/llama-mini").code == 0


def test_init_says_at_once_that_there_is_no_license(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = transformers_folder(tmp_path / "model")
    monkeypatch.chdir(tmp_path)
    licensed = cli(capsys, "init", "v1", "--files", model, "--repo-id", "acme/llama-mini")
    assert licensed.code == 0 and "no license" not in licensed.out
    (model / "LICENSE").unlink()
    run = cli(capsys, "init", "v2", "--files", model, "--repo-id", "acme/llama-mini")
    assert run.code == 0
    (line,) = [line for line in run.out.splitlines() if "no license" in line]
    assert "[card.license]" in line and "LICENSE" in line and 'role "license"' in line


def test_advice_names_only_options_init_has(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every --option init's words name (its messages in release/init/ and its CLI, and what it prints on refusals
    and successes) is an option of init, or of the hf-release command the same words name."""
    import ast
    import inspect
    import re

    import click

    from release.cli import calls, results
    from release.cli.app import cli as app
    from tests.helpers import ROOT

    def options(command: str) -> set[str]:
        found = app.commands[command] if isinstance(app, click.Group) else None
        assert isinstance(found, click.Command), command
        return {o for p in found.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")} | {"--help"}

    def checked(text: str) -> list[str]:
        commands = re.findall(r"hf-release (\w+)", text)
        allowed = set().union(*(options(c) for c in {"init", *commands} if c in app.commands))
        return [o for o in re.findall(r"(?<![\w-])--[a-z][a-z-]*", text) if o not in allowed]

    sources = [*sorted((ROOT / "release" / "init").glob("*.py")), ROOT / "release" / "cli" / "init.py"]
    texts = [inspect.getsource(calls.init), inspect.getsource(results.Initialized)]
    texts += [p.read_text() for p in sources]
    wrong = {
        node.value: checked(node.value)
        for text in texts
        for node in ast.walk(ast.parse(text.strip() if text.startswith(" ") else text))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and checked(node.value)
    }
    assert wrong == {}
    monkeypatch.chdir(tmp_path)
    model = transformers_folder(tmp_path / "model")
    (model / "checkpoint-2").mkdir()
    shutil.copy(model / "config.json", model / "checkpoint-2" / "config.json")
    for args in (
        ["init", "v7", "--from", "v6"],  # no such version: no `--spec`, which init has not
        ["init", "v7", "--files", model],
        ["init", "v7", "--files", model, "--repo-id", "acme/x", "--from", "v5"],
        ["init", "v7", "--from", "v5", "--include", "*"],
        ["init", "v8", "--files", model, "--repo-id", "acme/x"],
    ):
        run = cli(capsys, *args)
        assert checked(run.out + run.err) == [], (args, run.out + run.err)
    assert "--spec" not in cli(capsys, "init", "v9", "--from", "v6").err


def test_copied_prose_with_numbers_is_said(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "init", "v6", "--from", "v5")
    assert run.code == 0
    (line,) = [line for line in run.out.splitlines() if "re-read" in line]
    assert line.startswith("  copied v5's prose with numbers in it (card.summary") and "written about v5" in line
    assert "card.title" not in line  # the title names the version only
    from release.card.headings import PROSE_SECTIONS
    from release.init import READER_PROSE

    assert set(READER_PROSE) == set(PROSE_SECTIONS)
