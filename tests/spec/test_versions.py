"""Version rules: a valid git tag name without '/', the same everywhere, checked when the spec is read;
natural order to find the previous version."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from release.errors import InputError
from release.localhub import LocalHub
from release.spec import load_spec
from release.spec.versions import previous_version, sort_versions, version_problem
from tests.helpers import cli, edit

NAMES = [
    "v5",
    "1.0.0",
    "2026-11-30",
    "v5-rc.1",
    "release_7",
    "v5.lock",
    "v5.",
    ".v5",
    "v..5",
    "v5 x",
    "v5~1",
    "v5^",
    "v:5",
    "v5?",
    "v5*",
    "v[5]",
    "v5\\",
    "@",
    "v@{5}",
    "v\x01",
    "a/b",
    "v5/",
    "-v5",
    "v5@",
    "ü1",
    "v5.lock.x",
    # git accepts these, the Hub does not (issue 23): refused when the spec is read
    "v1#rc",
    "v1;x",
    "v1$(touch${IFS}x)",
    "v1`x`",
    "v1&x",
    "v1|x",
    "v1!",
    "v{1}",
    "v<1>",
    "v1'x",
    "v1+cu121",
]
HUB_TAG = re.compile(r"[A-Za-z0-9._-]+")


def git_accepts(name: str) -> bool:
    """As a tag (refs/tags/NAME) and as a name on its own (which refuses '@')."""
    return all(
        subprocess.run(["git", "check-ref-format", *args], capture_output=True).returncode == 0
        for args in (["--allow-onelevel", name], [f"refs/tags/{name}"])
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_version_is_a_git_tag_name_without_a_slash(name: str) -> None:
    ours = version_problem(name) is None
    expected = (
        git_accepts(name)
        and "/" not in name
        and not name.startswith("-")  # '-x' reads as an option
        and HUB_TAG.fullmatch(name) is not None
    )
    assert ours == expected, (name, version_problem(name))


def test_natural_order_finds_the_previous_version() -> None:
    assert sort_versions(["v10", "v6", "v5"]) == ["v5", "v6", "v10"]
    assert sort_versions(["1.10.0", "1.2.0", "1.9.1"]) == ["1.2.0", "1.9.1", "1.10.0"]
    assert previous_version("v10", ["v5", "v6", "v10", "v11"]) == "v6"
    assert previous_version("1.10.0", ["1.2.0", "1.10.0"]) == "1.2.0"
    assert previous_version("2026-11-30", ["2026-09-01", "2026-12-01"]) == "2026-09-01"
    assert previous_version("v5", ["v5", "v6"]) is None


@pytest.mark.parametrize("version", ["1.0.0", "2026-11-30"])
def test_versions_without_a_v_build(version: str, example: Path, tmp_path: Path) -> None:
    folder = example.parent.rename(example.parent.with_name(version))
    edit(folder / "release.toml", 'version = "v5"', f'version = "{version}"')
    assert load_spec(folder / "release.toml").version == version


@pytest.mark.parametrize("bad", ["v5.lock", "v5 final", "v5/x", "v5..6", "v1#rc", "v1$(touch${IFS}x)"])
def test_an_invalid_tag_name_fails_when_the_spec_is_read(bad: str, example: Path) -> None:
    edit(example, 'version = "v5"', f'version = "{bad}"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    (problem,) = exc.value.problems
    assert problem.file.endswith("release.toml:6 release.version") and "also the Hub tag" in problem.message


def test_folder_and_version_must_agree_before_anything_is_hashed(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`build v7` with a spec saying v5 must not build (or overwrite) dist/v5."""
    v7 = example.parent.with_name("v7")
    shutil.copytree(example.parent, v7)
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "v7")
    assert run.code == 2
    (line,) = run.err.strip().splitlines()
    assert "release.toml:6 release.version: says 'v5' but the spec is in artifacts/v7/" in line
    assert not (tmp_path / "dist").exists()


def test_command_line_version_and_spec_must_agree(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli(capsys, "build", "v6", "--spec", str(example))
    assert run.code == 2
    assert "says version 'v5', the command line 'v6'" in run.err


@pytest.mark.parametrize("version", ["../v5", "v5.lock"])
def test_a_bad_version_argument_is_refused(
    version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "artifacts").mkdir()
    monkeypatch.chdir(tmp_path)
    for command in (["build", version], ["verify", version]):
        run = cli(capsys, *command)
        assert run.code == 2
        assert run.err.startswith(f"VERSION: version {version!r} ")


def test_a_card_presenting_another_version_as_this_one(built: Path) -> None:
    from release.spec.versions import presented_versions

    card = (built / "README.md").read_text()
    assert presented_versions(card, "v5", ["v4", "v5", "v6"]) == []  # "the v4 evidence" is prose, not a claim
    stale = presented_versions(card, "v6", ["v4", "v5", "v6"])  # v6 built from v5's spec with only the version changed
    messages = [message for _, message in stale]
    assert "the title names v5, but this release is v6" in messages
    assert messages.count("the revision to use is v5, but this release is v6") >= 3  # pin, download, launcher
    assert all(card.splitlines()[line - 1] for line, _ in stale)


def test_a_card_naming_the_previous_version_fails_the_build(
    example: Path, tmp_path: Path, hub: LocalHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """v6 copied from v5 with only the version changed: its card would say "(v5)" and "Pin … `v5`"."""
    v6 = example.parent.with_name("v6")
    shutil.copytree(example.parent, v6)
    edit(v6 / "release.toml", 'version = "v5"', 'version = "v6"')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)  # v5 is not staged: build asks the Hub (here the local one) for it
    run = cli(capsys, "build", "v6")
    assert run.code == 1
    lines = run.err.strip().splitlines()
    assert any(
        line.startswith("README.md:") and "the title names v5, but this release is v6" in line for line in lines
    ), lines
    assert any("the revision to use is v5, but this release is v6" in line for line in lines), lines
    assert not (tmp_path / "dist" / "v6").exists()


def test_a_staged_folder_renamed_by_hand_is_not_verified_or_pushed(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(built, tmp_path / "dist" / "v7")
    (tmp_path / "artifacts").mkdir()
    monkeypatch.chdir(tmp_path)
    for command in (["verify", "v7"], ["push", "v7", "--dry-run"]):
        run = cli(capsys, *command)
        assert run.code == 2
        assert "holds the release of 'v5', not 'v7'" in run.err
