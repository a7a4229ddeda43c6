"""`hf-release push` killed -9 at a random moment, again and again, against Hubs in other processes.

The moment is drawn from the push's first connection to its end: a kill before its first request proves
nothing, and Python's imports are a third of a push here.

At no moment does a Hub show a partial release: a watcher polls its refs throughout, and main always holds
either the previous release's exact tree or the complete new one, and the v5 tag only ever points at the
complete one. After every kill a re-run completes the release, with exactly one commit on top of v4.
Two Hubs run trials side by side to keep the test short.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from release.hub.transport import install as install_bounded_client
from release.publish.push import PushOptions, push
from release.staged.manifest import Manifest
from release.staged.names import MANIFEST_NAME
from tests.helpers import READ_TOKEN, REPO, TOKEN
from tests.reliability.helpers import TALLY, Tree, main_and_tags, seed_previous_release, token_args, tree

TRIALS = 12
STREAMS = 2
HF_RELEASE = Path(sys.executable).parent / "hf-release"
# The Hub answers commits and tags a little late, widening the windows around the two steps that publish.
WIDEN = "POST:delay=0.2:100000:/commit/;POST:delay=0.5:100000:/tag/"


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    return env | {"HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def holds_a_socket(pid: int) -> bool:
    try:
        fds = list(Path("/proc", str(pid), "fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd).startswith("socket:"):
                return True
        except OSError:  # closed since it was listed
            pass
    return False


@contextmanager
def served_hub(fallback: Path) -> Iterator[tuple[str, Path]]:
    """`hf-release hub serve` in its own process: (url, root). The root is on tmpfs where there is one:
    only the client is killed here, and the Hub's fsyncs would only slow every trial down."""
    shm = Path("/dev/shm")
    base = Path(
        tempfile.mkdtemp(prefix="hf-release-kill-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else fallback)
    )
    root = base / "hub"
    tokens = base / "tokens"
    tokens.touch(mode=0o600)
    tokens.write_text(f"{TOKEN}:write\n{READ_TOKEN}:read\n")
    proc = subprocess.Popen(
        [HF_RELEASE, "hub", "serve", "--root", root, "--port", "0", "--token-file", tokens, "--fault", WIDEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once listening
        assert " at http://127.0.0.1:" in line, line
        yield line.rsplit(" at ", 1)[1].strip(), root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        shutil.rmtree(base, ignore_errors=True)


class Stream:
    """One Hub holding the previous release (v4); trials push v5 to it, kill the push, re-run, reset."""

    def __init__(self, url: str, root: Path, dist: Path, seed: int) -> None:
        self.url, self.dist, self.rng = url, dist, random.Random(seed)
        self.api = HfApi(endpoint=url, token=READ_TOKEN)
        self.v4 = seed_previous_release(HfApi(endpoint=url, token=TOKEN), dist)
        self.old = tree(self.api, "main")
        self.refs_file = root / "repos" / "models" / REPO / "refs.json"
        self.old_refs = self.refs_file.read_bytes()
        self.new_objects = [
            root / "objects" / "sha256" / f.sha256[:2] / f.sha256[2:]
            for f in Manifest.load(dist / MANIFEST_NAME).files
            if f.path_in_repo.endswith((".safetensors", ".png"))
        ]
        self.new: Tree = {}
        self.trees: dict[str, Tree] = {}
        self.seen: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.violations: list[str] = []
        self.args = [str(HF_RELEASE), "push", "v5", "--dist", str(dist.parent), "--endpoint", url, *token_args(TOKEN)]

    def reset(self) -> None:
        """Back to v4 while the Hub is idle: refs.json is the Hub's only mutable file. The new release's
        LFS objects go too, so every push uploads them again."""
        tmp = self.refs_file.with_suffix(".reset")
        tmp.write_bytes(self.old_refs)
        os.replace(tmp, self.refs_file)
        for path in self.new_objects:
            path.unlink(missing_ok=True)

    def tree_at(self, commit: str) -> Tree:
        if commit not in self.trees:  # commits are immutable: one listing each
            self.trees[commit] = tree(self.api, commit)
        return self.trees[commit]

    def check(self) -> str:
        """The Hub's state now: old, new or new+tag; anything else is recorded as a violation."""
        main, tags = main_and_tags(self.api)
        at_main = self.tree_at(main) if main else None
        state = "old" if at_main == self.old else "new" if at_main == self.new else "PARTIAL"
        if state == "PARTIAL":
            self.violations.append(f"main at {main} holds neither release: {sorted(at_main or {})}")
        if tags.get("v4") != self.v4:
            self.violations.append(f"tag v4 moved to {tags.get('v4')}")
        if "v5" in tags:
            if self.tree_at(tags["v5"]) != self.new:
                self.violations.append(f"tag v5 points at {tags['v5']}, which is not the complete release")
            state += "+tag"
        self.seen[state] += 1
        return state

    def watch(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.check()
            except Exception as exc:  # a watcher that cannot see proves nothing
                self.violations.append(f"watcher failed: {exc!r}")
            stop.wait(0.05)

    def calibrate(self) -> tuple[float, float]:
        """One undisturbed push: the complete new release; when the push opened its first connection (read
        off /proc/PID/fd; 0 where there is none), and when it ended."""
        started = time.monotonic()
        proc = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_env()
        )
        connected = 0.0
        while not connected and proc.poll() is None and Path("/proc", str(proc.pid)).is_dir():
            if holds_a_socket(proc.pid):
                connected = time.monotonic() - started
            time.sleep(0.005)
        _, stderr = proc.communicate(timeout=60)
        duration = time.monotonic() - started
        assert proc.returncode == 0, stderr
        self.new = tree(self.api, "v5")
        assert self.new != self.old and "old-v4-notes.txt" not in self.new
        return connected, duration

    def trial(self, window: tuple[float, float]) -> None:
        self.reset()
        assert self.check() == "old"
        proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env())
        time.sleep(self.rng.uniform(*window))
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        time.sleep(0.25)  # a request the dead client left in flight may still land
        state = self.check()
        self.outcomes[f"{'killed' if killed else 'finished'}, Hub {state}"] += 1
        assert not self.violations, self.violations

        # The re-run completes what the killed push started (in process: the CLI's exit 0 is push returning).
        result = push(self.dist, PushOptions(endpoint=self.url, token=TOKEN))
        assert result.verified
        main, tags = main_and_tags(self.api)
        assert self.check() == "new+tag" and tags == {"v4": self.v4, "v5": main} and result.commit == main
        history = [c.commit_id for c in self.api.list_repo_commits(REPO)]
        assert history[1] == self.v4, "more than one commit on top of v4"


@pytest.mark.heavy  # 12 trials of two pushes each: make test-heavy
def test_push_killed_at_random_moments_never_shows_a_partial_release(dist: Path, tmp_path: Path) -> None:
    seed = int(os.environ.get("KILL_SEED", time.time_ns() % 100_000))
    # The in-process re-runs install hf-release's bounded client into huggingface_hub, and set_client_factory
    # closes the shared client it replaces: installed before the watchers' requests, never under them.
    install_bounded_client()
    stop = threading.Event()
    with ExitStack() as stack, ThreadPoolExecutor(2 * STREAMS) as pool:
        hubs = [stack.enter_context(served_hub(tmp_path)) for _ in range(STREAMS)]
        streams = [Stream(url, root, dist, seed + i) for i, (url, root) in enumerate(hubs)]
        windows = [s.calibrate() for s in streams]
        watchers = [pool.submit(s.watch, stop) for s in streams]
        try:
            runs = [
                pool.submit(lambda s=s, w=w: [s.trial(w) for _ in range(TRIALS // STREAMS)])
                for s, w in zip(streams, windows, strict=True)
            ]
            for run in runs:
                run.result(timeout=240)
        finally:
            stop.set()
            for w in watchers:
                w.result(timeout=10)
    violations = [v for s in streams for v in s.violations]
    assert not violations, f"seed {seed}: {violations}"
    outcomes = sum((s.outcomes for s in streams), Counter())
    seen = sum((s.seen for s in streams), Counter())
    print(
        f"\nkill trials (seed {seed}, killed between {max(w[0] for w in windows):.2f}s and "
        f"{max(w[1] for w in windows):.2f}s): "
        f"{dict(outcomes)}; watcher saw {dict(seen)}"
    )
    assert sum(outcomes.values()) == TRIALS
    TALLY["kill trials"] += TRIALS
    for outcome, n in outcomes.items():
        TALLY[f"kill trials where the push was {outcome}"] += n
    TALLY["push processes killed -9, then re-run to completion"] += sum(
        n for k, n in outcomes.items() if k.startswith("killed")
    )
    TALLY["partial releases seen on the Hub"] += len(violations)
