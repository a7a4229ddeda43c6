import hashlib
import os
from pathlib import Path

import pytest

from release.digest import CHUNK, hash_file, hash_files


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7])
def test_digests_equal_hashlib_at_chunk_boundaries(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    d = hash_file(path, md5=True)
    assert (d.size, d.sha256, d.md5) == (size, hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest())


def test_md5_only_when_asked_and_results_in_order(tmp_path: Path) -> None:
    paths = []
    for i, size in enumerate([10, 3 * CHUNK, 5]):
        p = tmp_path / f"f{i}"
        p.write_bytes(bytes([i]) * size)
        paths.append(p)
    results = hash_files([(p, i == 1) for i, p in enumerate(paths)], workers=2)
    assert [r.sha256 for r in results] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert [r.md5 is None for r in results] == [True, False, True]
