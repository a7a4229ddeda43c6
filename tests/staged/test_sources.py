"""The spec's sources against the staging (issue 38, item 10), and what `status` says of a local change or an
unreachable Hub (issue 38, the new user's list). Real files and real hard links: a copy of the session's build."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from release.localhub import LocalHub
from tests.helpers import REPO, TOKEN, cli, edit


def replaced(path: Path, data: bytes) -> None:
    """What save_pretrained does: a new file written beside, then renamed over the old one (a new inode)."""
    new = path.with_name(path.name + ".new")
    new.write_bytes(data)
    os.replace(new, path)


def same_size_other_bytes(path: Path) -> bytes:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    return bytes(data)


def test_status_names_a_source_replaced_since_build(
    built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = built_copy / "artifacts" / "v5" / "model.safetensors"
    staged = built_copy / "dist" / "v5" / "model.safetensors"
    assert os.path.samefile(weights, staged)  # build's hard link
    monkeypatch.chdir(built_copy)
    assert cli(capsys, "status", "--local").code == 0
    replaced(weights, same_size_other_bytes(weights))  # same size: decided by hashing
    replaced(built_copy / "artifacts" / "v5" / "results.tsv", b"other results\n")  # another size: no hashing
    run = cli(capsys, "status", "--local")
    assert run.code == 1, run.out
    assert "sources CHANGED since build" in run.out
    for name in ("model.safetensors", "results.tsv"):
        assert any(name in line and "source changed since build" in line for line in run.out.splitlines()), run.out
    assert "hf-release build v5" in run.out
    document = json.loads(cli(capsys, "status", "--local", "--json").out)
    assert document["versions"][0]["sources"] == "changed" and document["versions"][0]["staged"] == "verified"


def test_sources_not_here_are_reported_not_refused(
    built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (built_copy / "artifacts" / "v5" / "model.safetensors").unlink()  # weights not in the checkout
    monkeypatch.chdir(built_copy)
    run = cli(capsys, "status", "--local")
    assert run.code == 0 and "model.safetensors: not here, so not compared" in run.out, run.out


def test_status_local_exits_1_naming_a_staged_file_changed(
    built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with (built_copy / "dist" / "v5" / "results.tsv").open("a") as f:
        f.write("\n")
    monkeypatch.chdir(built_copy)
    run = cli(capsys, "status", "--local")
    assert run.code == 1 and "staged, CHANGED since build" in run.out
    assert any("v5/results.tsv" in line and "changed since build" in line for line in run.out.splitlines())


def test_status_with_the_hub_unreachable_prints_the_local_rows_then_one_line(
    built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(built_copy)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    run = cli(capsys, "status", "--endpoint", "http://127.0.0.1:9")
    assert run.code == 3, (run.out, run.err)
    [row] = run.out.splitlines()
    assert row.startswith("v5") and "staged, unchanged since build" in row
    [line] = run.err.splitlines()
    assert "cannot reach the Hub" in line and "local state only" in line, run.err


def test_push_refuses_a_source_replaced_since_build(
    hub: LocalHub,
    built_copy: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replaced(
        built_copy / "artifacts" / "v5" / "model.safetensors",
        same_size_other_bytes(built_copy / "dist" / "v5" / "model.safetensors"),
    )
    monkeypatch.chdir(built_copy)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    commits = hub.stats.commits
    run = cli(capsys, "push", "v5", "--endpoint", hub.url)
    assert run.code == 4, run.err
    assert "model.safetensors: source changed since build" in run.err and "hf-release build v5" in run.err
    assert hub.stats.commits == commits
    # a staging handed over without its sources (the release workflow): reported, pushed
    os.unlink(built_copy / "artifacts" / "v5" / "model.safetensors")
    run = cli(capsys, "push", "v5", "--endpoint", hub.url)
    assert run.code == 0, run.err
    assert "model.safetensors: not here, so not compared" in caplog.text
    assert REPO in run.out


def test_staging_links_where_the_filesystem_cannot_clone(tmp_path: Path) -> None:
    """ext4 and tmpfs make no copy-on-write clone: the hard link stays (never a copy), and no clone is tried
    again; across filesystems, a copy."""
    from release.builder.collect import CLONED, COPIED, LINKED, Stager

    for folder in (tmp_path, Path("/dev/shm")):
        if not folder.is_dir():
            continue
        source = folder / f"hf-release-test-{os.getpid()}.bin"
        source.write_bytes(b"weights")
        try:
            stager = Stager()
            how = stager.stage(str(source), str(tmp_path / f"staged-{folder.name}"))
            if folder == tmp_path:
                assert how in (CLONED, LINKED)
                assert (how == LINKED) == os.path.samefile(source, tmp_path / f"staged-{folder.name}")
                assert how == CLONED or not stager.may_clone
            elif os.stat(folder).st_dev != os.stat(tmp_path).st_dev:
                assert how == COPIED
        finally:
            source.unlink()


def test_build_says_once_that_the_staging_is_hard_links(
    built_copy: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On ext4 or tmpfs (no clones) an edit of dist/ is an edit of the user's file: build says so, once."""
    monkeypatch.chdir(built_copy)
    run = cli(capsys, "build", "v5")
    assert run.code == 0, run.err
    notes = [r.getMessage() for r in caplog.records if "staged as hard links" in r.getMessage()]
    assert len(notes) == 1 and "edits your own file" in notes[0], notes


def test_a_file_a_glob_matches_now_but_build_did_not_stage_is_a_change(
    built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`glm53-v*.json` matching a file written after build (as save_pretrained writes new shards) is a change; a
    staged file the glob no longer matches is reported as not here, never refused."""
    v5 = built_copy / "artifacts" / "v5"
    monkeypatch.chdir(built_copy)
    (v5 / "glm53-v4-cudagraphs.json").unlink()
    run = cli(capsys, "status", "--local")
    assert run.code == 0, run.out
    assert "glm53-v4-cudagraphs.json (staged; no source names it now): not here" in run.out
    shutil.copy(v5 / "glm53-v5-champion.json", v5 / "glm53-v5-recheck-4-stock.json")
    run = cli(capsys, "status", "--local")
    assert run.code == 1 and "sources CHANGED since build" in run.out, run.out
    [line] = [line for line in run.out.splitlines() if "glm53-v5-recheck-4-stock.json" in line]
    assert "source changed since build (new: release.toml files[4] (glm53-v*.json) names it" in line, line
    assert "hf-release build v5" in line


def test_push_refuses_a_spec_edited_since_build(
    hub: LocalHub, built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spec is the build's first source: pushing the staging of the spec as it was publishes a card and
    files the user no longer means."""
    edit(built_copy / "artifacts" / "v5" / "release.toml", 'version = "v5"', 'version = "v5"  # edited')
    monkeypatch.chdir(built_copy)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    commits = hub.stats.commits
    run = cli(capsys, "push", "v5", "--endpoint", hub.url)
    assert run.code == 4, run.err
    assert "release.toml: source changed since build (the spec was edited" in run.err, run.err
    assert "hf-release build v5" in run.err and hub.stats.commits == commits
    run = cli(capsys, "status", "--local")
    assert run.code == 1 and "(spec edited since build); sources CHANGED since build" in run.out, run.out


def test_status_hashes_replaced_sources_within_its_bound_push_always(
    hub: LocalHub, built_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model saved again (each file replaced, same size) is not read whole by every `status`: past the bound it
    says it did not tell; push hashes it and refuses what differs."""
    import release.staged.sources as sources

    v5 = built_copy / "artifacts" / "v5"
    replaced(v5 / "model.safetensors", same_size_other_bytes(v5 / "model.safetensors"))
    replaced(v5 / "config.json", (v5 / "config.json").read_bytes())  # saved again, byte for byte
    monkeypatch.setattr(sources, "STATUS_HASH_BYTES", (v5 / "config.json").stat().st_size)  # the smaller only
    monkeypatch.chdir(built_copy)
    run = cli(capsys, "status", "--local")
    assert run.code == 0 and "a source not told (see its note)" in run.out, run.out
    assert "model.safetensors: replaced since build by a file of the same size, not hashed" in run.out
    assert "config.json" not in run.out  # hashed within the bound: the same bytes
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    run = cli(capsys, "push", "v5", "--endpoint", hub.url)
    assert run.code == 4 and "model.safetensors: source changed since build (sha256" in run.err, run.err
    assert "config.json" not in run.err
