"""What each command says and exits with, on the example built and published once (tests/cli/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, TOKEN, cli


def test_card_diff_exits_1_on_a_difference(
    published: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = published
    staged_card = root / "dist" / "v5" / "README.md"
    code, out, _ = cli(capsys, "card", "v5", "--root", str(root), "--diff", str(staged_card))
    assert code == 0 and out.startswith("no difference from ")
    edited = tmp_path / "README.md"
    edited.write_text(staged_card.read_text().replace("# ", "# Edited ", 1))
    code, out, _ = cli(capsys, "card", "v5", "--root", str(root), "--diff", str(edited))
    assert code == 1 and "+# " in out and "-# Edited" in out  # the diff, then exit 1, as `diff` does
    code, out, _ = cli(capsys, "card", "v5", "--root", str(root), "--diff", str(edited), "--format", "agent")
    assert code == 1 and out.strip().endswith(f"against={edited} differs=true")


def test_push_dry_run_without_a_token_says_what_it_did_not_check(
    published: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root, hub = published
    code, out, _ = cli(capsys, "push", "v5", "--root", str(root), "--dry-run", "--endpoint", hub.url)
    assert code == 0
    assert "not checked: the token and its write permission" in out and "needs a token with write access" in out
    code, out, _ = cli(capsys, "push", "v5", "--root", str(root), "--dry-run", "--endpoint", hub.url, "--token", TOKEN)
    assert code == 0 and "not checked" not in out


def test_push_dry_run_quiet_is_one_path_a_line(published: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    root, hub = published
    code, out, _ = cli(
        capsys, "push", "v5", "--root", str(root), "--dry-run", "--endpoint", hub.url, "--token", TOKEN, "-q"
    )
    assert code == 0 and out == ""  # published with exactly these files: nothing to commit
    code, out, _ = cli(
        capsys,
        "push",
        "v5",
        "--root",
        str(root),
        "--dry-run",
        "--endpoint",
        hub.url,
        "--token",
        TOKEN,
        "--format",
        "agent",
    )
    first, *files = out.splitlines()
    assert first.startswith(f"url={hub.url}/{REPO} version=v5 dry_run=true tag_action=keep ")
    assert len(files) == 18 and all(line.startswith("action=same path=") for line in files)


def test_status_of_a_private_repo_without_a_token_cannot_see_it(
    published: tuple[Path, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    root, hub = published
    code, out, err = cli(capsys, "status", "--root", str(root), "--endpoint", hub.url)
    assert code == 3 and out.startswith("v5 ") and "not published" not in err + out  # the local rows, then why
    assert err.startswith(f"{REPO}: cannot be seen without a token") and "--local" in err
    code, out, _ = cli(capsys, "status", "--root", str(root), "--endpoint", hub.url, "--token", TOKEN, "-q")
    assert code == 0 and out == "v5\n"  # one version a line


def test_status_offline_reports_the_local_state(
    published: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import constants

    root, hub = published
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # what HF_HUB_OFFLINE=1 sets when huggingface_hub loads
    code, out, _ = cli(capsys, "status", "--root", str(root), "--endpoint", hub.url, "--token", TOKEN)
    assert code == 0, out
    assert out.splitlines() == [
        "HF_HUB_OFFLINE is set: the Hub was not asked; the local state only",
        "v5             spec ok       staged, unchanged since build; not checked",
    ]


def test_a_local_edit_is_named_as_the_local_staging_not_the_hub(
    published: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SHA256SUMS edited in the staged release: the Hub still matches release.json; status and push name the
    staged file, and push does not advise --force-tag."""
    root, hub = published
    dist = tmp_path / "dist"
    shutil.copytree(root / "dist" / "v5", dist / "v5")
    shutil.copy2(root / "dist" / ".v5.stat.json", dist / ".v5.stat.json")
    token_file = _token_file(tmp_path)
    with (dist / "v5" / "SHA256SUMS").open("a") as sums:
        sums.write("# checked by hand\n")
    common = ["--root", str(root), "--dist", str(dist), "--endpoint", hub.url, "--token-file", str(token_file)]
    code, out, _ = cli(capsys, "status", *common)
    assert code == 1 and "staged, CHANGED since build; published at" in out and "Hub files match" in out, out
    assert "v5/SHA256SUMS: changed since build" in out and "differs" not in out
    code, _, err = cli(capsys, "push", "v5", *common)
    assert code == 4 and err.startswith("SHA256SUMS: changed since build") and "--force-tag" not in err, err


def test_error_wording(published: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from release.builder.previous import find_previous
    from release.errors import InputError

    root, hub = published
    code, _, err = cli(capsys, "hash", str(root / "artifacts" / "v5"))
    assert code == 2 and "is a folder; name its files" in err and "no such file" not in err
    code, _, err = cli(
        capsys,
        "verify",
        "v5",
        "--root",
        str(root),
        "--remote",
        "--revision",
        "nosuch",
        "--endpoint",
        hub.url,
        "--token-file",
        str(_token_file(tmp_path)),
    )
    assert code == 1 and "has no tag or branch 'nosuch'; check --revision (it has: v5, main)" in err, err
    assert "push the release first" not in err
    for dist, suggestion in (
        (root / "dist", "name a version before v5, one staged in"),
        (tmp_path, "name a version before v5, one staged in"),
    ):
        with pytest.raises(InputError) as refused:
            find_previous("v5", dist, "v5", None, REPO)
        assert suggestion in str(refused.value) and "e.g. v5" not in str(refused.value)
    (tmp_path / "v4").mkdir()
    shutil.copy2(root / "dist" / "v5" / "release.json", tmp_path / "v4" / "release.json")
    with pytest.raises(InputError) as refused:
        find_previous("v5", tmp_path, "v6", None, REPO)
    assert "comes after v5; name a version before v5, e.g. v4, hub:v4 or spec:v4" in str(refused.value)


def _token_file(folder: Path) -> Path:
    path = folder / "token"
    path.write_text(TOKEN)
    return path
