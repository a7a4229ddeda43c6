"""A secret never rides along (issue 38, item 2): init refuses a symlink whose file lies outside --files, and build
refuses a text file holding the user's own token or a string shaped like a Hugging Face token, naming the file,
never the token."""

from __future__ import annotations

import secrets
import string
from pathlib import Path

import pytest

from tests.helpers import REPO, cli, transformers_folder

SHAPED = "hf_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(34))


def test_init_refuses_a_symlink_that_leaves_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "home" / ".cache" / "huggingface" / "token"
    token.parent.mkdir(parents=True)
    token.write_text(SHAPED)
    model = transformers_folder(tmp_path / "model")
    (model / "notes.txt").symlink_to(token)
    (model / "inside.md").symlink_to(model / "notes.md")  # a link within the folder stays a source
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    code, out, err = cli(capsys, "init", "v1", "--files", model, "--repo-id", REPO)
    assert code == 2, err
    [line] = err.strip().splitlines()
    assert "notes.txt" in line and "symbolic link" in line and "copy it into the folder" in line
    assert "inside.md" not in err and SHAPED not in out + err
    assert not (project / "artifacts" / "v1" / "release.toml").exists()
    (model / "notes.txt").unlink()
    assert cli(capsys, "init", "v1", "--files", model, "--repo-id", REPO).code == 0


def with_notes(example: Path, text: str) -> None:
    (example.parent / "notes.txt").write_text(f"how we trained it\n\nexport HF_TOKEN={text}\n")
    example.write_text(example.read_text() + '\n[[files]]\nsource = "notes.txt"\nrole = "extra"\n')


def test_build_refuses_a_text_file_holding_a_token_shaped_string(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_notes(example, SHAPED)
    code, out, err = cli(capsys, "build", "v5", "--spec", example, "--dist", tmp_path / "dist")
    assert code == 1, err
    assert "notes.txt:3: holds a string shaped like a Hugging Face token" in err
    assert SHAPED not in out + err and not (tmp_path / "dist" / "v5").exists()


def test_build_refuses_a_text_file_holding_the_users_own_token(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    own = "my-own-" + secrets.token_hex(8)  # not hf_-shaped: only knowing it finds it
    monkeypatch.setenv("HF_TOKEN", own)
    with_notes(example, own)
    code, out, err = cli(capsys, "build", "v5", "--spec", example, "--dist", tmp_path / "dist")
    assert code == 1, err
    assert "notes.txt:3: holds your own Hugging Face token" in err and own not in out + err


def test_the_scan_reads_no_file_over_its_bound_and_stops_at_a_binary_files_first_bytes(
    example: Path, tmp_path: Path
) -> None:
    """The scan runs while the files are hashed, before their hashed sizes are known: it takes each file's size
    as staged. Before, a large extra file (size 0 until hashed) was read up to 32 MiB, and a binary one whole."""
    from release.builder.collect import Collect, resolve_sources
    from release.builder.hashing import Digest
    from release.checks.secrets import CheckNoToken
    from release.pipeline import Context
    from release.spec import load_spec

    (example.parent / "big.txt").write_bytes(b"notes\n" * (7 << 20))  # 42 MiB of text: over the bound
    (example.parent / "blob.bin").write_bytes(b"\0" + bytes(20 << 20))  # 20 MiB, binary from its first byte
    example.write_text(
        example.read_text() + "".join(f'\n[[files]]\nsource = "{n}"\nrole = "extra"\n' for n in ("big.txt", "blob.bin"))
    )
    spec = load_spec(example)
    ctx = Context(spec=spec, stage=tmp_path / "stage", sources=resolve_sources(spec))
    ctx.stage.mkdir()
    run = (Collect(), Digest())  # the hashing done first, so that its reads are not counted below
    for step in run:
        step.run(ctx)
    for f in ctx.files:
        f.size = 0  # as the scan sees them beside the hashing: no hashed size yet

    def rchar() -> int:
        return int(Path("/proc/self/io").read_text().split("rchar: ")[1].split()[0])

    before = rchar()
    CheckNoToken().run(ctx)
    assert rchar() - before < 1 << 20, "read more than the example's text files and two binary sniffs"
    assert not ctx.problems
