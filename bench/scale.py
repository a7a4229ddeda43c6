"""The releases users really make, beside bench/run.py's single drafter (issue 16).

* many files    500 / 2,000 / 5,000 files of 100 KB added to the example release: the marginal cost of build and
                verify (time with them − time without them, so start-up is measured apart) against `openssl dgst
                -sha256` over two processes on the same files, and the per-file slope; one push of the largest
                release: one commit whatever the file count.
* 50k files     50,000 files of 1 KB (10 folders of 5,000): peak RSS of build, verify and push.
* shards        8 × 1 GiB random safetensors shards: build and verify against openssl over two processes; peak RSS.
* resume        a push of the shards killed (SIGKILL) once some shards are complete on the Hub, then pushed
                again: bytes on the wire (strace) against the bytes the Hub lacked; what hf-release reports; what
                the kill threw away.

Every scenario takes the Bench of bench/run.py (its run/measure/add/facts) and a Sizes (reduced with --quick or
--scale); its ratios come from scale_ratios().
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure import (
    EXAMPLE,
    MB,
    PROBE_BUILD,
    Ratio,
    evict,
    hub_process,
    make_spec,
    quick_config,
    read_io,
    run,
    traced_sends,
    warm,
)

GiB = 1 << 30
# Causes measured outside the timed runs (tracemalloc on 5,000 × 100 KB files, this machine, 2026-11-30):
MEASURED_CARD = (
    "Measured (2026-12-01, 50,000 × 1 KB, issue 24's compact record): each staged file is one slotted "
    "record (str source, the staged path made on demand, a six-int FileStat), which the card's files table, "
    "the comparison and the release digest read themselves; the digest record is kept as its lines and "
    "merged as a stream; release.json, SHA256SUMS, the stat record and the CLI's JSON are written in blocks. "
    "Peak RSS 288 → 186 MB (first build), 316 → 193 MB (rebuild), 182 → 165 MB (verify); what remains is "
    "~1.2 KB of Python objects a file (tests/builder/test_memory.py) plus ~100 MB of modules and fragmentation."
)
MEASURED_PUSH = (
    "Measured (2026-12-01, by hand, /usr/bin/time %M): 50,018 files (50,000 × 1 KB + the example) peak at 167 MB, "
    "one commit + the tag (main: 391 MB; tracemalloc on main at 5,014 files: ~6 KB a file in "
    "huggingface_hub's create_commit: decoded LFS-batch JSON, hf_thread_map's futures, UploadInfo samples, "
    "the operations, then the NDJSON body joined into one bytes object). release/publish/commit_stream.py "
    "uploads content through HfApi.preupload_lfs_files 1,000 files at a time and streams the commit (exact "
    "Content-Length, each small file read and checked as its line is sent). What remains is hf-release's own "
    "~2 KB a file from the preflight on (release.json as a dict and as ManifestFiles, Expected per path, the "
    "stat record, the plan, the Hub's listing): one compact per-file record would halve it."
)
RSS_LIMIT = 200 * MB


@dataclass(frozen=True)
class Sizes:
    counts: tuple[int, ...] = (500, 2_000, 5_000)
    small_size: int = 100_000
    tiny_count: int = 50_000
    tiny_size: int = 1_000
    shards: int = 8
    shard_size: int = GiB

    @classmethod
    def quick(cls) -> Sizes:
        return cls(counts=(20, 60, 120), small_size=10_000, tiny_count=600, tiny_size=100, shards=4, shard_size=8 << 20)

    @classmethod
    def scaled(cls, factor: float) -> Sizes:
        """Fewer files and smaller shards (a reduced run before the full one); sizes of small files kept."""
        full = cls()
        return cls(
            counts=tuple(max(10, int(n * factor)) for n in full.counts),
            tiny_count=max(100, int(full.tiny_count * factor)),
            shard_size=max(8 << 20, int(full.shard_size * factor)),
        )


def spec_with_folders(dest: Path, folders: list[tuple[Path, str]]) -> Path:
    """A copy of artifacts/v5 plus one `[[files]]` glob per (folder, path_in_repo folder), role extra."""
    shutil.copytree(EXAMPLE, dest)
    spec = dest / "release.toml"
    extra = "".join(
        f'\n[[files]]\nsource = "{folder}/*.bin"\npath_in_repo = "{target}/"\nrole = "extra"\n'
        for folder, target in folders
    )
    spec.write_text(spec.read_text() + extra)
    return spec


def write_random_files(folder: Path, count: int, size: int, seed: int) -> list[Path]:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    paths = []
    for i in range(count):
        path = folder / f"{i:06}.bin"
        path.write_bytes(rng.bytes(size))
        paths.append(path)
    return paths


def settled(probe: Callable[[], set[str]], quiet: float = 3.0, limit: float = 120.0) -> set[str]:
    """The probe's answer once it has not changed for `quiet` seconds: after a kill the Hub may still be
    assembling a shard whose last part it received, which completes it."""
    last, since, start = probe(), time.monotonic(), time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() - start < limit:
        time.sleep(0.5)
        now = probe()
        if now != last:
            last, since = now, time.monotonic()
    return last


def peak_rss(pid: int) -> int:
    """A live process's peak RSS so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def openssl_two(paths: list[Path]) -> float:
    """Wall time of `openssl dgst -sha256` over the files, split by bytes into two concurrent processes."""
    halves: tuple[list[str], list[str]] = ([], [])
    load = [0, 0]
    for p in sorted(paths, key=lambda p: -p.stat().st_size):
        side = 0 if load[0] <= load[1] else 1
        halves[side].append(str(p))
        load[side] += p.stat().st_size
    start = time.perf_counter()
    procs = [subprocess.Popen(["openssl", "dgst", "-sha256", *h], stdout=subprocess.DEVNULL) for h in halves if h]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("openssl failed")
    return time.perf_counter() - start


def slope(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares (seconds per file, r²) of marginal time against file count."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    b = sxy / sxx
    ss_tot = sum((y - my) ** 2 for _, y in points)
    ss_res = sum((y - (my + b * (x - mx))) ** 2 for x, y in points)
    return b, (1 - ss_res / ss_tot) if ss_tot else 1.0


class Scale:
    def __init__(self, bench: Any, sizes: Sizes) -> None:
        self.b, self.sizes = bench, sizes
        self.root = bench.work / "scale"
        self.data = bench.data / "scale"

    def cli(self, *args: str) -> list[str]:
        return [*self.b.hf, *args]

    def build(self, spec: Path, dist: Path) -> Any:
        return run(
            self.cli("build", "v5", "--spec", str(spec), "--dist", str(dist), "--format", "json"), env=self.b.env
        )

    def verify(self, dist: Path) -> Any:
        return run(self.cli("verify", "v5", "--dist", str(dist), "--format", "json"), env=self.b.env)

    def push(self, dist: Path, url: str) -> list[str]:
        return self.cli(
            "push", "v5", "--dist", str(dist), "--endpoint", url, "--token", self.b.token, "--format", "json"
        )

    # -- many small files --

    def prepare_many(self) -> None:
        s = self.sizes
        self.many_files: dict[int, list[Path]] = {}
        self.many_specs: dict[int, Path] = {}
        for n in s.counts:
            folder = self.root / f"many-{n}"
            self.many_files[n] = write_random_files(folder, n, s.small_size, seed=n)
            self.many_specs[n] = spec_with_folders(self.root / f"spec-many-{n}", [(folder, "data")])
        self.base_spec = spec_with_folders(self.root / "spec-base", [])
        self.b.facts["many_sizes"] = {"counts": list(s.counts), "file_size": s.small_size}

    def fresh_build(self, spec: Path, dist: Path) -> Any:
        """A build into an empty --dist: no earlier staging to replace and no digest record (it lives in --dist),
        so every file is hashed, as the ratio against openssl's hashing assumes."""
        shutil.rmtree(dist, ignore_errors=True)
        return self.build(spec, dist)

    def run_many(self) -> None:
        b = self.b
        dist = self.root / "dist-base"
        self.build(self.base_spec, dist)  # warm-up: the first CLI run of a round pays for cold module pages
        b.measure("many_build_0", lambda: self.fresh_build(self.base_spec, dist))
        b.measure("many_verify_0", lambda: self.verify(dist))
        b.measure("many_rebuild_0", lambda: self.build(self.base_spec, dist))
        for n in self.sizes.counts:
            files = self.many_files[n]
            warm(files)
            dist = self.root / f"dist-many-{n}"
            b.add(f"many_openssl2_{n}", openssl_two(files))
            p = b.measure(f"many_build_{n}", lambda n=n, dist=dist: self.fresh_build(self.many_specs[n], dist))
            b.add("rss_build_many", p.maxrss)
            p = b.measure(f"many_verify_{n}", lambda dist=dist: self.verify(dist))
            b.add("rss_verify_many", p.maxrss)
        # the largest again into the same --dist: the earlier staging replaced, every digest from the record
        b.measure(f"many_rebuild_{n}", lambda: self.build(self.many_specs[n], dist))

    def probe_many(self) -> None:
        """Once: where a fresh build of the largest many-file release spends its time, step by step."""
        n = self.sizes.counts[-1]
        out = run(
            [sys.executable, "-c", PROBE_BUILD, str(self.many_specs[n]), str(self.root / "dist-probe")], env=self.b.env
        ).json()
        shutil.rmtree(self.root / "dist-probe", ignore_errors=True)
        self.b.facts["many_probe"] = out

    def push_many(self) -> None:
        """Once: the largest many-file release pushed to a fresh Hub: one commit, its time and peak RSS."""
        from huggingface_hub import HfApi

        n = self.sizes.counts[-1]
        dist = self.root / f"dist-many-{n}"
        with hub_process(self.b.hf, self.root / "hub-many", self.b.token, self.b.env) as hub:
            p = run(self.push(dist, hub.url), env=self.b.env)
            out = p.json()
            assert out["verified"], out
            commits = HfApi(endpoint=hub.url, token=self.b.token).list_repo_commits(out["plan"]["repo_id"])
        self.b.facts["many_push"] = {
            "files": len(out["plan"]["add"]),
            "wall": p.wall,
            "rss": p.maxrss,
            "commits_made": len(commits) - 1,
            "bytes_sent": out["bytes_sent"],
            "warnings": out["plan"].get("warnings", []),
        }
        self.b.add("rss_push_many", p.maxrss)

    # -- 50,000 tiny files: memory --

    def run_tiny(self) -> None:
        s, b = self.sizes, self.b
        per_folder = 5_000
        folders = []
        for k in range(-(-s.tiny_count // per_folder)):
            count = min(per_folder, s.tiny_count - k * per_folder)
            folder = self.root / f"tiny-{k:02}"
            write_random_files(folder, count, s.tiny_size, seed=1000 + k)
            folders.append((folder, f"tiny/{k:02}"))
        spec = spec_with_folders(self.root / "spec-tiny", folders)
        dist = self.root / "dist-tiny"
        p = run(
            self.cli("build", "v5", "--spec", str(spec), "--dist", str(dist), "--format", "json"),
            env=b.env,
            check=False,
        )
        b.facts["tiny"] = {"files": s.tiny_count, "file_size": s.tiny_size, "build_wall": p.wall}
        b.add("rss_build_tiny", p.maxrss)
        if p.rc:  # a refusal is a result: say what refused, measure nothing further on a release that is not there
            problems = json.loads(p.out).get("problems", []) if p.out.strip().startswith("{") else []
            b.facts["tiny"]["build_refused"] = "; ".join(f"{q['file']}: {q['message']}" for q in problems)[:400]
            return
        p = self.verify(dist)
        b.facts["tiny"]["verify_wall"] = p.wall
        b.add("rss_verify_tiny", p.maxrss)
        with hub_process(b.hf, self.root / "hub-tiny", b.token, b.env) as hub:
            p = run(self.push(dist, hub.url), env=b.env, check=False)
            if not p.rc:
                from huggingface_hub import HfApi

                out = p.json()
                commits = HfApi(endpoint=hub.url, token=b.token).list_repo_commits(out["plan"]["repo_id"])
                b.facts["tiny"].update(
                    push_commits=len(commits) - 1, push_bytes_sent=out["bytes_sent"], push_verified=out["verified"]
                )
        b.facts["tiny"]["push_wall"] = p.wall
        b.facts["tiny"]["push_rc"] = p.rc
        if p.rc:
            b.facts["tiny"]["push_error"] = (p.err or p.out)[-600:]
        b.add("rss_push_tiny", p.maxrss)
        shutil.rmtree(dist, ignore_errors=True)

    # -- shards --

    def prepare_shards(self) -> None:
        from release.kinds.dflash2_drafter.inventory import write_drafter

        s = self.sizes
        config = quick_config(json.loads((EXAMPLE / "config.json").read_text()), s.shard_size)
        self.shard_paths = []
        for i in range(s.shards):
            path = self.data / f"shard-{i}.safetensors"
            marker = path.with_suffix(".done")
            want = f"seed={100 + i} size={s.shard_size}"
            if not (path.exists() and marker.exists() and marker.read_text() == want):
                path.parent.mkdir(parents=True, exist_ok=True)
                write_drafter(path, config, data="random", seed=100 + i)
                marker.write_text(want)
            self.shard_paths.append(path)
        os.sync()
        names = [f"model-{i + 1:05}-of-{s.shards:05}.safetensors" for i in range(s.shards)]
        self.shard_spec = make_spec(
            self.root / "spec-shards", list(zip(self.shard_paths, names, strict=True)), md5=False, full_size=False
        )
        self.shard_dist = self.root / "dist-shards"
        self.b.facts["shards"] = {"count": s.shards, "bytes": sum(p.stat().st_size for p in self.shard_paths)}

    def run_shards(self) -> None:
        b = self.b
        warm(self.shard_paths)
        b.add("shards_openssl2", openssl_two(self.shard_paths))
        p = b.measure("shards_build", lambda: self.build(self.shard_spec, self.shard_dist))
        b.add("rss_build_shards", p.maxrss)
        p = b.measure("shards_verify", lambda: self.verify(self.shard_dist))
        b.add("rss_verify_shards", p.maxrss)

    # -- push of the shards, killed, then resumed --

    def run_resume(self) -> None:
        from huggingface_hub import HfApi
        from huggingface_hub.lfs import UploadInfo, post_lfs_batch_info

        b = self.b
        dist = self.shard_dist / "v5"
        manifest = json.loads((dist / "release.json").read_text())
        repo_id = manifest["repo_id"]
        shards = [f for f in manifest["files"] if f["path_in_repo"].startswith("model-")]
        shard_bytes = sum(f["size"] for f in shards)
        all_files = [p for p in dist.rglob("*") if p.is_file()]
        release_bytes = sum(p.stat().st_size for p in all_files)
        listed = {f["path_in_repo"]: f for f in manifest["files"]}
        contents = [
            listed.get(p.relative_to(dist).as_posix())
            or {  # release.json and SHA256SUMS are not listed
                "path_in_repo": p.relative_to(dist).as_posix(),
                "size": p.stat().st_size,
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            }
            for p in all_files
        ]

        with hub_process(b.hf, self.root / "hub-resume", b.token, b.env) as hub:
            api = HfApi(endpoint=hub.url, token=b.token)

            def complete() -> set[str]:
                """Release files whose content the Hub holds in full (the LFS batch API offers no upload action);
                small files that travel inside the commit are never held before it."""
                if not api.repo_exists(repo_id):
                    return set()
                infos = [UploadInfo(sha256=bytes.fromhex(f["sha256"]), size=f["size"], sample=b"") for f in contents]
                actions, _, _ = post_lfs_batch_info(
                    upload_infos=infos,
                    repo_id=repo_id,
                    repo_type="model",
                    endpoint=hub.url,
                    headers=api._build_hf_headers(),
                    token=None,
                )
                held = {a["oid"] for a in actions if not a.get("actions")}
                return {f["path_in_repo"] for f in contents if f["sha256"] in held}

            evict(all_files)
            shard_names = {f["path_in_repo"] for f in shards}
            want = max(1, len(shards) // 2 - 1)
            proc = subprocess.Popen(
                self.push(self.shard_dist, hub.url), env=b.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            start, done, rchar, hwm = time.perf_counter(), set(), 0, 0
            while proc.poll() is None and len(done & shard_names) < want and time.perf_counter() - start < 1800:
                time.sleep(0.2)
                try:
                    rchar = read_io(proc.pid)["rchar"]
                    hwm = max(hwm, peak_rss(proc.pid))
                except OSError:
                    break
                done = complete()
            b.add("rss_push_shards", hwm)  # the first push's peak until the kill: every shard in flight by then
            finished = proc.poll() is not None  # a small (--quick) release may be done before the kill
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed_after = time.perf_counter() - start
            held = {f["path_in_repo"] for f in contents} if finished else settled(complete)  # committed: all of it
            held_bytes = sum(f["size"] for f in contents if f["path_in_repo"] in held)
            missing = release_bytes - held_bytes  # a partly uploaded shard counts as missing
            evict(all_files)
            wire, p = traced_sends(self.push(self.shard_dist, hub.url), b.env, self.root / "strace-resume")
            out = p.json()
            assert out["verified"], out
            commits = len(api.list_repo_commits(repo_id)) - 1
        b.facts["resume"] = {
            "shards": len(shards),
            "shard_bytes": shard_bytes,
            "release_bytes": release_bytes,
            "killed_after_s": killed_after,
            "complete_at_kill": len(held & shard_names),
            "files_held": len(held),
            "finished_before_kill": finished,
            "held_bytes": held_bytes,
            "missing_bytes": missing,
            "killed_rchar": rchar,
            "wire_bytes": wire,
            "reported_sent": out["bytes_sent"],
            "reported_skipped": out["bytes_skipped"],
            "measured": out.get("bytes_measured"),
            "resume_wall": p.wall,
            "commits_made": commits,
            # read by the killed push beyond the shards it completed: upload progress the kill threw away
            # (rchar also counts Python's module reads, ~10 MB, and the small files)
            "lost_upper_bound": max(0, rchar - held_bytes),
        }


def scale_ratios(b: Any) -> list[Ratio]:
    """Every scale ratio whose measurements are all there (a failed step leaves its ratios out)."""
    r: list[Ratio] = []
    for part in (_many_ratios, _rss_ratios, _shard_ratios, _resume_ratios):
        try:
            r += part(b)
        except (KeyError, ZeroDivisionError, statistics.StatisticsError) as exc:
            b.facts.setdefault("ratio_errors", []).append(f"{part.__name__}: {type(exc).__name__} {exc}")
    return r


def _many_ratios(b: Any) -> list[Ratio]:
    m, facts = b.med, b.facts
    r: list[Ratio] = []
    if "many_sizes" in facts:
        counts = facts["many_sizes"]["counts"]
        n = counts[-1]
        for cmd in ("build", "verify"):
            points = [(c, m(f"many_{cmd}_{c}") - m(f"many_{cmd}_0")) for c in counts]
            per_file, r2 = slope(points)
            marginal = points[-1][1]
            probe = facts.get("many_probe", {}).get("steps", {})
            top = ", ".join(f"{k} {v:.2f} s" for k, v in sorted(probe.items(), key=lambda kv: -kv[1])[:5])
            r.append(
                Ratio(
                    f"many-files-{cmd}-marginal-vs-openssl",
                    f"(`hf-release {cmd}` of the example + {n:,} × {facts['many_sizes']['file_size'] // 1000} KB "
                    "files − the "
                    f"same without them) / `openssl dgst -sha256` over the {n:,} files in two processes",
                    marginal / m(f"many_openssl2_{n}"),
                    3.0,
                    False,
                    "x",
                    "warm",
                    note=f"marginal {marginal:.2f} s (with {m(f'many_{cmd}_{n}'):.2f} s, without "
                    f"{m(f'many_{cmd}_0'):.2f} s), "
                    f"openssl×2 {m(f'many_openssl2_{n}'):.2f} s; slope {per_file * 1000:.3f} ms/file (r² {r2:.3f}) "
                    "from "
                    + ", ".join(f"{c:,}: {t:.2f} s" for c, t in points)
                    + (
                        "; each build into an empty --dist (every file hashed); a rebuild into the same --dist "
                        "(digests "
                        "from the record, nothing hashed): marginal "
                        f"{m(f'many_rebuild_{n}') - m('many_rebuild_0'):.2f} s"
                        if cmd == "build" and f"many_rebuild_{n}" in b.samples
                        else ""
                    ),
                    explain=f"{per_file * 1000:.3f} ms per file on top of hashing; a fresh build of the {n:,}-file "
                    "release, "
                    f"slowest steps: {top}"
                    if cmd == "build"
                    else f"{per_file * 1000:.3f} ms per file; verify re-reads the manifest, checks every file and "
                    "lints the "
                    "card (its files table has one row per file)",
                    plan="see bench/RESULTS.md, issue 24: the files are hashed in a forked child as collect links "
                    "them, "
                    "off the critical path; what is left is the parent's per-file Python: collect (its links) and the "
                    "tail (release.json, the stat record, the digest record), and the parent's wait for its core "
                    "beside the hashing child (/proc/self/schedstat: 0.17 s at 5,000 files).",
                )
            )
    if "many_push" in facts:
        mp = facts["many_push"]
        r.append(
            Ratio(
                "many-files-push-commits",
                f"commits a push of {mp['files']:,} files makes (one atomic version)",
                mp["commits_made"],
                1,
                False,
                "n",
                "warm",
                note=f"{mp['files']:,} files pushed in {mp['wall']:.1f} s, peak RSS {mp['rss'] / MB:.0f} MB, "
                f"{mp['bytes_sent']:,} B sent; warnings: {'; '.join(mp['warnings'])[:200]}",
                explain="the push made more than one commit.",
                plan="release/publish/apply.py must send one commit (commit_stream.send_commit).",
            )
        )
    return r


def _rss_ratios(b: Any) -> list[Ratio]:
    facts = b.facts
    r: list[Ratio] = []
    for key, label in (("tiny", "50k-small-files"), ("shards", "8-shards"), ("many", "many-files")):
        for cmd in ("build", "verify", "push"):
            k = f"rss_{cmd}_{key}"
            if k not in b.samples:
                continue
            peak = max(b.samples[k])
            detail = facts.get(key, {}) if key != "many" else facts.get("many_push", {})
            r.append(
                Ratio(
                    f"peak-rss-{cmd}-{label}",
                    f"peak RSS of `hf-release {cmd}` on the {label} release (/usr/bin/time %M)",
                    peak,
                    RSS_LIMIT,
                    False,
                    "MB",
                    "warm",
                    note=", ".join(f"{k2} {v:.1f} s" for k2, v in detail.items() if k2.endswith("_wall"))
                    + (
                        f"; {detail['push_commits']} commit(s), {detail['push_bytes_sent']:,} B of files sent, "
                        "verified "
                        f"{detail['push_verified']}"
                        if "push_commits" in detail
                        else ""
                    )
                    if key == "tiny" and cmd == "push"
                    else "",
                    explain=(
                        f"build refused the release ({detail['build_refused']}); RSS up to the refusal. "
                        if detail.get("build_refused")
                        else ""
                    )
                    + f"{cmd} peaked at {peak / MB:.0f} MB"
                    + (
                        f"; push exit {detail.get('push_rc')}: {detail.get('push_error', '')[:200]}"
                        if key == "tiny" and cmd == "push"
                        else ""
                    ),
                    plan={
                        "build": MEASURED_CARD,
                        "verify": MEASURED_CARD + " verify holds the manifest's entries and its on-disk listing (~1 KB "
                        "a file); hashing queues a few files per thread, not one Future per file.",
                        "push": MEASURED_PUSH,
                    }[cmd],
                )
            )
    return r


def _shard_ratios(b: Any) -> list[Ratio]:
    m, facts = b.med, b.facts
    r: list[Ratio] = []
    if "shards_build" in b.samples:
        sh = facts["shards"]
        for cmd, target in (("build", 1.1), ("verify", 1.05)):
            r.append(
                Ratio(
                    f"shards-{cmd}-vs-openssl",
                    f"`hf-release {cmd}` of {sh['count']} shards ({sh['bytes'] / GiB:.2f} GiB, "
                    f"sha256 only) / `openssl dgst -sha256` over them in two processes",
                    m(f"shards_{cmd}") / m("shards_openssl2"),
                    target,
                    False,
                    "x",
                    "warm",
                    note=f"{cmd} {m(f'shards_{cmd}'):.2f} s, openssl×2 {m('shards_openssl2'):.2f} s "
                    f"({sh['bytes'] / m('shards_openssl2') / MB:.0f} MB/s)",
                    explain=f"{cmd} − openssl×2 = {m(f'shards_{cmd}') - m('shards_openssl2'):.2f} s; "
                    f"contention: {b.contention(f'shards_{cmd}')}",
                    plan="the fixed cost of a fresh process (imports, card render and lint: see build-vs-hash) is what "
                    "remains above the hashing; at 8 GiB it is a few percent. Cut start-up (lazy imports in "
                    "release/cli.py, release/card) and re-measure on a quiet machine.",
                )
            )
    return r


def _resume_ratios(b: Any) -> list[Ratio]:
    facts = b.facts
    r: list[Ratio] = []
    if "resume" in facts:
        rs = facts["resume"]
        if rs["wire_bytes"] is not None:
            r.append(
                Ratio(
                    "resume-wire-bytes-vs-missing",
                    "resumed push: bytes on TCP sockets (strace) / bytes of the release the Hub lacked after the kill "
                    "(a partly uploaded shard counts as missing)",
                    rs["wire_bytes"] / max(1, rs["missing_bytes"]),
                    1.05,
                    False,
                    "x",
                    "release files evicted",
                    note=(
                        "the push finished before the kill (too small to kill mid-way); "
                        if rs["finished_before_kill"]
                        else ""
                    )
                    + f"killed after {rs['killed_after_s']:.1f} s with {rs['complete_at_kill']}/{rs['shards']} shards "
                    f"complete on the Hub ({rs['held_bytes']:,} B); missing {rs['missing_bytes']:,} B; wire "
                    f"{rs['wire_bytes']:,} B; the kill threw away ≤ {rs['lost_upper_bound']:,} B of in-flight "
                    f"upload (≤ 2 shards in flight); resumed push {rs['resume_wall']:.1f} s, commits made "
                    f"{rs['commits_made']}",
                    explain="the resumed push sent more than the missing shards (HTTP overhead or a re-sent shard).",
                    plan="compare the Hub's per-oid received bytes with the plan.",
                )
            )
        r.append(
            Ratio(
                "resume-report-error",
                "resumed push: |bytes_sent hf-release reports − bytes the Hub lacked| + |bytes_skipped − bytes it "
                "held|",
                abs(rs["reported_sent"] - rs["missing_bytes"]) + abs(rs["reported_skipped"] - rs["held_bytes"]),
                0,
                False,
                "B",
                "release files evicted",
                note=f"reported sent {rs['reported_sent']:,} B (measured: {rs['measured']}), skipped "
                f"{rs['reported_skipped']:,} B",
                explain="the report and the Hub's own state disagree.",
                plan="release/publish/upload_meter.py: check which reads were counted (a retried part counts twice, "
                "by design).",
            )
        )
    return r
