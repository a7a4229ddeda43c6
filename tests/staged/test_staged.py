"""Build replaces only a staged release it wrote itself: never the user's sources or unrelated folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import EXAMPLE, cli, edit


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder holding a copy of the example under artifacts/v5; the current folder."""
    shutil.copytree(EXAMPLE, tmp_path / "artifacts" / "v5")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("broken", [False, True], ids=["passing-spec", "failing-spec"])
def test_dist_equal_to_the_spec_folder_is_refused_and_nothing_is_touched(project: Path, capsys, broken: bool) -> None:
    sources = project / "artifacts" / "v5"
    if broken:
        (sources / "config.json").write_text("{ not json")  # loads as a spec, fails a check
    before = _snapshot(sources)
    run = cli(capsys, "build", "v5", "--dist", "artifacts")
    assert run.code == 2, run
    assert "is the spec's folder" in run.err and "--dist" in run.err
    assert "Traceback" not in run.err
    assert _snapshot(sources) == before
    assert not list((project / "artifacts").glob(".v5*")), "nothing may be written beside the sources"


def test_unrelated_folder_under_dist_is_kept(project: Path, capsys) -> None:
    thesis = project / "other" / "v5" / "thesis.txt"
    thesis.parent.mkdir(parents=True)
    thesis.write_text("four years of work\n")
    run = cli(capsys, "build", "v5", "--dist", "other")
    assert run.code == 2, run
    assert "no hf-release staging record" in run.err
    assert thesis.read_text() == "four years of work\n"
    assert sorted(p.name for p in (project / "other").iterdir()) == ["v5"]


def test_another_versions_user_folder_is_not_replaced(project: Path, capsys) -> None:
    """A spec saying v4 under artifacts/v5/ may not replace a dist/v4 that hf-release did not stage."""
    edit(project / "artifacts" / "v5" / "release.toml", 'version = "v5"', 'version = "v4"')
    mine = project / "dist" / "v4" / "notes.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n")
    run = cli(capsys, "build", "v5", "--dist", "dist")
    assert run.code == 2, run
    assert mine.read_text() == "mine\n"


def test_dist_inside_the_spec_folder_is_refused(project: Path, capsys) -> None:
    run = cli(capsys, "build", "v5", "--dist", "artifacts/v5/dist")
    assert run.code == 2, run
    assert "lies inside the spec's folder" in run.err
    assert not (project / "artifacts" / "v5" / "dist").exists()


def test_dist_holding_the_spec_folder_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    """`DIST/VERSION` contains the spec's folder: replacing it would delete the sources."""
    shutil.copytree(EXAMPLE, tmp_path / "rel" / "v5" / "spec")
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "--spec", "rel/v5/spec/release.toml", "--dist", "rel")
    assert run.code == 2, run
    assert "holds the spec's folder" in run.err
    assert (tmp_path / "rel" / "v5" / "spec" / "model.safetensors").is_file()


def test_own_staging_with_a_foreign_file_is_not_replaced(project: Path, capsys) -> None:
    assert cli(capsys, "build", "v5").code == 0
    foreign = project / "dist" / "v5" / "my-notes.txt"
    foreign.write_text("do not delete\n")
    run = cli(capsys, "build", "v5")
    assert run.code == 2, run
    assert "holds files hf-release did not write (my-notes.txt)" in run.err
    assert foreign.read_text() == "do not delete\n"


def test_staging_without_a_valid_manifest_is_not_replaced(project: Path, capsys) -> None:
    """The record alone is a file name a user could also have: the manifest must be valid too."""
    assert cli(capsys, "build", "v5").code == 0
    manifest = project / "dist" / "v5" / "release.json"
    manifest.write_text(manifest.read_text().replace('"version": "v5"', '"version": "v5-edited"', 1))
    run = cli(capsys, "build", "v5")
    assert run.code == 2, run
    assert "holds no valid release.json" in run.err
    assert (project / "dist" / "v5" / "model.safetensors").is_file()


def test_own_staging_is_replaced_on_success_and_removed_on_failure(project: Path, capsys) -> None:
    assert cli(capsys, "build", "v5").code == 0
    assert cli(capsys, "build", "v5").code == 0, "a rebuild replaces hf-release's own staging"
    (project / "artifacts" / "v5" / "config.json").write_text("{ not json")
    assert cli(capsys, "build", "v5").code == 1
    assert not (project / "dist" / "v5").exists(), "a failed build leaves no staging a push could mistake for good"
    assert not [p.name for p in (project / "dist").iterdir() if p.name.startswith(".v5.") and p.is_dir()]
    assert (project / "artifacts" / "v5" / "model.safetensors").is_file()


def test_a_glob_learns_the_real_folder_of_each_match(tmp_path: Path) -> None:
    """What check_destination keeps the staging out of: a symlink's target folder, a folder the glob matched, and
    the real path of a folder reached through a symlink (builder/collect.py resolve_sources)."""
    from release.builder.collect import resolve_source

    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "real" / "file.bin").write_bytes(b"x")
    (tmp_path / "elsewhere" / "target.bin").write_bytes(b"y")
    (tmp_path / "real" / "link.bin").symlink_to(tmp_path / "elsewhere" / "target.bin")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    folders: set[str] = set()
    found, why = resolve_source(tmp_path, str(tmp_path / "via" / "*"), tmp_path, {}, folders)
    assert why is None and [Path(f).name for f in found] == ["file.bin", "link.bin"]
    assert folders == {str(tmp_path / "real"), str(tmp_path / "elsewhere")}


def test_a_dist_holding_the_target_folder_of_a_globbed_symlink_is_refused(project: Path, capsys) -> None:
    """A glob's match that is a symlink makes its target's folder a source folder: staging over it is refused."""
    data = project / "elsewhere" / "v5" / "data"
    data.mkdir(parents=True)
    (data / "real.bin").write_bytes(b"real")
    (project / "links").mkdir()
    (project / "links" / "one.bin").symlink_to(data / "real.bin")
    spec = project / "artifacts" / "v5" / "release.toml"
    spec.write_text(
        spec.read_text() + f'\n[[files]]\nsource = "{project}/links/*.bin"\npath_in_repo = "data/"\nrole = "extra"\n'
    )
    run = cli(capsys, "build", "v5", "--dist", "elsewhere")
    assert run.code == 2, run
    assert f"holds a source's folder ({data})" in run.err
    assert (data / "real.bin").read_bytes() == b"real"
