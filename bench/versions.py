"""Cost of what changed (issue 24): the next version, and a mixed release verified against openssl.

* next     the example with a full-size drafter (a sparse file with the real 81-tensor header: the scenario
           counts bytes read, not hashing speed) built as v5; `init v6 --from v5` with one ledger row added in
           artifacts/v6/; `build v6`: rchar of the build process / the drafter's size. Then v5's push preflight
           (`push v5 --dry-run` against a fresh local Hub), whose staging record the v6 links made stale: its rchar
           / the drafter's size. Anchor, same run: rchar of `build v5`, which reads the drafter.
* mixed    the example + 4 × 512 MiB (sparse: no disk, same bytes for both sides) + 5,000 × 100 KB random files:
           `hf-release verify` against `openssl dgst -sha256` over the same files in two processes, warm.
"""

from __future__ import annotations

import json
import shutil
import statistics
from typing import Any

from measure import EXAMPLE, MB, MiB, Ratio, hub_process, quick_config, run, staged_files, warm
from scale import openssl_two, spec_with_folders, write_random_files


class Versions:
    def __init__(self, bench: Any, *, quick: bool) -> None:
        self.b, self.quick = bench, quick
        self.root = bench.work / "versions"

    def cli(self, *args: str) -> list[str]:
        return [*self.b.hf, *args]

    # -- the next version --

    def run_next(self) -> None:
        from release.kinds.dflash2_drafter.inventory import FULL_SIZE, write_drafter

        b = self.b
        project = self.root / "next"
        v5 = project / "artifacts" / "v5"
        shutil.copytree(EXAMPLE, v5)
        config = json.loads((EXAMPLE / "config.json").read_text())
        drafter = v5 / "model.safetensors"
        write_drafter(
            drafter,
            quick_config(config, 64 * MiB) if self.quick else config,
            data="sparse",
            total_size=None if self.quick else FULL_SIZE,
        )
        size = drafter.stat().st_size
        dist = project / "dist"
        first = run(self.cli("build", "v5", "--dist", str(dist), "--format", "json"), env=b.env, cwd=project)
        v6 = project / "artifacts" / "v6"
        v6.mkdir()
        ledger = (v5 / "results.tsv").read_text()
        last = ledger.rstrip("\n").splitlines()[-1].split("\t")
        (v6 / "results.tsv").write_text(
            ledger + "\t".join(["a1b2c3d", *last[1:4], "discard", "v6: one more row"]) + "\n"
        )
        run(self.cli("init", "v6", "--from", "v5"), env=b.env, cwd=project)
        nxt = run(self.cli("build", "v6", "--dist", str(dist), "--format", "json"), env=b.env, cwd=project)
        assert (dist / "v6" / "model.safetensors").stat().st_ino == drafter.stat().st_ino
        with hub_process(b.hf, self.root / "hub-next", b.token, b.env) as hub:
            push = run(
                self.cli(
                    "push",
                    "v5",
                    "--dist",
                    str(dist),
                    "--endpoint",
                    hub.url,
                    "--token",
                    b.token,
                    "--dry-run",
                    "--format",
                    "json",
                ),
                env=b.env,
                cwd=project,
            )
        b.facts["next"] = {
            "drafter": size,
            "build_v5_rchar": first.io["rchar"],
            "build_v6_rchar": nxt.io["rchar"],
            "build_v6_read_bytes": nxt.io["read_bytes"],
            "build_v6_wall": nxt.wall,
            "build_v5_wall": first.wall,
            "push_v5_rchar": push.io["rchar"],
            "push_v5_wall": push.wall,
            "record_bytes": (dist / ".hf-release-digests").stat().st_size,
        }
        shutil.rmtree(project, ignore_errors=True)

    # -- mixed release --

    def prepare_mixed(self) -> None:
        large, count, small = (4, 5_000, 100_000) if not self.quick else (2, 100, 10_000)
        big_size = 512 * MiB if not self.quick else 8 * MiB
        folder_big, folder_small = self.root / "mixed-large", self.root / "mixed-small"
        folder_big.mkdir(parents=True)
        for i in range(large):
            with open(folder_big / f"part-{i}.bin", "wb") as f:
                f.truncate(big_size)  # sparse
        write_random_files(folder_small, count, small, seed=24)
        self.mixed_spec = spec_with_folders(self.root / "spec-mixed", [(folder_big, "large"), (folder_small, "data")])
        self.mixed_dist = self.root / "dist-mixed"
        run(
            self.cli("build", "v5", "--spec", str(self.mixed_spec), "--dist", str(self.mixed_dist), "--format", "json"),
            env=self.b.env,
        )
        self.mixed_files = staged_files(self.mixed_dist / "v5")
        self.b.facts["mixed"] = {
            "files": len(self.mixed_files),
            "bytes": sum(p.stat().st_size for p in self.mixed_files),
            "large": large,
            "large_size": big_size,
            "small": count,
            "small_size": small,
        }

    def run_mixed(self) -> None:
        b = self.b
        warm(self.mixed_files)
        b.add("mixed_openssl2", openssl_two(self.mixed_files))
        p = b.measure(
            "mixed_verify",
            lambda: run(self.cli("verify", "v5", "--dist", str(self.mixed_dist), "--format", "json"), env=b.env),
        )
        b.add("rss_verify_mixed", p.maxrss)


def version_ratios(b: Any) -> list[Ratio]:
    r: list[Ratio] = []
    try:
        r += _next_ratios(b) + _mixed_ratios(b)
    except (KeyError, ZeroDivisionError, statistics.StatisticsError) as exc:
        b.facts.setdefault("ratio_errors", []).append(f"version_ratios: {type(exc).__name__} {exc}")
    return r


def _next_ratios(b: Any) -> list[Ratio]:
    if "next" not in b.facts:
        return []
    n = b.facts["next"]
    common = (
        f"drafter {n['drafter']:,} B (sparse, real header); `build v5` read {n['build_v5_rchar']:,} B "
        f"({n['build_v5_rchar'] / n['drafter']:.3f}x) in {n['build_v5_wall']:.2f} s"
    )
    return [
        Ratio(
            "next-version-build-bytes-read",
            "`build v6` (init --from v5, one ledger row added, the drafter unchanged): rchar of the build process / "
            "the drafter's size",
            n["build_v6_rchar"] / n["drafter"],
            0.05,
            False,
            "frac",
            "warm",
            note=f"build v6 read {n['build_v6_rchar']:,} B (read_bytes {n['build_v6_read_bytes']:,} B) in "
            f"{n['build_v6_wall']:.2f} s; {common}; digest record {n['record_bytes']:,} B",
            explain="build v6 hashed the drafter again.",
            plan="release/staged/digest_record.py: find which of device, inode, size, mtime, ctime moved.",
        ),
        Ratio(
            "next-version-v5-push-bytes-read",
            "`push v5 --dry-run` after `build v6` linked v5's inodes (v5's stat record stale): rchar / the drafter's "
            "size",
            n["push_v5_rchar"] / n["drafter"],
            0.05,
            False,
            "frac",
            "warm",
            note=f"push v5 preflight read {n['push_v5_rchar']:,} B in {n['push_v5_wall']:.2f} s; {common}",
            explain="v5's preflight re-hashed the drafter.",
            plan="release/staged/__init__.py changed_since_build must consult the digest record.",
        ),
    ]


def _mixed_ratios(b: Any) -> list[Ratio]:
    if "mixed_verify" not in b.samples:
        return []
    m, x = b.med, b.facts["mixed"]
    return [
        Ratio(
            "mixed-verify-vs-openssl",
            f"`hf-release verify` of the example + {x['large']} × {x['large_size'] // MiB} MiB (sparse) + "
            f"{x['small']:,} × "
            f"{x['small_size'] // 1000} KB ({x['files']:,} files) / `openssl dgst -sha256` over them in two processes",
            m("mixed_verify") / m("mixed_openssl2"),
            1.2,
            False,
            "x",
            "warm",
            note=f"verify {m('mixed_verify'):.2f} s, openssl×2 {m('mixed_openssl2'):.2f} s, {x['bytes'] / MB:,.0f} MB; "
            f"peak RSS {max(b.samples['rss_verify_mixed']) / MB:.0f} MB",
            explain=f"verify − openssl×2 = {m('mixed_verify') - m('mixed_openssl2'):.2f} s; contention: "
            f"{b.contention('mixed_verify')}",
            plan="per-file cost outside hashing (start-up, the manifest, the card lint): see "
            "many-files-verify-marginal-vs-openssl.",
        )
    ]
