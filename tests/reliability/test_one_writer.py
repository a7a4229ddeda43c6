"""One writer per version: build and push hold the version's lock (release/staged/locks.py), so a second build, or a
rebuild under a running push, is refused naming the holder; SIGTERM takes Ctrl-C's path (exit 143, cleaned up).

Real processes and signals; the push is held at the local Hub by a `delay` fault rule while the rebuild is tried.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from release.builder import build
from release.localhub import LocalHub
from release.spec import load_spec
from release.staged.locks import LockHeld
from release.staged.manifest import Manifest
from release.staged.names import MANIFEST_NAME, stat_record_name
from tests.helpers import TOKEN, bytes_read, cli, edit
from tests.reliability.helpers import tree
from tests.reliability.test_concurrent_edits import push_while


def _hashing(proc: subprocess.Popen[str], at_least: int = 64 << 20) -> None:
    """Wait until the process (or its hashing child) has read `at_least` bytes (it is hashing), bounded in time."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            if bytes_read(proc.pid) > at_least:
                return
        time.sleep(0.02)
    raise AssertionError(f"the build never started hashing: {proc.communicate()}")


def test_a_second_build_is_refused_and_sigterm_cleans_up(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build hashing a large (sparse) file holds v5's lock: a second build of v5 is refused (exit 4) naming
    it and leaves nothing; SIGTERM then ends the first with exit 143, its building folder and lock removed."""
    with open(example.parent / "big.bin", "wb") as f:
        f.truncate(32 << 30)  # sparse: half a minute of hashing, no disk used
    edit(
        example,
        '[[files]]\nsource = "LICENSE"',
        '[[files]]\nsource = "big.bin"\nrole = "extra"\n\n[[files]]\nsource = "LICENSE"',
    )
    dist = tmp_path / "dist"
    first = subprocess.Popen(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(example), "--dist", str(dist)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _hashing(first)
        building = list(dist.glob(".v5.building-*"))
        second = cli(capsys, "build", "v5", "--spec", example, "--dist", dist)
        assert second.code == 4, second.err
        assert f"is in use by pid {first.pid} (`hf-release build v5`) since " in second.err, second.err
        assert list(dist.glob(".v5.building-*")) == building and len(building) == 1  # the second left nothing
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=10)
    finally:
        first.kill()
    assert first.returncode == 143, err
    assert "Traceback" not in err and "terminated" in err, err
    assert sorted(p.name for p in dist.iterdir()) == []  # no building folder, no staging, no lock file


@pytest.mark.hub("POST:delay=0.3:1:/preupload/")
def test_a_rebuild_while_push_runs_is_refused(hub: LocalHub, built: Path, dist: Path, example: Path) -> None:
    """While the Hub holds push's preupload, a rebuild of v5 is refused by the lock: the push completes with
    exactly the files of the release.json it planned from, and the staging is the one it pushed."""
    shutil.copy(built.parent / stat_record_name("v5"), dist.parent)  # a staging build would replace
    planned = (dist / MANIFEST_NAME).read_bytes()
    refused: list[BaseException] = []

    def rebuild() -> None:
        with pytest.raises(LockHeld) as caught:
            build(load_spec(example), dist.parent)
        refused.append(caught.value)

    assert push_while(hub, dist, rebuild) is None
    assert "is in use by pid" in str(refused[0]) and "`hf-release push v5`" in str(refused[0]), refused
    assert (dist / MANIFEST_NAME).read_bytes() == planned and not list(dist.parent.glob(".v5.building-*"))
    listed = {f.path_in_repo: f.size for f in Manifest.load(dist / MANIFEST_NAME).files}
    on_hub = {path: size for path, (size, _, _) in tree(HfApi(endpoint=hub.url, token=TOKEN), "v5").items()}
    assert on_hub.keys() - {".gitattributes", MANIFEST_NAME, "SHA256SUMS"} == listed.keys()
    assert all(on_hub[path] == size for path, size in listed.items())
