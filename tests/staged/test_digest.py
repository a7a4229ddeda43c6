import contextlib
import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from release.staged.digest import CHUNK, SHA_CHUNK, hash_file, hash_files
from release.staged.manifest import git_blob_id
from tests.helpers import bytes_read, default_sigint, with_extra_files


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 7])
def test_digests_equal_hashlib_at_chunk_boundaries(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    d = hash_file(path, md5=True)
    assert (d.size, d.sha256, d.md5) == (size, hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest())


@pytest.mark.parametrize("size", [SHA_CHUNK - 1, SHA_CHUNK, SHA_CHUNK + 1, 3 * SHA_CHUNK + 7])
def test_sha256_alone_reads_in_smaller_chunks_even_after_a_thread_grew_its_buffers(tmp_path: Path, size: int) -> None:
    grown = tmp_path / "large"
    grown.write_bytes(os.urandom(CHUNK + 1))
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    # one worker: the md5 file grows its buffers to CHUNK, the sha256-only file then reads SHA_CHUNK at a time
    _, d = hash_files([(grown, True), (path, False)], workers=1, sizes=[CHUNK + 1, 0])
    assert (d.size, d.sha256, d.md5, d.git_blob_id) == (size, hashlib.sha256(data).hexdigest(), None, git_blob_id(data))


def test_md5_only_when_asked_and_results_in_order(tmp_path: Path) -> None:
    paths = []
    for i, size in enumerate([10, 3 * CHUNK, 5]):
        p = tmp_path / f"f{i}"
        p.write_bytes(bytes([i]) * size)
        paths.append(p)
    results = hash_files([(p, i == 1) for i, p in enumerate(paths)], workers=2)
    assert [r.sha256 for r in results] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert [r.md5 is None for r in results] == [True, False, True]


STOP_PROBE = """
import signal, sys, threading
from pathlib import Path
from release.staged.digest import hash_files

seen = [0]
lock = threading.Lock()
def on_bytes(n):
    with lock:
        seen[0] += n
        if seen[0] == n:
            print("started", flush=True)
try:
    hash_files([(Path(p), True) for p in sys.argv[1:]], on_bytes=on_bytes)
except KeyboardInterrupt:
    print("interrupted", seen[0], flush=True)
    sys.exit(130)
print("finished", seen[0], flush=True)
"""


def read_after_sigint(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """Send SIGINT, then follow the reads of the process and its children until it exits: (bytes read after
    the signal, stderr).

    Bytes, not seconds: on a loaded machine the exit path may take long, but hashing threads that kept
    going would read gigabytes, and stopping at the next chunk reads a few chunks."""
    before = last = bytes_read(proc.pid)
    proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            last = max(last, bytes_read(proc.pid))
        except (OSError, IndexError):
            break  # exited between the two looks
        time.sleep(0.01)
    try:
        _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("Ctrl-C did not stop the command within two minutes") from None
    return last - before, err


def test_ctrl_c_stops_every_hashing_thread(tmp_path: Path) -> None:
    """SIGINT while two threads hash large files: the process exits promptly instead of joining the workers
    after they have read everything (sparse files: 2 × 32 GiB that take a minute to hash, no disk used)."""
    import subprocess
    import sys

    big = []
    for name in ("a", "b"):
        p = tmp_path / name
        with open(p, "wb") as f:
            f.truncate(32 << 30)
        big.append(str(p))
    proc = subprocess.Popen(
        [sys.executable, "-c", STOP_PROBE, *big], stdout=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )
    assert proc.stdout.readline().strip() == "started"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    word, hashed = out.split()
    assert word == "interrupted" and int(hashed) < (64 << 30) // 8, out  # stopped long before the end


def test_ctrl_c_during_build_hashing_exits_130_and_leaves_no_staging(example: Path, tmp_path: Path) -> None:
    """The real command, interrupted while its threads hash a large (sparse) file: exit 130, and the
    temporary staging folder is gone."""
    import subprocess
    import sys

    from tests.helpers import edit

    with open(example.parent / "big.bin", "wb") as f:
        f.truncate(32 << 30)  # sparse: half a minute of hashing on one thread, no disk used
    edit(
        example,
        '[[files]]\nsource = "LICENSE"',
        '[[files]]\nsource = "big.bin"\nrole = "extra"\n\n[[files]]\nsource = "LICENSE"',
    )
    dist = tmp_path / "dist"
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(example), "--dist", str(dist)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    # Interrupt early, while the card's chart may still be drawing on its thread (a daemon thread inside
    # matplotlib once crashed the interpreter at exit; card/steps.py DrawChartEarly).
    while time.monotonic() < deadline and proc.poll() is None:
        if bytes_read(proc.pid) > 64 << 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    # before the fix, the interrupt waited for the worker to hash the whole file (32 GiB)
    after, err = read_after_sigint(proc)
    assert after < 1 << 30, f"read {after:,} bytes after Ctrl-C: a hashing thread kept running"
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert not list(dist.glob(".v5.building-*")) and not (dist / "v5").exists()


SPIED_BUILD = """
import os, sys, time
from pathlib import Path
import release.staged.digest as D
from release.builder import build
from release.spec import load_spec

def log(line):
    with open(sys.argv[3], "a") as f:  # O_APPEND: one short write a line, from any thread or process
        f.write(line + "\\n")

hash_file, link = D.hash_file, os.link
def spied_hash(path, **kwargs):  # the module's global: what the forked child's threads call too
    log(f"hash {os.getpid()} {time.monotonic()}")
    return hash_file(path, **kwargs)
def slow_link(source, dest):  # collect's links, slowed down: the hashing has time to begin beside them
    time.sleep(0.02)
    link(source, dest)
    log(f"link {os.getpid()} {time.monotonic()}")
D.hash_file, os.link = spied_hash, slow_link
build(load_spec(Path(sys.argv[1])), Path(sys.argv[2]))
print(os.getpid())
"""


def test_many_files_are_hashed_in_a_forked_child_as_they_are_staged_and_its_digests_are_the_files(
    example: Path, tmp_path: Path
) -> None:
    import json
    import sys

    from release.builder.hashing import MANY_FILES

    with_extra_files(example, MANY_FILES + 1)
    spy = tmp_path / "spied"
    out = subprocess.run(
        [sys.executable, "-c", SPIED_BUILD, str(example), str(tmp_path / "dist"), str(spy)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    builder = int(out.split()[-1])
    events = [(what, int(pid), float(t)) for what, pid, t in map(str.split, spy.read_text().splitlines())]
    hashed = [t for what, pid, t in events if what == "hash" and pid != builder]
    linked = [t for what, pid, t in events if what == "link" and pid == builder]
    assert len(hashed) > MANY_FILES and len(linked) > MANY_FILES, events  # a child hashed them
    assert min(hashed) < max(linked)  # it began while collect was still linking
    for f in json.loads((tmp_path / "dist" / "v5" / "release.json").read_text())["files"]:
        data = (tmp_path / "dist" / "v5" / f["path_in_repo"]).read_bytes()
        assert (f["size"], f["sha256"], f.get("git_blob_id")) == (
            len(data),
            hashlib.sha256(data).hexdigest(),
            git_blob_id(data),
        )


def test_ctrl_c_while_a_forked_child_hashes_ends_the_child_too(example: Path, tmp_path: Path) -> None:
    import sys

    from release.builder.hashing import MANY_FILES

    with_extra_files(example, MANY_FILES + 1, size=1 << 30, sparse=True)  # 65 GiB of holes: a minute's hashing
    dist = tmp_path / "dist"
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(example), "--dist", str(dist)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    child = _hashing_child(proc)
    proc.send_signal(signal.SIGINT)  # to hf-release alone: the child must be ended by it
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert not Path(f"/proc/{child}").exists()  # killed and reaped, not left hashing
    assert not list(dist.glob(".v5.building-*")) and not (dist / "v5").exists()


def test_a_build_killed_outright_takes_its_hashing_child_with_it(example: Path, tmp_path: Path) -> None:
    """kill -9 of hf-release: the child (which holds the version's lock too) does not go on hashing for nobody."""
    import sys

    from release.builder.hashing import MANY_FILES

    with_extra_files(example, MANY_FILES + 1, size=1 << 30, sparse=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "build", "v5", "--spec", str(example), "--dist", str(tmp_path / "dist")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    child = _hashing_child(proc)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(child):
        time.sleep(0.05)
    assert not _running(child)


def _hashing_child(proc: subprocess.Popen[str]) -> int:
    """The pid of `proc`'s forked hashing child, once it is well into its files."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        children = [int(c) for c in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        for c in children:
            with contextlib.suppress(OSError):  # a short-lived child may be gone already
                if bytes_read(c) > 64 << 20:
                    return c
        time.sleep(0.05)
    raise AssertionError(f"no hashing child (exit {proc.poll()})")


def _running(pid: int) -> bool:
    """Alive and not a zombie (a container's first process may never reap an orphan)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_during_verify_hashing_exits_130_and_stops_reading(built: Path, tmp_path: Path) -> None:
    """verify hashes on a background thread while the card lint runs: Ctrl-C must reach those workers too."""
    import shutil
    import subprocess
    import sys

    dist = tmp_path / "dist" / "v5"
    shutil.copytree(built, dist)
    weights = dist / "model.safetensors"
    weights.unlink()  # a copy, never the session's files
    with open(weights, "wb") as f:
        f.truncate(32 << 30)  # sparse: verify would hash it for half a minute before reporting the size
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "verify", "v5", "--dist", str(dist.parent)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if bytes_read(proc.pid) > 256 << 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    after, err = read_after_sigint(proc)
    assert after < 1 << 30, f"read {after:,} bytes after Ctrl-C: a hashing thread kept running"
    assert proc.returncode == 130 and "Traceback" not in err, err


def test_build_hashes_while_the_content_checks_run(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hashing begins once the files are staged: the weights check (which needs no digest) finds it under way."""
    import threading

    import release.checks.weights
    import release.staged.digest
    from release.builder import build
    from release.spec import load_spec

    hashing = threading.Event()
    real_hash = release.staged.digest.hash_file
    seen: list[bool] = []

    def hash_file(*args, **kwargs):  # type: ignore[no-untyped-def]
        hashing.set()
        return real_hash(*args, **kwargs)

    class Seen(Exception):
        pass

    def check(self, ctx):  # type: ignore[no-untyped-def]
        seen.append(hashing.wait(5))
        raise Seen  # the rest of the build is not this test's

    monkeypatch.setattr(release.staged.digest, "hash_file", hash_file)
    monkeypatch.setattr(release.checks.weights.CheckWeights, "run", check)
    with pytest.raises(Seen):
        build(load_spec(example), tmp_path / "dist")
    assert seen == [True]


def test_a_failed_check_stops_the_hashing_and_leaves_nothing(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A content check fails while files are still being hashed: the hashing is told to stop and waited for, and
    nothing is staged."""
    import threading

    import release.staged.digest
    from release.builder import build
    from release.errors import CheckFailed
    from release.spec import load_spec

    def slow_hash_file(path, *, stop=None, **kwargs):  # type: ignore[no-untyped-def]
        assert stop is not None and stop.wait(30)  # only the build's cancel ends the wait
        raise release.staged.digest.Stopped(str(path))

    monkeypatch.setattr(release.staged.digest, "hash_file", slow_hash_file)
    (example.parent / "config.json").write_text("{ not json")
    start = time.monotonic()
    with pytest.raises(CheckFailed, match="config.json"):
        build(load_spec(example), tmp_path / "dist")
    assert time.monotonic() - start < 20
    assert not [t for t in threading.enumerate() if t.name == "hashing" or t.name.startswith("hash_")]
    assert not (tmp_path / "dist" / "v5").exists() and not list((tmp_path / "dist").glob(".v5.*"))


@pytest.mark.parametrize(("size", "spare_hashes"), [(100, False), (1 << 30, True)])
def test_the_hashing_child_leaves_a_core_to_the_build_unless_much_waits(size: int, spare_hashes: bool) -> None:
    """The child's threads past the first cores-1 (release/builder/hashing.py _Arriving) take a file only while more
    than SPARE_BYTES wait to be hashed: small files leave the parent a core, large ones get every core."""
    import itertools
    import threading

    from release.builder.hashing import SPARE_BYTES, _Arriving

    reader, writer = os.pipe()
    arriving = _Arriving(reader, regulars=1)
    os.write(writer, b"".join(b"%d 0 /f%d\0" % (size, i) for i in range(3)))
    taken: dict[str, list[int]] = {"regular": [], "spare": []}
    go_on = threading.Event()

    def regular() -> None:  # the first to ask: a regular; it lives on, as the child's threads do
        taken["regular"].append(next(arriving))
        go_on.wait(10)
        taken["regular"].extend(arriving)

    def spare() -> None:
        taken["spare"].extend(itertools.islice(arriving, 1))

    first = threading.Thread(target=regular)
    first.start()
    while not taken["regular"]:
        time.sleep(0.01)
    os.close(writer)  # every job sent: a spare that may not hash ends
    second = threading.Thread(target=spare)
    second.start()
    second.join(10)
    assert not second.is_alive()
    assert (taken["spare"] != []) == spare_hashes == (2 * size > SPARE_BYTES), taken
    go_on.set()
    first.join(10)
    assert sorted(taken["regular"] + taken["spare"]) == [0, 1, 2]
