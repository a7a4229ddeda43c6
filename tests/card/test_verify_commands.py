"""The card's "Verify this release" commands, run exactly as printed on a real `hf download` of the pushed,
signed release (local Hub, token from the environment); without the flags the card adds, model_signing fails."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from release.card.verify_commands import verify_section
from release.errors import PublishRefused
from release.publish.push import PushOptions, push
from release.sign import sign_release
from tests.helpers import TOKEN, edit, local_hub
from tests.test_sign import ec_key_pair

PUBLIC_KEY = "spark-lab-release.pub.pem"
BIN = Path(sys.executable).parent  # hf and model_signing, installed beside this interpreter


def bash_blocks(card: str, heading: str = "Verify this release") -> list[str]:
    """The bash code blocks of one H2 section, parsed with a real Markdown parser."""
    tokens = MarkdownIt("commonmark").parse(card)
    blocks, inside = [], False
    for index, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h2":
            inside = tokens[index + 1].content.strip() == heading
        elif inside and tok.type == "fence" and tok.info.strip() == "bash":
            blocks.append(tok.content)
    return blocks


def run_bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_printed_commands_verify_a_real_download(
    build_example: Callable[..., Path], example: Path, tmp_path: Path
) -> None:
    edit(example, "[card.license]", f'[card.signature]\nmethod = "key"\npublic_key = "{PUBLIC_KEY}"\n\n[card.license]')
    dist = build_example()
    private, public = ec_key_pair(tmp_path, "release")
    with local_hub(tmp_path / "hub") as hub:  # the card names a signer: unsigned, nothing is sent
        with pytest.raises(
            PublishRefused, match="model.sig: is missing: the card tells readers to check a key signature"
        ):
            push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
        assert hub.stats.commits == 0
    sign_release(dist, private_key=private)
    reader = tmp_path / "reader"
    reader.mkdir()
    (reader / PUBLIC_KEY).write_bytes(public.read_bytes())  # saved under the name the card gives
    card = (dist / "README.md").read_text()
    install, local, snapshot, fast = bash_blocks(card)
    # model_signing 1.1.1 imports OpenSSL without declaring it: a bare `pip install model-signing` cannot verify
    assert install == "pip install 'model-signing==1.1.1' pyopenssl\n"
    assert "--ignore-paths GLM-5.3-Flash-DFlash2-TP4-Spark-v5/.cache" in local and "--allow_symlinks" in snapshot
    assert f"the public key `{PUBLIC_KEY}`" in card

    with local_hub(tmp_path / "hub") as hub:
        push(dist, PushOptions(endpoint=hub.url, token=TOKEN))
        env = {
            **os.environ,
            "HF_ENDPOINT": hub.url,
            "HF_TOKEN": TOKEN,
            "HF_HUB_CACHE": str(tmp_path / "cache"),
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        }
        for block in (local, snapshot):
            done = run_bash(block, reader, env)
            assert done.returncode == 0, done.stderr
            assert "SHA256SUMS" not in done.stderr and "Verification succeeded" in done.stdout
            assert "README.md: OK" in done.stdout and "model.safetensors: OK" in done.stdout
        # the flags are needed: without them model_signing refuses the same download
        bare_local = local.replace(" \\\n    --ignore-paths GLM-5.3-Flash-DFlash2-TP4-Spark-v5/.cache", "")
        assert bare_local != local
        refused = run_bash(
            bare_local.split("-v5\n", 1)[1], reader, env
        )  # the download (continued lines) is there already
        assert refused.returncode != 0 and "Extra files found" in refused.stdout + refused.stderr
        bare_snapshot = snapshot.replace(" \\\n    --allow_symlinks", "")
        assert bare_snapshot != snapshot
        refused = run_bash(bare_snapshot, reader, env)
        assert refused.returncode != 0 and "symlink" in (refused.stdout + refused.stderr).lower()

        # the fast check, on every CPU at once, run as printed on the same download: each file named
        assert "xargs -d '\\n' -n 1 -P \"$(nproc)\"" in fast
        done = run_bash(fast, reader, env)
        assert done.returncode == 0, done.stderr
        assert "README.md: OK" in done.stdout and "model.safetensors: OK" in done.stdout
        with open(reader / "GLM-5.3-Flash-DFlash2-TP4-Spark-v5" / "model.safetensors", "r+b") as weights:
            weights.write(b"\xff")  # one byte changed: the check fails, naming the file
        failed = run_bash(fast, reader, env)
        assert failed.returncode != 0 and "model.safetensors: FAILED" in failed.stdout, failed.stdout
        assert "README.md: OK" in failed.stdout  # the other files are still checked


def test_an_unsigned_release_prints_only_the_download_and_sha256sum(built: Path) -> None:
    local, snapshot, fast = bash_blocks((built / "README.md").read_text())
    assert local.splitlines() == [
        "hf download spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark \\",  # continued to fit the code box (issue 40)
        "    --revision v5 \\",
        "    --local-dir GLM-5.3-Flash-DFlash2-TP4-Spark-v5",
        "(cd GLM-5.3-Flash-DFlash2-TP4-Spark-v5 && sha256sum -c SHA256SUMS)",
    ]
    assert "model_signing" not in snapshot
    assert fast == (  # continued to fit the code box (issue 40)
        "(cd GLM-5.3-Flash-DFlash2-TP4-Spark-v5 && \\\n"
        "    xargs -d '\\n' -n 1 -P \"$(nproc)\" \\\n"
        '    sh -c \'printf "%s\\n" "$1" | sha256sum -c\' sh < SHA256SUMS)\n'
    )


def test_the_sigstore_command_parses_with_the_installed_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyless verification needs Sigstore's servers (off this machine), so the command is parsed by
    model_signing's own click command, which also checks the required options, and never run."""
    import shlex

    from model_signing._cli import main

    identity = "https://github.com/spark-lab/releases/.github/workflows/release.yml@refs/tags/v5"
    issuer = "https://token.actions.githubusercontent.com"
    parts = verify_section("spark-lab/m", "v5", {"method": "sigstore", "identity": identity, "issuer": issuer})
    block = parts["local_dir"].removeprefix("```bash\n").removesuffix("\n```")
    command = shlex.split(
        block.split("\n", 2)[2].replace("\\\n", "")
    )  # the third command, its lines joined as bash does
    assert command[:4] == ["model_signing", "verify", "sigstore", "m-v5"]
    assert (
        f"**Signed (Sigstore keyless signing, OpenSSF model signing, `model.sig`):** identity `{identity}`"
        in parts["signer"]
    )
    (tmp_path / "m-v5").mkdir()
    (tmp_path / "m-v5" / "model.sig").write_text("{}")
    monkeypatch.chdir(tmp_path)  # the command names the folder relative to where the reader runs it
    verify = main.get_command(None, "verify").get_command(None, "sigstore")  # type: ignore[union-attr]
    params = verify.make_context("sigstore", command[3:]).params
    assert (params["identity"], params["identity_provider"]) == (identity, issuer)
    assert [str(p) for p in params["ignore_paths"]] == ["m-v5/.cache"]
    with pytest.raises(Exception, match="No such option"):  # the check can fail: an unknown flag is refused
        verify.make_context("sigstore", [*command[3:], "--identity-provider", issuer])


def test_signing_otherwise_than_the_card_tells_readers_is_refused(
    build_example: Callable[..., Path], example: Path, tmp_path: Path
) -> None:
    from release.errors import InputError

    edit(
        example,
        "[card.license]",
        '[card.signature]\nmethod = "sigstore"\nidentity = "release@example.org"\n'
        'issuer = "https://accounts.example.org"\n\n[card.license]',
    )
    dist = build_example()
    private, _ = ec_key_pair(tmp_path, "release")
    with pytest.raises(
        InputError,
        match=r"README.md: the card tells readers to run `model_signing verify sigstore`, but this signs with a key",
    ):
        sign_release(dist, private_key=private)
    assert not (dist / "model.sig").exists()


def test_the_printed_commands_quote_what_they_name_so_pasting_them_runs_nothing_else(tmp_path: Path) -> None:
    """A version (or repo id) that is shell syntax — build refuses such a version, release.json might not —
    is one quoted word in every command the card prints: run by bash, `$(touch${IFS}x)` creates no file."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "hf").write_text("#!/bin/sh\nprintf '%s\\n' \"$@\"\n")
    (fake / "hf").chmod(0o755)
    section = verify_section("org/m;touch${IFS}y", "v1$(touch${IFS}x)", None)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    for block in (section["local_dir"], section["snapshot"], section["fast"]):
        script = str(block).removeprefix("```bash\n").removesuffix("\n```").splitlines()[0]
        subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=10)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"], script  # neither x nor y was created
