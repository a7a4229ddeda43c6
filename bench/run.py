#!/usr/bin/env python
"""Benchmark hashing, staging and pushing against this machine's own limits (issue 6).

    .venv/bin/python bench/run.py [--quick] [--runs N] [--out DIR] [--data DIR]

Writes two full-size (2,342,169,824 B) random drafters once into a temp folder (real header from
`write_drafter`), builds releases from copies of artifacts/v5's spec pointing at them, and measures
side by side, in one run, each hf-release step against the machine's own reference:

* verify (sha256)          vs `openssl dgst -sha256` on the same file
* sha256 + md5, one pass   vs md5 alone (`openssl dgst -md5` and hashlib md5; the slower digest)
* two large files          hash_files(workers=1) vs the default (one thread per core)
* build                    vs `cp` of the same files (bytes written, inodes) and vs hash_file time
* first push               bytes read (rchar, and read_bytes with the release evicted from the cache)
* repeat push              large-file bytes read, bytes sent, wall time (CLI and in-process)
* peak RSS                 of build, verify and push processes (/usr/bin/time %M)
* reference                huggingface_hub's own upload_folder against the same local Hub

Every number is the median of --runs runs. Results go to OUT/RESULTS.md (default bench/). Every ratio
is printed as one line `[ratio] NAME: measured / target PASS|MISS` (tests/test_bench_smoke.py checks
the lines are there, never the timings). --quick uses drafters of about 60 MB (scaled-down widths) and one
run: a smoke in seconds, whose ratios mean nothing.

Cache state: hashing, verify, build and cp are measured warm (the files are in the page cache; the
targets compare CPU-bound hashing). Pushes are measured with the release's own files evicted from the
page cache (POSIX_FADV_DONTNEED, checked with mincore) while the rest of the cache, Python's modules
included, stays warm: read_bytes then counts the artifact bytes fetched from disk, and rchar counts
every read() call, page-cache hits too, so a second pass over a file cannot hide in the cache.
Nothing here drops the whole page cache: other work on the machine is left alone.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from release.kinds.dflash2_drafter.inventory import FULL_SIZE, write_drafter  # noqa: E402
from release.staged.digest import CHUNK, hash_file, hash_files  # noqa: E402

BIN = Path(sys.executable).parent
from measure import (  # noqa: E402
    EXAMPLE,
    MB,
    PROBE_BUILD,
    PROBE_VERIFY,
    MiB,
    Proc,
    Ratio,
    cpu_busy,
    cpu_seconds,
    disk,
    evict,
    hub_process,
    machine,
    make_spec,
    own_cpu,
    quick_config,
    read_io,
    resident_bytes,
    run,
    socket_bytes_sent,
    staged_files,
    timed,
    warm,
)
from scale import Scale, Sizes, scale_ratios  # noqa: E402
from versions import Versions, version_ratios  # noqa: E402

SCENARIOS = ("drafter", "many", "tiny", "shards", "resume", "next", "mixed")

QUICK_SIZE = 64 * MiB
RSS_LIMIT = 200 * MB


UPLOAD_FOLDER = """
import sys
from huggingface_hub import HfApi
endpoint, token, repo_id, folder = sys.argv[1:]
api = HfApi(endpoint=endpoint, token=token)
api.create_repo(repo_id, exist_ok=True)
info = api.upload_folder(folder_path=folder, repo_id=repo_id, commit_message="upload_folder reference")
print(info.oid)
"""


# --- the bench --------------------------------------------------------------------------------------


@dataclass
class Bench:
    work: Path
    data: Path
    size: int
    runs: int
    quick: bool
    hf: list[str]
    env: dict[str, str]
    token: str = field(default_factory=lambda: "bench-" + secrets.token_hex(12))
    samples: dict[str, list[float]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        self.samples.setdefault(key, []).append(float(value))

    def measure(self, key: str, fn: Callable[[], Any], *, serving: int | None = None) -> Any:
        """Time fn (work in this process, or a `run` it makes) and record its CPU and everyone else's meanwhile.

        key: wall seconds; key@cpu: CPU seconds of this process and its reaped children (the work itself);
        key@others: cores used on average by every other process on the machine meanwhile (contention).
        """
        hz = os.sysconf("SC_CLK_TCK")
        busy0, _ = cpu_busy()
        cpu0 = own_cpu()
        hub0 = cpu_seconds(serving) if serving else 0.0
        start = time.perf_counter()
        value = fn()
        wall = time.perf_counter() - start
        cpu = own_cpu() - cpu0
        hub = cpu_seconds(serving) - hub0 if serving else 0.0  # the local Hub answering this work is not "others"
        busy = (cpu_busy()[0] - busy0) / hz - hub
        self.add(key, value.wall if isinstance(value, Proc) else wall)
        self.add(f"{key}@cpu", cpu)
        self.add(f"{key}@others", max(0.0, busy - cpu) / wall)
        return value

    def contention(self, *keys: str) -> str:
        return "; ".join(
            f"{k} {self.med(k):.2f} s wall, {self.med(k + '@cpu'):.2f} CPU-s ({self.med(k + '@cpu') / self.med(k):.2f} "
            f"cores), other processes meanwhile {self.med(k + '@others'):.2f} of {os.cpu_count()} cores"
            for k in keys
        )

    def med(self, key: str) -> float:
        return statistics.median(self.samples[key])

    def spread(self, key: str) -> str:
        v = self.samples[key]
        return f"{min(v):.3f}–{max(v):.3f}" if len(v) > 1 else f"{v[0]:.3f}"

    # -- set-up --

    def prepare(self) -> None:
        config = json.loads((EXAMPLE / "config.json").read_text())
        drafter_config = config if not self.quick else quick_config(config, self.size)
        total = FULL_SIZE if not self.quick else None
        self.a = self.data / "drafter-a" / "model.safetensors"
        self.b = self.data / "drafter-b" / "model.safetensors"
        for seed, path in enumerate((self.a, self.b)):
            marker = path.with_suffix(".done")
            want = f"seed={seed} total={total} quick={self.quick}"
            if path.exists() and marker.exists() and marker.read_text() == want:
                log(f"reusing {path} ({path.stat().st_size:,} B)")
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            t, _ = timed(
                lambda path=path, seed=seed: write_drafter(
                    path, drafter_config, data="random", seed=seed, total_size=total
                )
            )
            marker.write_text(want)
            log(f"wrote {path} ({path.stat().st_size:,} B random) in {t:.1f} s")
        self.size_a = self.a.stat().st_size
        t, _ = timed(os.sync)  # clean pages, so evicting them later works
        log(f"sync {t:.1f} s")

        specs = self.work / "specs"
        # R1: the full-size release as shipped (sha256 + md5 on the drafter): build, push, reference.
        self.spec_full = make_spec(specs / "full", [(self.a, "model.safetensors")], md5=True, full_size=not self.quick)
        # R2: the same release with sha256 only: `verify` (sha256) against `openssl dgst -sha256`.
        self.spec_sha = make_spec(specs / "sha", [(self.a, "model.safetensors")], md5=False, full_size=not self.quick)
        # R3: two large files, sha256 only: parallel verify.
        self.spec_pair = make_spec(
            specs / "pair",
            [(self.a, "model.safetensors"), (self.b, "drafter-b/model.safetensors")],
            md5=False,
            full_size=not self.quick,
        )
        self.dist_full, self.dist_sha, self.dist_pair = (self.work / n for n in ("dist-full", "dist-sha", "dist-pair"))
        for spec, dist in ((self.spec_sha, self.dist_sha), (self.spec_pair, self.dist_pair)):
            run([*self.hf, "build", "v5", "--spec", str(spec), "--dist", str(dist), "--format", "json"], env=self.env)
        self.facts["release_files_pair"] = len(
            json.loads((self.dist_pair / "v5" / "release.json").read_text())["files"]
        )

    # -- one run --

    def run_once(self, i: int) -> None:
        hf, env, a, b = self.hf, self.env, self.a, self.b
        warm([a, b])

        # verify (sha256) vs openssl sha256, same file, warm
        self.measure("openssl_sha256", lambda: run(["openssl", "dgst", "-sha256", str(a)]))
        p = self.measure(
            "verify_cli", lambda: run([*hf, "verify", "v5", "--dist", str(self.dist_sha), "--format", "json"], env=env)
        )
        self.add("rss_verify", p.maxrss)
        from release.verify import verify_staged

        self.measure("verify_inproc", lambda: verify_staged(self.dist_sha / "v5"))
        self.measure("hash_sha", lambda: hash_file(a))

        # sha256 + md5 in one pass vs md5 alone
        self.measure("openssl_md5", lambda: run(["openssl", "dgst", "-md5", str(a)]))
        self.measure("hashlib_md5", lambda: md5_alone(a))
        self.measure("hash_both", lambda: hash_file(a, md5=True))

        # two large files: one thread vs the default
        jobs = [(a, False), (b, False)]
        self.measure("pair_w1", lambda: hash_files(jobs, workers=1))
        self.measure("pair_default", lambda: hash_files(jobs))
        p = self.measure(
            "verify_pair_cli",
            lambda: run([*hf, "verify", "v5", "--dist", str(self.dist_pair), "--format", "json"], env=env),
        )
        self.add("rss_verify", p.maxrss)

        # build vs cp, and vs hashing
        from release.builder import build
        from release.spec import load_spec

        self.measure("build_inproc", lambda: build(load_spec(self.spec_full), self.dist_full))
        p = self.measure(
            "build_cli",
            lambda: run(
                [*hf, "build", "v5", "--spec", str(self.spec_full), "--dist", str(self.dist_full), "--format", "json"],
                env=env,
            ),
        )
        self.add("build_write_bytes", p.io["write_bytes"])
        self.add("build_wchar", p.io["wchar"])
        self.add("rss_build", p.maxrss)
        staged = self.dist_full / "v5"
        self.facts["inode_equal"] = (staged / "model.safetensors").stat().st_ino == a.stat().st_ino
        files = staged_files(staged)
        self.release_size = sum(f.stat().st_size for f in files)
        sources = [a] + [f for f in (self.spec_full.parent).iterdir() if f.is_file() and f.name != "release.toml"]
        cp_dir = self.work / "cp"
        cp_dir.mkdir(exist_ok=True)
        p = run(["cp", "--reflink=never", *map(str, sources), str(cp_dir)])
        self.add("cp", p.wall)
        self.add("cp_write_bytes", p.io["write_bytes"])
        shutil.rmtree(cp_dir)

        # first push, repeat push, in-process repeat push: the Hub in its own process
        with hub_process(hf, self.work / f"hub-{i}", self.token, env) as hub:
            left = evict(files)
            self.facts["evicted_left_push"] = left
            cpu0, hub_io0 = cpu_seconds(hub.pid), read_io(hub.pid)
            p = run(
                [
                    *hf,
                    "push",
                    "v5",
                    "--dist",
                    str(self.dist_full),
                    "--endpoint",
                    hub.url,
                    "--token",
                    self.token,
                    "--format",
                    "json",
                ],
                env=env,
            )
            out = p.json()
            assert out["commit"] and out["tag"] == "v5" and out["verified"], out
            self.add("push_hub_wchar", read_io(hub.pid)["wchar"] - hub_io0["wchar"])
            self.add("push_wall", p.wall)
            self.add("push_rchar", p.io["rchar"])
            self.add("push_read_bytes", p.io["read_bytes"])
            self.add("push_wchar", p.io["wchar"])
            self.add("push_cpu", p.cpu)
            self.add("push_hub_cpu", cpu_seconds(hub.pid) - cpu0)
            self.add("rss_push", p.maxrss)
            self.facts["push_bytes_sent"] = out["bytes_sent"]

            evict([a])
            hub_io0 = read_io(hub.pid)
            p = self.measure(
                "repeat_wall",
                lambda: run(
                    [
                        *hf,
                        "push",
                        "v5",
                        "--dist",
                        str(self.dist_full),
                        "--endpoint",
                        hub.url,
                        "--token",
                        self.token,
                        "--format",
                        "json",
                    ],
                    env=env,
                ),
                serving=hub.pid,
            )
            out = p.json()
            assert out["plan"]["tag"] == "keep" and out["bytes_sent"] == 0, out
            self.add("repeat_rchar", p.io["rchar"])
            self.add("repeat_wchar", p.io["wchar"])
            self.add("repeat_large_resident", resident_bytes(a))
            hub_io1 = read_io(hub.pid)
            self.add("repeat_hub_rchar", hub_io1["rchar"] - hub_io0["rchar"])
            self.add("repeat_hub_wchar", hub_io1["wchar"] - hub_io0["wchar"])
            self.add("rss_push", p.maxrss)
            if i == 0:  # a count, not a timing: once is enough
                sent = socket_bytes_sent(
                    [
                        *hf,
                        "push",
                        "v5",
                        "--dist",
                        str(self.dist_full),
                        "--endpoint",
                        hub.url,
                        "--token",
                        self.token,
                        "--format",
                        "json",
                    ],
                    env,
                    self.work / "strace",
                )
                self.facts["repeat_socket_bytes"] = sent

            from release.publish.push import PushOptions, push

            evict([a])
            t, result = timed(lambda: push(self.dist_full / "v5", PushOptions(endpoint=hub.url, token=self.token)))
            assert result.plan.tag == "keep" and result.bytes_sent == 0
            self.add("repeat_inproc", t)
            self.add("repeat_inproc_large_resident", resident_bytes(a))

        # the reference: huggingface_hub's upload_folder, same files, same kind of fresh local Hub
        with hub_process(hf, self.work / f"hub-ref-{i}", self.token, env) as hub:
            self.facts["evicted_left_ref"] = evict(files)
            cpu0 = cpu_seconds(hub.pid)
            ref_env = {**env, "HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
            p = run(
                [sys.executable, "-c", UPLOAD_FOLDER, hub.url, self.token, "bench/upload-folder", str(staged)],
                env=ref_env,
            )
            self.add("ref_wall", p.wall)
            self.add("ref_rchar", p.io["rchar"])
            self.add("ref_read_bytes", p.io["read_bytes"])
            self.add("ref_wchar", p.io["wchar"])
            self.add("ref_hub_cpu", cpu_seconds(hub.pid) - cpu0)
            self.add("rss_ref", p.maxrss)

    def startup(self) -> None:
        """What Python start-up and imports cost before any work (the floor under every CLI number)."""
        py = sys.executable
        self.add("start_version", run([*self.hf, "--version"], env=self.env).wall)
        self.add("import_verify", run([py, "-c", "import release.cli, release.verify"], env=self.env).wall)
        self.add("import_build", run([py, "-c", "import release.cli, release.builder"], env=self.env).wall)
        self.add("import_push", run([py, "-c", "import release.cli, release.publish.push"], env=self.env).wall)

    def probe(self) -> None:
        """Once, in fresh processes: where build's and verify's time goes besides hashing (step by step)."""
        warm([self.a])
        build = run(
            [sys.executable, "-c", PROBE_BUILD, str(self.spec_full), str(self.work / "dist-probe")], env=self.env
        ).json()
        shutil.rmtree(self.work / "dist-probe", ignore_errors=True)
        verify = run([sys.executable, "-c", PROBE_VERIFY, str(self.dist_sha / "v5")], env=self.env).json()
        self.facts["probe_build"] = build
        self.facts["probe_verify"] = verify
        steps = sorted(build["steps"].items(), key=lambda kv: -kv[1])
        self.facts["probe_build_text"] = (
            f"a fresh build process: imports {build['imports']:.2f} s, then "
            + ", ".join(f"{name} {t:.2f} s" for name, t in steps[:4])
            + f", the other {len(steps) - 4} steps {sum(t for _, t in steps[4:]):.2f} s; {build['total']:.2f} s in all"
        )
        self.facts["probe_verify_text"] = (
            f"a fresh verify process: imports {verify['imports']:.2f} s, verify_staged {verify['verify_staged']:.2f} "
            "s of "
            f"which the card lint {verify['lint']:.2f} s (in a warm process: {self.med('verify_inproc'):.2f} s in all)"
        )

    # -- results --

    def ratios(self) -> list[Ratio]:
        m, mn = self.med, (lambda k: min(self.samples[k]))
        size, release = self.size_a, self.release_size
        r: list[Ratio] = []

        r.append(
            Ratio(
                "verify-sha256-vs-openssl",
                "`hf-release verify` (sha256 only, one large file) throughput / `openssl dgst -sha256` throughput, "
                "same file",
                m("openssl_sha256") / m("verify_cli"),
                0.9,
                True,
                "x",
                "warm",
                note=f"verify {m('verify_cli'):.2f} s = {size / m('verify_cli') / MB:.0f} MB/s, openssl "
                f"{m('openssl_sha256'):.2f} s "
                f"= {size / m('openssl_sha256') / MB:.0f} MB/s; in-process verify_staged {m('verify_inproc'):.2f} s "
                f"({m('openssl_sha256') / m('verify_inproc'):.3f}x), hash_file {m('hash_sha'):.2f} s "
                f"({m('openssl_sha256') / m('hash_sha'):.3f}x); best runs: verify {mn('verify_cli'):.2f} s, openssl "
                f"{mn('openssl_sha256'):.2f} s",
                explain=f"the CLI costs {m('verify_cli') - m('verify_inproc'):.2f} s more than the same verify_staged "
                "call in a "
                f"running process; {self.facts['probe_verify_text']}; `hf-release --version` takes "
                f"{m('start_version'):.2f} s. The hashing itself is at "
                f"{m('openssl_sha256') / m('hash_sha'):.3f}x openssl (hash_file) and verify_staged in-process at "
                f"{m('openssl_sha256') / m('verify_inproc'):.3f}x. With sha256 at ~1 GB/s the whole file takes "
                f"~{size / 1e9:.1f} s, so 0.9x leaves ~{0.11 * m('openssl_sha256'):.2f} s for interpreter start-up "
                f"and imports.",
                plan="start-up and the card lint, not hashing. (1) release/card/lint.py imports "
                "huggingface_hub.repocard "
                "(which loads hf_api and file_download, ~0.3 s) for one regex and ModelCardData: copy the regex, "
                "validate with a lighter import. (2) release/verify.py imports the linter (markdown-it, jsonschema, "
                "the checks with numpy and safetensors) before the first byte is hashed: start the hashing first and "
                "import/lint while it runs (hashing releases the GIL, the second core is idle for one file). "
                "(3) release/cli.py imports release.spec (jsonschema) for every command. Owners of those files, "
                "not bench/.",
            )
        )
        md5_alone = min(m("openssl_md5"), m("hashlib_md5"))
        r.append(
            Ratio(
                "sha256+md5-one-pass-vs-md5-alone",
                "hash_file(md5=True) time / md5-alone time (the faster of `openssl dgst -md5` and hashlib md5)",
                m("hash_both") / md5_alone,
                1.1,
                False,
                "x",
                "warm",
                note=f"one pass {m('hash_both'):.2f} s; openssl md5 {m('openssl_md5'):.2f} s, hashlib md5 "
                f"{m('hashlib_md5'):.2f} s, "
                f"sha256 alone {m('hash_sha'):.2f} s (series would be {m('hashlib_md5') + m('hash_sha'):.2f} s); best "
                "runs: "
                f"one pass {mn('hash_both'):.2f} s, md5 {min(mn('hashlib_md5'), mn('openssl_md5')):.2f} s",
                explain=f"the pass runs md5 on a side thread while the reading thread runs sha256: it needs "
                f"{(m('hashlib_md5@cpu') + m('hash_sha@cpu')) / m('hashlib_md5'):.2f} cores for md5's wall time, md5 "
                "alone "
                f"needs one. Measured: {self.contention('hash_both', 'hashlib_md5')}.",
                plan="if other processes held a core (see contention), rerun on a quiet machine: the pass cannot be "
                "faster "
                "than md5 on one core plus sha256 on another. If it misses on a quiet machine, move sha256 to a second "
                "side thread too, so the reader only reads and neither digest waits for a read "
                "(release/staged/digest.py).",
            )
        )
        r.append(
            Ratio(
                "verify-2-files-parallel-vs-1-thread",
                "hash_files(workers=1) time / hash_files() (default: one thread per core) time, two large files, "
                "sha256",
                m("pair_w1") / m("pair_default"),
                1.7,
                True,
                "x",
                "warm",
                note=f"workers=1 {m('pair_w1'):.2f} s, default {m('pair_default'):.2f} s; `hf-release verify` of that "
                "release "
                f"{m('verify_pair_cli'):.2f} s ({m('pair_w1') / m('verify_pair_cli'):.3f}x one thread); best runs: "
                f"{mn('pair_w1'):.2f} s vs {mn('pair_default'):.2f} s = {mn('pair_w1') / mn('pair_default'):.2f}x",
                explain="the default hashes the two files on two threads, one per core; a core busy with other work "
                "cannot "
                f"give its share to the second thread. Measured: {self.contention('pair_default', 'pair_w1')}.",
                plan="rerun on a quiet machine: the target needs both cores free for the whole pass.",
            )
        )
        r.append(
            Ratio(
                "build-staging-bytes-written",
                "bytes the `hf-release build` process wrote to storage (write_bytes) / release size",
                m("build_write_bytes") / release,
                0.01,
                False,
                "frac",
                "warm",
                note=f"build wrote {m('build_write_bytes'):,.0f} B (wchar {m('build_wchar'):,.0f} B: manifest, sums, "
                "card), "
                f"`cp` of the same files wrote {m('cp_write_bytes'):,.0f} B of {release:,} B",
                explain="staging copied data instead of hard-linking it.",
                plan="release/builder/collect.py copies only across filesystems: keep dist on the artifacts' "
                "filesystem.",
            )
        )
        r.append(
            Ratio(
                "build-inode-shared",
                "staged drafter's inode == source drafter's inode (1: hard link, 0: copy)",
                1.0 if self.facts["inode_equal"] else 0.0,
                1.0,
                True,
                "frac",
                "warm",
                explain="the staged drafter is a copy.",
                plan="see build-staging-bytes-written.",
            )
        )
        r.append(
            Ratio(
                "build-vs-hash",
                "`hf-release build` time / hash_file(md5=True) time, full-size release (sha256 + md5)",
                m("build_cli") / m("hash_both"),
                1.1,
                False,
                "x",
                "warm",
                note=f"build CLI {m('build_cli'):.2f} s, build() in-process {m('build_inproc'):.2f} s "
                f"({m('build_inproc') / m('hash_both'):.3f}x), hash_file {m('hash_both'):.2f} s; `cp` of the same "
                "files "
                f"{m('cp'):.2f} s (build / cp {m('build_cli') / m('cp'):.2f}x; cp's time excludes writeback)",
                explain=f"CLI − in-process = {m('build_cli') - m('build_inproc'):.2f} s; "
                f"{self.facts['probe_build_text']}. "
                f"Contention: {self.contention('build_cli', 'hash_both')}.",
                plan="the digest step is at the machine's limit (see the md5 line); the rest is fixed cost in a fresh "
                "process, mostly render-card (importing matplotlib and drawing the chart). Draw the chart while the "
                "digest threads hash (it depends on the bench evidence, not on digests), or cache it keyed by the "
                "evidence files' sha256; trim release/cli.py's top-level imports. Owners: release/builder/, "
                "release/card, release/cli.py (not bench/).",
            )
        )
        r.append(
            Ratio(
                "push-first-bytes-read",
                "first push: rchar of the push process (every read() call, page-cache hits included) / release size",
                m("push_rchar") / release,
                1.05,
                False,
                "x",
                "release files evicted",
                note=f"rchar {m('push_rchar'):,.0f} B; read_bytes (from disk) {m('push_read_bytes'):,.0f} B = "
                f"{m('push_read_bytes') / release:.3f}x; a no-op repeat push reads {m('repeat_rchar'):,.0f} B (Python "
                "modules, "
                f"small files), so artifact reads ≈ {(m('push_rchar') - m('repeat_rchar')) / release:.4f}x; the Hub "
                "stored "
                f"{m('push_hub_wchar'):,.0f} B (multipart parts + assembled object); wall {m('push_wall'):.2f} s, push "
                f"CPU {m('push_cpu'):.2f} s, Hub process CPU {m('push_hub_cpu'):.2f} s; still cached after eviction: "
                f"{self.facts.get('evicted_left_push', 0):,} B",
                explain=f"rchar − release size = {m('push_rchar') - release:,.0f} B; a repeat push (no file data) "
                "reads "
                f"{m('repeat_rchar'):,.0f} B.",
                plan="find the second reader (huggingface_hub hashing a file whose sha256 was not handed over? a "
                "re-hash in "
                "the preflight?) and give it the manifest's digest (release/publish/apply.py).",
            )
        )
        r.append(
            Ratio(
                "push-repeat-large-file-bytes-read",
                "repeat push: bytes of the drafter back in the page cache after the push (evicted before it; mincore)",
                m("repeat_large_resident"),
                0,
                False,
                "B",
                "drafter evicted",
                note=f"in-process repeat push: {m('repeat_inproc_large_resident'):,.0f} B; the process's rchar "
                f"{m('repeat_rchar'):,.0f} B in all (Python modules and the small release files)",
                explain="the repeat push read the drafter.",
                plan="find the reader: a missing or stale stat record (release/staged/__init__.py) makes the "
                "preflight re-hash.",
            )
        )
        sent = self.facts.get("repeat_socket_bytes")
        r.append(
            Ratio(
                "push-repeat-bytes-sent",
                "repeat push: bytes the push process sent on TCP sockets (strace of its send/write calls: HTTP "
                "requests)"
                if sent is not None
                else "repeat push: bytes the Hub process wrote meanwhile (strace not installed)",
                sent if sent is not None else m("repeat_hub_wchar"),
                64 * 1024,
                False,
                "B",
                "warm",
                note="hf-release reports 0 bytes sent and no commit; the Hub process wrote "
                f"{m('repeat_hub_wchar'):,.0f} B "
                f"meanwhile (during the first push it stored {m('push_hub_wchar'):,.0f} B)",
                explain="more than API requests went out.",
                plan="check the plan: was a commit made?",
            )
        )
        r.append(
            Ratio(
                "push-repeat-time-cli",
                "repeat push: wall time of the `hf-release push` process (start-up included)",
                m("repeat_wall"),
                1.0,
                False,
                "s",
                "warm",
                note=f"the same push in a running process {m('repeat_inproc'):.2f} s; start-up floor: `hf-release "
                "--version` "
                f"{m('start_version'):.2f} s, `import release.cli, release.publish.push` {m('import_push'):.2f} s; "
                "best run "
                f"{mn('repeat_wall'):.2f} s",
                explain=f"`import release.cli, release.publish.push` alone takes {m('import_push'):.2f} s of the "
                f"{m('repeat_wall'):.2f} s; "
                f"the push's own work (in-process) {m('repeat_inproc'):.2f} s. Contention: "
                f"{self.contention('repeat_wall')}.",
                plan="start-up dominates: release/cli.py imports release.spec (jsonschema) for every command and "
                "huggingface_hub + httpx2 take ~0.25 s; import those lazily (release/cli.py, release/hub/client.py, "
                "not "
                "bench-owned). The push's own requests (whoami, repo, refs, tree, then refs and tree again for the "
                "remote verify) are ~0.05 s each on the local Hub.",
            )
        )
        r.append(
            Ratio(
                "push-repeat-time-in-process",
                "repeat push: wall time of release.publish.push.push() in a running process",
                m("repeat_inproc"),
                0.5,
                False,
                "s",
                "warm",
                note="the first push() call in this process: HTTP session set-up included",
                explain="the no-op push's requests are slow on this Hub.",
                plan="count the requests; when the tag is kept, the remote verify re-lists refs and the tree the "
                "preflight "
                "just listed (release/publish/push.py).",
            )
        )
        for key, label in (("rss_build", "build"), ("rss_verify", "verify"), ("rss_push", "push")):
            r.append(
                Ratio(
                    f"peak-rss-{label}",
                    f"peak RSS of `hf-release {label}` at full size (/usr/bin/time %M; max over its runs)",
                    max(self.samples[key]),
                    RSS_LIMIT,
                    False,
                    "MB",
                    "warm" if label != "push" else "release files evicted",
                    note={
                        "build": "includes matplotlib (the card's chart)",
                        "verify": "one- and two-file releases",
                        "push": "first and repeat pushes",
                    }[label],
                    explain=f"{label} peaked at {max(self.samples[key]) / MB:.0f} MB.",
                    plan="find what grows with the file (a whole multipart part held in memory?) and stream it.",
                )
            )
        r.append(
            Ratio(
                "push-vs-upload_folder-bytes-read",
                "first push rchar / huggingface_hub upload_folder rchar (same files, same kind of fresh local Hub)",
                m("push_rchar") / m("ref_rchar"),
                1.0,
                False,
                "x",
                "release files evicted",
                note=f"upload_folder rchar {m('ref_rchar'):,.0f} B ({m('ref_rchar') / release:.3f}x the release: it "
                "hashes each "
                f"file, then uploads it), read_bytes {m('ref_read_bytes'):,.0f} B "
                f"({m('ref_read_bytes') / release:.3f}x: "
                f"the second pass is served by the page cache, which is why the target uses rchar)",
                explain="push reads more than upload_folder.",
                plan="see push-first-bytes-read.",
            )
        )
        r.append(
            Ratio(
                "push-vs-upload_folder-time",
                "first push wall time / upload_folder wall time (same files, same kind of fresh local Hub)",
                m("push_wall") / m("ref_wall"),
                1.0,
                False,
                "x",
                "release files evicted",
                note=f"push {m('push_wall'):.2f} s (Hub CPU {m('push_hub_cpu'):.2f} s), upload_folder "
                f"{m('ref_wall'):.2f} s (Hub "
                f"CPU {m('ref_hub_cpu'):.2f} s); peak RSS upload_folder {max(self.samples['rss_ref']) / MB:.0f} MB; "
                "the "
                f"Hub's share (receive, sha256, write parts, assemble, fsync twice) dominates both",
                explain=f"push also runs the preflight, tags and verifies remotely; its start-up imports take "
                f"{m('import_push'):.2f} s.",
                plan="see push-repeat-time-cli for the start-up share; the rest is the local Hub's.",
            )
        )
        return r


def md5_alone(path: Path) -> str:
    import hashlib

    return _one_digest(path, hashlib.md5())


def _one_digest(path: Path, h: Any) -> str:
    """One digest, the same read loop as release.staged.digest (8 MiB readinto), nothing else."""
    buf = bytearray(CHUNK)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(memoryview(buf)[:n])
    return h.hexdigest()


def log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


FAILED: dict[str, str] = {}  # scenario step -> its error: a long run keeps the other scenarios' results


def logged(what: str, fn: Callable[[], Any]) -> None:
    start = time.perf_counter()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - recorded in RESULTS.md, the run goes on
        FAILED[what] = f"{type(exc).__name__}: {str(exc)[-800:]}"
        log(f"{what} FAILED after {time.perf_counter() - start:.1f} s: {FAILED[what]}")
        return
    log(f"{what} done in {time.perf_counter() - start:.1f} s")


def drafter_line(bench: Bench) -> str:
    if "verify_cli" not in bench.samples:
        return "Drafter scenario: not run (--scenarios)."
    return (
        f'Drafter: {bench.size_a:,} B of random data with a real 81-tensor header (`write_drafter(data="random")`), '
        f"written once; second large file for the two-file release: {bench.b.stat().st_size:,} B (another seed). "
        f"Full-size release pushed: {bench.release_size:,} B in {len(staged_files(bench.dist_full / 'v5'))} files."
    )


def scale_line(bench: Bench) -> str:
    s, ran = bench.facts["sizes"], set(bench.facts["scenarios"]) - {"drafter"}
    parts = []
    if "many" in ran:
        parts.append(
            f"many files: the example release plus {' / '.join(f'{n:,}' for n in s['counts'])} random files of "
            f"{s['small_size']:,} B (role extra, one folder)"
        )
    if "tiny" in ran:
        parts.append(f"small-file memory: {s['tiny_count']:,} random files of {s['tiny_size']:,} B in folders of 5,000")
    if {"shards", "resume"} & ran:
        parts.append(f"shards: {s['shards']} random safetensors shards of ~{s['shard_size']:,} B (sha256 only)")
    if "resume" in ran:
        parts.append(
            "resume: a push of the shards SIGKILLed once about half of them are complete on the Hub, then run again"
        )
    if "next" in ran:
        parts.append(
            "next version: the example with a full-size sparse drafter built as v5, `init v6 --from v5` with one "
            "ledger row added, `build v6`, then `push v5 --dry-run` (bench/versions.py)"
        )
    if "mixed" in ran and "mixed" in bench.facts:
        x = bench.facts["mixed"]
        parts.append(
            f"mixed release: the example + {x['large']} × {x['large_size']:,} B sparse + {x['small']:,} × "
            f"{x['small_size']:,} B random ({x['files']:,} files, bench/versions.py)"
        )
    return ("Scale scenarios (bench/scale.py): " + "; ".join(parts) + ".") if parts else "Scale scenarios: not run."


def write_results(bench: Bench, ratios: list[Ratio], out: Path, info: dict[str, str], elapsed: float) -> Path:
    m = bench.med
    lines = [
        "# hf-release bench results",
        "",
        f"Generated by `bench/run.py{' --quick' if bench.quick else ''} --runs {bench.runs}` on "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} in {elapsed:.0f} s. "
        f"Medians of {bench.runs} run(s){' — QUICK SMOKE: small files, not a measurement' if bench.quick else ''}.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {info['cpu']} |",
        f"| SHA-NI | {info['sha_ni']} (AVX2 {info['avx2']}) |",
        f"| cores | {info['cores']} |",
        f"| RAM | {info['ram']} |",
        f"| disk (bench folder) | {info['disk']} |",
        f"| cold sequential read | {info.get('cold_read', '?')} |",
        f"| kernel | {info['kernel']} |",
        f"| Python | {info['python']} ({info['openssl_python']}) |",
        f"| openssl CLI | {info['openssl_cli']} |",
        f"| huggingface_hub | {info['huggingface_hub']} (hf_xet {info['hf_xet']}; the local Hub offers Xet since "
        "issue 39: pushes go through it unless HF_HUB_DISABLE_XET=1) |",
        f"| load average at start / end | {info['load_start']} / {info['load_end']} |",
        f"| CPU used by other processes during the bench | {bench.facts.get('other_load', '?')} |",
        "",
        drafter_line(bench),
        "",
        scale_line(bench),
        "",
        "## Ratios",
        "",
        "| ratio | measured | target | result | cache | what | detail |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in ratios:
        lines.append(
            f"| {r.name} | {r.show(r.value)} | {r.target_text} | {'PASS' if r.ok else '**MISS**'} | {r.cache} | "
            f"{r.what} | {r.note} |"
        )
    if bench.facts.get("failed"):
        lines += ["", "## Scenario steps that failed (their ratios are missing)", ""]
        lines += [f"- {what}: {error}" for what, error in bench.facts["failed"].items()]
    misses = [r for r in ratios if not r.ok]
    lines += ["", "## Misses", ""]
    if not misses:
        lines.append("None.")
    for r in misses:
        lines += [
            f"### {r.name}: {r.show(r.value)} vs {r.target_text}",
            "",
            f"- gap, measured: {r.explain}",
            f"- plan: {r.plan}",
            "",
        ]
    timed_keys = sorted(k for k in bench.samples if f"{k}@cpu" in bench.samples)
    lines += [
        "",
        "## Contention during each timed measurement (medians)",
        "",
        "CPU is this work's own (process + reaped children); others is the average number of cores every other "
        "process on the machine used meanwhile (from /proc/stat). Hashing targets need their cores free.",
        "",
        "| measurement | wall s | CPU s | cores used | others' cores | wall min–max |",
        "|---|---|---|---|---|---|",
    ]
    for key in timed_keys:
        lines.append(
            f"| {key} | {m(key):.2f} | {m(key + '@cpu'):.2f} | {m(key + '@cpu') / m(key):.2f} | "
            f"{m(key + '@others'):.2f} | {bench.spread(key)} |"
        )
    lines += ["", "## Raw medians (seconds unless bytes)", "", "| measurement | median | min–max |", "|---|---|---|"]
    for key in sorted(k for k in bench.samples if "@" not in k):
        lines.append(f"| {key} | {m(key):,.3f} | {bench.spread(key)} |")
    lines += [
        "",
        "## Method",
        "",
        "- Every CLI number is one `hf-release` process, timed from spawn to exit; its `/proc/<pid>/io` is read "
        "after it exits and before it is reaped (waitid WNOWAIT), its peak RSS comes from wait4's ru_maxrss.",
        "- Warm: the files are in the page cache (read once before each run). Hashing targets compare CPU-bound work.",
        "- Pushes: the staged release's files are evicted from the page cache (POSIX_FADV_DONTNEED on clean pages, "
        "checked with mincore) before each push and before upload_folder; the rest of the cache (Python modules) "
        "stays warm, and nothing drops the whole machine's cache. The bytes-read target uses **rchar** (every "
        "read() call, page-cache hits and socket reads included: an upper bound on artifact reads, which a second "
        "pass over a file cannot hide from) — read_bytes (real disk reads) is shown beside it; upload_folder shows "
        "why read_bytes alone would mislead: its sha256 pass pulls the file into the cache and its upload pass is "
        "then not counted.",
        "- rchar/wchar count read()/write() calls; Python sockets use recv()/send(), which they do not count, so "
        "for these processes rchar is file reads (artifacts and Python modules). A no-op repeat push's rchar is the "
        "module/small-file floor.",
        '- Repeat push "reads no file data": the drafter is evicted before it, and mincore after it counts the '
        'drafter\'s bytes that came back into the cache. "Sends nothing": an strace of one repeat push sums the '
        "bytes of its send/write calls on TCP sockets (HTTP requests only), and the Hub process's wchar shows it "
        "stored nothing.",
        "- Peak RSS: each command runs under /usr/bin/time (%M); wait4's ru_maxrss of a direct child would "
        "inherit this bench process's own high-water mark through exec.",
        "- The local Hub runs as its own `hf-release hub serve` process on a free loopback port, fresh root per "
        "push, so the push process's counters hold only the push; upload_folder gets its own fresh Hub (the Hub "
        "deduplicates stored objects).",
        "- The Hub stores each upload twice (multipart parts, then the assembled object, each fsynced): its CPU "
        "and disk time are in both push and upload_folder wall times.",
    ]
    out.mkdir(parents=True, exist_ok=True)
    path = out / "RESULTS.md"
    path.write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(
        json.dumps(
            {
                "machine": info,
                "runs": bench.runs,
                "quick": bench.quick,
                "facts": bench.facts,
                "samples": bench.samples,
                "ratios": [{"name": r.name, "value": r.value, "target": r.target, "ok": r.ok} for r in ratios],
            },
            indent=1,
            default=str,
        )
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="64 MB files, 1 run: a smoke in seconds, not a measurement"
    )
    parser.add_argument("--runs", type=int, default=None, help="runs to take the median of (default 3; --quick: 1)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench", help="folder for RESULTS.md and results.json")
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="keep the random drafters in this folder and reuse them next time (default: a temp folder, removed)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="parent of the temp folder (default: $TMPDIR)")
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help=f"comma-separated subset of {','.join(SCENARIOS)} (default: all)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=None,
        help="run the scale scenarios at this fraction of full size (file counts, shard size)",
    )
    args = parser.parse_args(argv)
    scenarios = [s for s in args.scenarios.split(",") if s]
    if not scenarios or set(scenarios) - set(SCENARIOS):
        parser.error(f"--scenarios: choose from {','.join(SCENARIOS)}")
    sizes = Sizes.quick() if args.quick else Sizes.scaled(args.scale) if args.scale else Sizes()
    runs = args.runs or (1 if args.quick else 3)
    size = QUICK_SIZE if args.quick else FULL_SIZE
    started = time.perf_counter()
    busy0, total0 = cpu_busy()
    cpu0 = own_cpu()
    load_start = " ".join(Path("/proc/loadavg").read_text().split()[:3])

    work = Path(tempfile.mkdtemp(prefix="hf-release-bench-", dir=args.workdir))
    data = args.data.resolve() if args.data else work / "data"
    free = shutil.disk_usage(work).free
    need = (
        size * (2 + 3) + 2 * size if "drafter" in scenarios else 0
    )  # two drafters, cp copy, Hub parts + object, headroom
    if {"shards", "resume"} & set(scenarios):  # the shards, then the Hub's parts and objects of two pushes
        need += sizes.shards * sizes.shard_size * 3
    if "many" in scenarios:
        need += 3 * sum(sizes.counts) * sizes.small_size
    if "mixed" in scenarios:  # its large files are sparse
        need += 2 * 5_000 * 100_000
    log(f"work folder {work}; {free / 1e9:.1f} GB free, need about {need / 1e9:.1f} GB")
    if free < need:
        shutil.rmtree(work, ignore_errors=True)
        print(f"not enough disk: {free / 1e9:.1f} GB free at {work}, need {need / 1e9:.1f} GB", file=sys.stderr)
        return 2

    # An installed hf-release runs from bytecode (pip compiles at install); a checkout run where
    # PYTHONDONTWRITEBYTECODE is set would recompile the package in every CLI process (~0.3 s each).
    compileall.compile_dir(ROOT / "release", quiet=1)
    hf_script = BIN / "hf-release"
    hf = [str(hf_script)] if hf_script.exists() else [sys.executable, "-m", "release"]
    env = {
        **os.environ,
        "HF_HOME": str(work / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_OFFLINE": "0",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("HF_TOKEN", None)
    env.pop("HF_ENDPOINT", None)
    os.environ.update({k: env[k] for k in ("HF_HOME", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_DISABLE_PROGRESS_BARS")})
    os.environ.pop("HF_TOKEN", None)

    bench = Bench(work=work, data=data, size=size, runs=runs, quick=args.quick, hf=hf, env=env)
    bench.facts["scenarios"] = scenarios
    bench.facts["sizes"] = asdict(sizes)
    scale = Scale(bench, sizes)
    versions = Versions(bench, quick=args.quick)
    drafter = "drafter" in scenarios
    try:
        info = machine()
        info["disk"] = disk(work)
        info["cold_read"] = "not measured (--quick)"
        if drafter:
            bench.prepare()
            if not args.quick:  # one cold sequential read of the drafter, for the machine description
                evict([bench.a])
                t = run(["dd", f"if={bench.a}", "of=/dev/null", "bs=8M"]).wall
                info["cold_read"] = f"{bench.size_a / t / MB:.0f} MB/s (dd of the drafter after evicting it)"
            bench.startup()
        if "many" in scenarios:
            logged("many-files set-up", scale.prepare_many)
        if {"shards", "resume"} & set(scenarios):
            logged("shards set-up", scale.prepare_shards)
        if "mixed" in scenarios:
            logged("mixed-release set-up", versions.prepare_mixed)
        for i in range(runs):
            if drafter:
                logged(f"drafter run {i + 1}/{runs}", lambda i=i: bench.run_once(i))
            if "many" in scenarios:
                logged(f"many-files run {i + 1}/{runs}", scale.run_many)
            if {"shards", "resume"} & set(scenarios):
                logged(f"shards run {i + 1}/{runs}", scale.run_shards)
            if "mixed" in scenarios and "mixed-release set-up" not in FAILED:
                logged(f"mixed-release run {i + 1}/{runs}", versions.run_mixed)
        if "next" in scenarios:  # byte counts, not timings: once
            logged("next version", versions.run_next)
        if "many" in scenarios:
            logged("many-files probe and push", lambda: (scale.probe_many(), scale.push_many()))
        if "tiny" in scenarios:
            logged("50k-files memory", scale.run_tiny)
        if "resume" in scenarios:
            logged("killed and resumed push", scale.run_resume)
        if drafter:
            for _ in range(0 if args.quick else 2):
                bench.startup()
            bench.probe()
        busy1, total1 = cpu_busy()
        ncpu = os.cpu_count() or 1
        wall = time.perf_counter() - started
        ours = own_cpu() - cpu0
        others = max(0.0, (busy1 - busy0) / os.sysconf("SC_CLK_TCK") - ours)
        bench.facts["other_load"] = (
            f"{others / wall:.2f} of {ncpu} cores on average ({others:.0f} CPU-s in {wall:.0f} s)"
        )
        info["load_start"] = load_start
        info["load_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        drafter_ok = drafter and not any(what.startswith("drafter") for what in FAILED)
        ratios = (bench.ratios() if drafter_ok else []) + scale_ratios(bench) + version_ratios(bench)
        bench.facts["failed"] = FAILED
        for r in ratios:
            print(r.line, flush=True)
            if r.note:
                print(f"        {r.note}", flush=True)
        path = write_results(bench, ratios, args.out, info, time.perf_counter() - started)
        log(f"wrote {path} in {time.perf_counter() - started:.0f} s total")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
