"""The many-core scenario (issue 41): N shards of 1 GiB on N cores, page cache warm.

    python bench/many_cores.py [--shards N] [--size BYTES] [--runs 3] [--work DIR] [--json OUT]

The example (artifacts/v5) plus N extra files of --size (random bytes, each different) and, beside it, the same
with N files of --small-size. Each figure is the median of --runs, side by side in one run:

* openssl   `openssl dgst -sha256` over the N shards in N processes at once (the hardware's limit)
* build     a fresh `hf-release build` into an empty --dist (every byte hashed)
* rebuild   `build` again into the same --dist: every digest from the digest record, nothing read; for the N
            large shards and for the N small ones (what grows with the bytes: their ratio)
* verify    `hf-release verify` of the large release
* fast      the card's fast check (release/card/verify_commands.fast_check_command), run by bash as printed
* sums      the card's plain `(cd … && sha256sum -c SHA256SUMS)`, once (one core: it is long)

and what verify's time is made of, beside it: `imports` (a process that imports verify's command and ends) and
`hash only` (a process hashing the N shards with verify's own `hash_files`, nothing else).

Targets (issue 41, 16 cores, 16 × 1 GiB): build / openssl ≤ 1.3, rebuild large / small ≤ 1.2, verify / openssl
≤ 1.2, fast / verify ≤ 1.5. Runs on the accelerator machine of the `device` tool (16 cores): see bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from release.card.verify_commands import download_commands, fast_check_command, local_dir  # noqa: E402
from release.util.cpus import usable_cpus  # noqa: E402

EXAMPLE = ROOT / "artifacts" / "v5"
REPO_ID, VERSION = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark", "v5"
GiB, MiB = 1 << 30, 1 << 20
IMPORTS = "import release.cli.app, release.cli.verify"
HASH_ONLY = "import sys; from release.staged.digest import hash_files; hash_files([(p, False) for p in sys.argv[1:]])"
TARGETS = {"build/openssl": 1.3, "rebuild large/small": 1.2, "verify/openssl": 1.2, "fast/verify": 1.5}


def timed(cmd: list[str], cwd: Path | None = None, shell: bool = False) -> dict[str, Any]:
    """One process: wall seconds, its CPU seconds (children included) and its output's tail."""
    start = time.perf_counter()
    p = subprocess.Popen(
        cmd if not shell else ["bash", "-c", cmd[0]], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = p.communicate()
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} exited {p.returncode}: {err.decode()[-2000:]} {out.decode()[-2000:]}")
    return {"wall": wall, "out": out.decode(errors="replace"), "err": err.decode(errors="replace")}


def openssl_n(paths: list[Path]) -> float:
    """`openssl dgst -sha256` over each path, all at once: the wall time of the slowest."""
    start = time.perf_counter()
    procs = [subprocess.Popen(["openssl", "dgst", "-sha256", str(p)], stdout=subprocess.DEVNULL) for p in paths]
    assert all(p.wait() == 0 for p in procs)
    return time.perf_counter() - start


def write_shards(folder: Path, count: int, size: int) -> list[Path]:
    """`count` files of `size` bytes: one random block repeated, each file's first 8 bytes its own."""
    folder.mkdir(parents=True)
    block = os.urandom(min(size, 64 * MiB))
    paths = []
    for i in range(count):
        path = folder / f"shard-{i:05}.bin"
        with open(path, "wb") as f:
            f.write(i.to_bytes(8, "little"))
            left = size - 8
            while left > 0:
                left -= f.write(block[: min(left, len(block))])
        paths.append(path)
    return paths


def project(dest: Path, shards: Path) -> Path:
    """A copy of artifacts/v5 whose spec adds the shards (role extra): its release.toml."""
    shutil.copytree(EXAMPLE, dest)
    spec = dest / "release.toml"
    spec.write_text(
        spec.read_text() + f'\n[[files]]\nsource = "{shards}/*.bin"\npath_in_repo = "shards/"\nrole = "extra"\n'
    )
    return spec


def work_folder(need: int) -> Path:
    """/dev/shm when it holds `need` bytes with room to spare (no disk: the page cache is the data), else TMPDIR."""
    shm = Path("/dev/shm")
    if shm.is_dir() and shutil.disk_usage(shm).free > need * 1.2:
        return Path(tempfile.mkdtemp(prefix="many-cores-", dir=shm))
    return Path(tempfile.mkdtemp(prefix="many-cores-"))


def main() -> int:
    cpus = usable_cpus()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shards", type=int, default=cpus)
    ap.add_argument("--size", type=int, default=GiB)
    ap.add_argument("--small-size", type=int, default=MiB)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-sums", action="store_true", help="skip the one-core sha256sum -c")
    args = ap.parse_args()
    hf = [sys.executable, "-m", "release"]
    env_note = {
        "python": platform.python_version(),
        "os.cpu_count": os.cpu_count(),
        "usable_cpus": cpus,
        "nproc": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
        "openssl": subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip(),
        "shards": args.shards,
        "size": args.size,
        "small_size": args.small_size,
    }
    work = args.work or work_folder(args.shards * (args.size + args.small_size) + GiB)
    print(json.dumps(env_note), "work", work, flush=True)
    samples: dict[str, list[float]] = {}
    kept: dict[str, str] = {}
    try:
        t = time.perf_counter()
        large = write_shards(work / "large" / "shards", args.shards, args.size)
        write_shards(work / "small" / "shards", args.shards, args.small_size)
        specs = {s: project(work / s / "project", work / s / "shards") for s in ("large", "small")}
        print(f"wrote the shards in {time.perf_counter() - t:.1f} s", flush=True)
        openssl_n(large)  # the page cache warm for every side

        def build(side: str, fresh: bool) -> dict[str, Any]:
            dist = work / side / "dist"
            if fresh:
                shutil.rmtree(dist, ignore_errors=True)
            cmd = [*hf, "build", VERSION, "--spec", str(specs[side]), "--dist", str(dist), "--format", "json"]
            return timed(cmd)

        reader = work / "reader"
        reader.mkdir()
        (reader / local_dir(REPO_ID, VERSION)).symlink_to(work / "large" / "dist" / VERSION)
        fast = fast_check_command(REPO_ID, VERSION)
        plain = download_commands(REPO_ID, VERSION)[1]
        for run in range(args.runs):
            for side in ("small", "large"):
                got = build(side, fresh=True)
                samples.setdefault(f"build {side}", []).append(got["wall"])
                kept.setdefault(f"build {side}", got["out"])
                got = build(side, fresh=False)
                samples.setdefault(f"rebuild {side}", []).append(got["wall"])
                kept.setdefault(f"rebuild {side}", got["out"])
            samples.setdefault("openssl", []).append(openssl_n(large))
            got = timed([*hf, "verify", VERSION, "--dist", str(work / "large" / "dist"), "--format", "json"])
            samples.setdefault("verify", []).append(got["wall"])
            kept.setdefault("verify", got["out"])
            samples.setdefault("imports", []).append(timed([sys.executable, "-c", IMPORTS])["wall"])
            got = timed([sys.executable, "-c", HASH_ONLY, *map(str, large)])
            samples.setdefault("hash only", []).append(got["wall"])
            got = timed([fast], cwd=reader, shell=True)
            assert got["out"].count(": OK") == len(got["out"].splitlines()), got["out"][-2000:]
            samples.setdefault("fast", []).append(got["wall"])
            print(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in samples.items()), flush=True)
        if not args.no_sums:
            samples["sums"] = [timed([plain], cwd=reader, shell=True)["wall"]]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in samples.items()}
    ratios = {
        "build/openssl": med["build large"] / med["openssl"],
        "rebuild large/small": med["rebuild large"] / med["rebuild small"],
        "verify/openssl": med["verify"] / med["openssl"],
        "fast/verify": med["fast"] / med["verify"],
    }
    for name, value in ratios.items():
        verdict = "PASS" if value <= TARGETS[name] else "MISS"
        print(f"{name:22} {value:.3f}x  (≤ {TARGETS[name]}x)  {verdict}")
    for name, values in samples.items():
        print(f"{name:22} median {med[name]:.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")
    if args.json:
        args.json.write_text(json.dumps({"env": env_note, "samples": samples, "ratios": ratios, "outputs": kept}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
