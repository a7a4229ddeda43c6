"""build → SHA256SUMS → verify on the example, byte flips, determinism, all-or-nothing."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed, VerifyFailed
from release.spec import load_spec
from release.staged.manifest import Manifest
from release.staged.names import DIGEST_LOCK_NAME, DIGEST_RECORD_NAME
from release.verify import PeerComparison, compare_peer, digest_lines, verify_staged
from tests.helpers import edit


def test_build_stages_the_release_with_manifest_sums_and_card(
    build_example: Callable[..., Path], example: Path
) -> None:
    dist = build_example()
    manifest = Manifest.load(dist / "release.json")
    names = {f.path_in_repo for f in manifest.files}
    assert {
        "model.safetensors",
        "config.json",
        "launch-glm53-dflash2-tp4-v5.sh",
        "results.tsv",
        "README.md",
        "LICENSE",
    } <= names
    assert {f.role for f in manifest.files} >= {"weights", "config", "launcher", "ledger", "bench", "card"}
    # large files are hard links to the sources, not copies
    assert (dist / "model.safetensors").stat().st_ino == (example.parent / "model.safetensors").stat().st_ino
    weights = manifest.file("model.safetensors")
    assert weights is not None and weights.md5 is not None  # the spec asks for md5 of the weights
    subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=dist, check=True)
    assert verify_staged(dist).files == len(manifest.files)


def test_two_builds_give_byte_identical_manifests(example: Path, tmp_path: Path) -> None:
    spec = load_spec(example)
    first = build(spec, tmp_path / "one").dist
    second = build(spec, tmp_path / "two").dist
    for name in ("release.json", "SHA256SUMS", "README.md"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def _all_staged(dist: Path) -> list[str]:
    return sorted(p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file())


def test_a_flipped_byte_in_any_staged_file_fails_verify_naming_it(build_example: Callable[..., Path]) -> None:
    dist = build_example()
    for name in _all_staged(dist):
        path = dist / name
        original = path.read_bytes()
        # break the hard link first: the flip must not reach the example's source
        path.unlink()
        path.write_bytes(bytes([original[0] ^ 0x01]) + original[1:])
        with pytest.raises(VerifyFailed) as exc:
            verify_staged(dist)
        assert any(p.file == name for p in exc.value.problems), (name, exc.value.problems)
        path.write_bytes(original)
    verify_staged(dist)


def test_missing_and_extra_files_are_named(build_example: Callable[..., Path]) -> None:
    dist = build_example()
    (dist / "results.tsv").unlink()
    (dist / "notes.txt").write_text("stray")
    with pytest.raises(VerifyFailed) as exc:
        verify_staged(dist)
    messages = {p.file: p.message for p in exc.value.problems}
    assert "missing" in messages["results.tsv"]
    assert "extra" in messages["notes.txt"]


def test_failed_build_leaves_no_staged_release(build_example: Callable[..., Path], example: Path) -> None:
    dist = build_example()
    assert dist.exists()
    edit(example.parent / "results.tsv", "\tdiscard\t", "\tmaybe\t")
    with pytest.raises(CheckFailed):
        build_example()
    assert not dist.exists()
    kept = (DIGEST_RECORD_NAME, DIGEST_LOCK_NAME)  # the project's digest record, from the first build: it stays
    assert [p.name for p in dist.parent.iterdir() if not p.name.startswith(".v5.stat") and p.name not in kept] == []


def test_peer_digest_lists(build_example: Callable[..., Path], tmp_path: Path) -> None:
    dist = build_example()
    manifest = Manifest.load(dist / "release.json")
    good = tmp_path / "node2.txt"
    good.write_text("\n".join(digest_lines([dist / "model.safetensors"], md5=True)) + "\n")
    assert compare_peer(manifest, good).problems == []
    bad = tmp_path / "node3.txt"
    bad.write_text(f"{'0' * 32}  /mnt/node3/model.safetensors\n")
    problems = compare_peer(manifest, bad).problems
    assert len(problems) == 1 and "md5 is 000" in problems[0].message and "node3.txt:1" in problems[0].file
    with pytest.raises(VerifyFailed):
        verify_staged(dist, peers=[good, bad])


def test_a_peer_list_that_leaves_the_weights_out_fails_unless_allowed(built: Path, tmp_path: Path) -> None:
    """Issue 23: a peer list covering two small files said "digests agree"; the weights were never compared."""
    dist = built
    partial = tmp_path / "node2.txt"
    partial.write_text("\n".join(digest_lines([dist / "config.json", dist / "LICENSE"], md5=False)) + "\n")
    with pytest.raises(VerifyFailed) as failed:
        verify_staged(dist, peers=[partial])
    [problem] = failed.value.problems
    assert (
        problem.file == str(partial) and "model.safetensors" in problem.message and "--allow-partial" in problem.message
    )
    assert "README.md" not in problem.message  # the generated card is no node's to hash
    allowed = verify_staged(dist, peers=[partial], allow_partial=True)
    assert (
        "model.safetensors" in allowed.not_compared[str(partial)]
        and "config.json" not in allowed.not_compared[str(partial)]
    )
    everything = tmp_path / "node3.txt"
    files = [f.path_in_repo for f in Manifest.load(dist / "release.json").files if f.role not in ("card", "chart")]
    everything.write_text("\n".join(digest_lines([dist / p for p in files], md5=False)) + "\n")
    assert compare_peer(Manifest.load(dist / "release.json"), everything) == PeerComparison([], [])


def test_manifest_is_deterministic_and_complete(build_example: Callable[..., Path]) -> None:
    dist = build_example()
    data = json.loads((dist / "release.json").read_text())
    assert data["repo_id"] == "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"
    assert data["files"] == sorted(data["files"], key=lambda f: f["path_in_repo"])
    assert len(data["spec_sha256"]) == 64 and len(data["release_digest"]) == 64
    assert "mtime" not in json.dumps(data) and str(dist) not in json.dumps(data)
    assert all(
        set(f) <= {"path_in_repo", "size", "sha256", "md5", "role", "generated", "git_blob_id"} for f in data["files"]
    )
    for f in data["files"]:  # every file under 10 MiB carries the git blob id the Hub lists for a plain blob
        body = (dist / f["path_in_repo"]).read_bytes()
        assert f["git_blob_id"] == hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()
    assert os.path.exists(dist / "SHA256SUMS")
