"""release/staged/locks.py: one holder at a time, named to the others; a lock left by a killed process is free again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from release.errors import PublishRefused
from release.staged.locks import LockHeld, held

# A holder in a process of its own: flock locks belong to open file descriptions, so only another process (or
# another open of the file) can stand for a second hf-release.
HOLDER = """
import sys
from pathlib import Path
from release.staged.locks import held
with held(Path(sys.argv[1]), "hf-release build v5", what="version v5"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_held_lock_names_its_holder_and_a_killed_holders_lock_is_free(tmp_path: Path) -> None:
    lock = tmp_path / ".v5.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as refused, held(lock, "hf-release push v5", what="version v5"):
            pass
        assert isinstance(refused.value, PublishRefused)  # exit 4
        message = str(refused.value)
        assert f"version v5 is in use by pid {holder.pid} (`hf-release build v5`) since 20" in message, message
        holder.send_signal(signal.SIGKILL)  # dies holding it: no cleanup runs, the file stays
        holder.wait(timeout=10)
    finally:
        holder.kill()
    assert lock.exists()
    with held(lock, "hf-release push v5", what="version v5"):  # recovered: the kernel let go with the process
        assert f'"pid": {os.getpid()}' in lock.read_text()
    assert not lock.exists()  # a holder that ends normally leaves nothing behind


def test_a_lock_is_exclusive_within_one_process_too(tmp_path: Path) -> None:
    lock = tmp_path / ".v5.lock"
    with held(lock, "hf-release build v5", what="version v5"):
        with pytest.raises(LockHeld, match=rf"in use by pid {os.getpid()} \(`hf-release build v5`\)"):
            with held(lock, "hf-release build v5", what="version v5"):
                pass


def test_shared_holders_run_side_by_side_and_exclude_a_writer(tmp_path: Path) -> None:
    """Two pushes of one version (to two Hubs) hold it shared; a build (exclusive) is refused meanwhile; the file
    goes with the last holder."""
    lock = tmp_path / ".v5.lock"
    with held(lock, "hf-release push v5", what="version v5", shared=True):
        with held(lock, "hf-release push v5", what="version v5", shared=True):
            with pytest.raises(LockHeld, match="in use by pid"):
                with held(lock, "hf-release build v5", what="version v5"):
                    pass
        assert lock.exists()  # the first push still holds it
    assert not lock.exists()
