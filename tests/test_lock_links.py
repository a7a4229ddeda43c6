"""Locks and the digest record never write through a symlink (issue 38): a link planted at their names in a shared
staging folder is refused and the file it names is left as it was; a record that cannot be saved after the release
is in place is a warning, exit 0."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.helpers import cli

PRECIOUS = b"someone's file, not hf-release's\n"


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_bytes(PRECIOUS)
    return path


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The build's warnings, not its notes (collect's "note: … staged as hard links" on a filesystem without
    copy-on-write clones)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and not r.getMessage().startswith("note:")
    ]


def test_a_symlink_at_the_version_lock_is_refused_and_its_target_untouched(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dist, target = tmp_path / "dist", victim(tmp_path)
    dist.mkdir()
    (dist / ".v5.lock").symlink_to(target)
    code, _, err = cli(capsys, "build", "v5", "--spec", example, "--dist", dist)
    assert code == 2 and ".v5.lock" in err and "symbolic link" in err and "Traceback" not in err
    assert target.read_bytes() == PRECIOUS and (dist / ".v5.lock").is_symlink()
    assert not (dist / "v5").exists()


def test_a_symlink_at_the_digest_lock_leaves_its_target_and_the_build_succeeds_with_a_warning(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    dist, target = tmp_path / "dist", victim(tmp_path)
    dist.mkdir()
    (dist / ".hf-release-digests.lock").symlink_to(target)
    code, _, err = cli(capsys, "build", "v5", "--spec", example, "--dist", dist)
    assert code == 0, err
    assert target.read_bytes() == PRECIOUS and (dist / ".hf-release-digests.lock").is_symlink()
    [warned] = warnings(caplog)
    assert ".hf-release-digests" in warned and "symbolic link" in warned and "digest record was not saved" in warned
    assert (dist / "v5" / "release.json").is_file()


def test_a_digest_record_that_cannot_be_saved_is_a_warning_and_exit_0(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    dist = tmp_path / "dist"
    (dist / ".hf-release-digests").mkdir(parents=True)  # a folder where the record goes: the replace fails
    code, _, err = cli(capsys, "build", "v5", "--spec", example, "--dist", dist)
    assert code == 0, err
    [warned] = warnings(caplog)
    assert f"{dist / '.hf-release-digests'}: the digest record was not saved" in warned
    assert (dist / "v5" / "release.json").is_file()


def test_a_symlink_at_the_digest_record_is_not_read(tmp_path: Path) -> None:
    from release.staged.digest_record import HEADER, DigestRecord

    target = tmp_path / "elsewhere.txt"
    target.write_text(HEADER + f"1 2 3 4 5 6 {'a' * 64} - -\n")
    (tmp_path / ".hf-release-digests").symlink_to(target)
    assert not DigestRecord(tmp_path).holds_any
