"""`hash` writes names as sha256sum does and `verify --peer` reads them back; a peer list is read with a cap
(issue 38: minor `hash` escaping, item 8's `verify --peer`)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from release.errors import InputError
from release.staged.manifest import Manifest
from release.verify import compare_peer, digest_lines
from tests.helpers import cli


def test_a_name_with_a_newline_is_escaped_as_sha256sum_escapes_it(tmp_path: Path) -> None:
    config = b'{"model_type": "llama"}\n'
    forged = f"x\n{hashlib.sha256(config).hexdigest()}  config.json"  # raw, it would be a second, valid line
    (tmp_path / forged).write_bytes(b"anything")
    (tmp_path / "back\\slash").write_bytes(b"b")
    names = [tmp_path / forged, tmp_path / "back\\slash"]
    lines = digest_lines(names, md5=False)
    assert len("\n".join(lines).splitlines()) == 2 and all(line.startswith("\\") for line in lines)
    expected = subprocess.run(["sha256sum", *map(str, names)], capture_output=True, text=True, check=True).stdout
    assert "\n".join(lines) + "\n" == expected


def test_verify_peer_reads_an_escaped_line_back(built: Path, tmp_path: Path) -> None:
    manifest = Manifest.load(built / "release.json")
    entry = manifest.files[0]
    (tmp_path / "peer.txt").write_text(f"\\{entry.sha256}  dir\\\\with\\nodd/{entry.path_in_repo}\n")
    assert compare_peer(manifest, tmp_path / "peer.txt").problems == []


def test_verify_peer_refuses_a_list_over_its_cap_without_reading_it_all(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as f:
        f.truncate(3 * 1024**3)  # 3 GiB of holes: read whole, a MemoryError
    with pytest.raises(InputError, match="is over 67,108,864 bytes"):
        compare_peer(Manifest.load(built / "release.json"), huge)
    code, _, err = cli(capsys, "verify", "v5", "--dist", built.parent, "--peer", huge)
    assert code == 2 and "Traceback" not in err and "huge.txt: is over" in err


def test_card_diff_reads_its_file_with_a_cap_not_by_its_stat(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/zero says 0 bytes and never ends: read by its stat, `card --diff` read it forever (issue 38, item 8)."""
    root = built.parent.parent
    code, out, err = cli(capsys, "card", "v5", "--root", root, "--diff", "/dev/zero")
    assert code == 2 and out == "" and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith("/dev/zero: is over 16,777,216 bytes, more than any model card"), line
