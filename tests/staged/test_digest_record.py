"""The digest record: a file's digests are reused only when the file cannot have changed since they were taken."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from release.builder import build
from release.init import init_from_previous
from release.localhub import LocalHub
from release.publish.preflight import preflight
from release.publish.push import PushOptions
from release.spec import load_spec
from release.staged import changed_since_build, read_staged
from release.staged.digest_record import DigestRecord, Recorded
from release.staged.manifest import Manifest
from release.staged.names import DIGEST_RECORD_NAME
from tests.helpers import TOKEN


def _digests(path: Path) -> Recorded:
    data = path.read_bytes()
    return Recorded(len(data), hashlib.sha256(data).hexdigest(), None, None)


def test_an_entry_is_reused_only_when_its_mtime_is_older_than_its_hashing(tmp_path: Path) -> None:
    """Git's racy-timestamp rule, simulated: with coarse timestamps a same-size edit in the tick the hashing began
    leaves size, mtime and ctime as they were, so an entry whose mtime is not older than that tick is never served."""
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    st = path.stat()
    racy, settled = DigestRecord(tmp_path), DigestRecord(tmp_path)
    racy.confirmed(st, _digests(path), since_ns=st.st_mtime_ns)  # hashing began in the tick of the last write
    settled.confirmed(st, _digests(path), since_ns=st.st_mtime_ns + 1)
    assert racy.lookup(st) is None
    assert settled.lookup(st) == _digests(path)
    assert settled.lookup(st, md5=True) is None  # no md5 was taken
    assert racy.save() and settled.save()
    assert DigestRecord(tmp_path).lookup(st) == _digests(path)  # the record on disk, merged under the lock
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # ctime moves: the entry no longer matches
    assert DigestRecord(tmp_path).lookup(path.stat()) is None
    (tmp_path / DIGEST_RECORD_NAME).write_text("not a record\n")
    assert DigestRecord(tmp_path).lookup(st) is None  # damaged: every file is hashed again


def test_a_damaged_line_is_ignored_and_the_good_ones_are_served(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    st = path.stat()
    record = DigestRecord(tmp_path)
    record.confirmed(st, _digests(path), since_ns=st.st_mtime_ns + 1)
    assert record.save()
    good = (tmp_path / DIGEST_RECORD_NAME).read_text().splitlines(keepends=True)[1]
    fields = good.split()
    damaged = [
        " ".join(fields[:8]) + "\n",  # a field short
        good.replace(fields[6], fields[6].upper()),  # not as hf-release writes a sha256
        good.replace(fields[0], "x" + fields[0][1:], 1),  # a device that is not a number
        good.replace(" ", "  ", 1),
    ]  # not one space between fields
    for line in damaged:
        (tmp_path / DIGEST_RECORD_NAME).write_text("hf-release digest record 1\n" + line)
        assert DigestRecord(tmp_path).lookup(st) is None, line
    (tmp_path / DIGEST_RECORD_NAME).write_text("hf-release digest record 1\n" + "".join(damaged) + good.rstrip("\n"))
    assert DigestRecord(tmp_path).lookup(st) == _digests(path)  # the last line, without its newline


def test_an_in_place_edit_with_mtime_restored_is_never_served_from_the_record(
    build_example: Callable[..., Path], example: Path
) -> None:
    weights = example.parent / "model.safetensors"
    old = os.stat(weights)
    build_example()
    with open(weights, "r+b") as f:  # same size, one byte flipped near the end, mtime put back: only ctime moves
        f.seek(old.st_size - 1)
        last = f.read(1)
        f.seek(old.st_size - 1)
        f.write(bytes([last[0] ^ 0xFF]))
    os.utime(weights, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(weights).st_mtime_ns == old.st_mtime_ns and os.stat(weights).st_size == old.st_size
    dist = example.parent.parent.parent / "dist" / "v5"
    problems, rehashed = changed_since_build(read_staged(dist))
    assert [p.file for p in problems] == ["model.safetensors"] and rehashed == old.st_size
    rebuilt = build_example()
    entry = Manifest.load(rebuilt / "release.json").file("model.safetensors")
    assert entry is not None and entry.sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()


def test_building_v6_reuses_v5s_digests_and_v5s_push_does_not_rehash(
    build_example: Callable[..., Path],
    example: Path,
    hub: LocalHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    v5 = build_example()
    root = example.parent.parent.parent
    init_from_previous(root, "v6", "v5")  # v6's sources are v5's files (../v5/…)
    read: list[str] = []
    real = __import__("release.staged.digest", fromlist=["hash_file"]).hash_file

    def counting(path: Path, **kw: object) -> object:
        read.append(Path(path).name)
        return real(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("release.staged.digest.hash_file", counting)
    v6 = build(load_spec(root / "artifacts" / "v6" / "release.toml"), root / "dist").dist
    assert os.stat(v6 / "model.safetensors").st_ino == os.stat(v5 / "model.safetensors").st_ino
    assert "model.safetensors" not in read  # v6 linked v5's inode (its ctime moved) and reused its digests
    read.clear()
    ctx = preflight(v5, PushOptions(endpoint=hub.url, token=TOKEN, dry_run=True), version="v5")
    assert not ctx.refused and read == []  # v5's stat record is stale (ctime), the digest record is not
    assert dict(ctx.log)["staged-unchanged"].detail == "files unchanged since build (0 bytes re-hashed)"
