#!/usr/bin/env python
"""Push over Xet vs over LFS, side by side in one run (issue 39), against the local Hub (in this process).

    .venv/bin/python bench/xet.py [--size BYTES | --full-size] [--runs N] [--out FILE]

* example   `push v5` of artifacts/v5 to a fresh Hub over each transport: wall time, bytes the client reports
            sent (push's `bytes_sent`: small files inline in the commit, plus LFS file bytes or Xet xorb and
            shard bytes) and what the Hub received for the large files (LFS objects; xorbs + shards).
* next      the example with a random drafter of --size bytes (default 256 MiB: scaled widths, the real 81
            tensors) pushed as v5, then v6 whose drafter differs in ONE tensor (every value's lowest mantissa bit
            flipped), then v7 with v6's drafter under a new path (`weights/model.safetensors`): the bytes each
            push sent for the drafter over each transport, as a fraction of the drafter's size. Targets: one
            tensor changed <= 0.05x over Xet; the same weights under a new path: no xorb sent.

Both transports push the same files to fresh Hubs; Xet is the client's default (hf_xet installed), LFS is
HF_HUB_DISABLE_XET=1. Times include the local Hub's own work (same process, same 2 cores): compare them side by
side only. Bytes are exact. Results: printed as lines `[xet] NAME: value`, and as JSON to --out if given.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import struct
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from measure import EXAMPLE, MiB, make_spec, quick_config  # noqa: E402
from scale import spec_with_folders, write_random_files  # noqa: E402

TOKEN = "hf_bench_xet_write_token"
CHANGED_TENSOR = "layers.2.mlp.down_proj.weight"  # a layer's largest kind of tensor (~4% of the drafter)
NEW_PATH = "weights/model.safetensors"


@contextmanager
def hub(root: Path, transport: str) -> Iterator[Any]:
    from huggingface_hub import constants

    from release.localhub import running_hub

    constants.HF_HUB_DISABLE_XET = transport == "lfs"  # push only ever turns it on where the Hub offers Xet
    with running_hub(root, {TOKEN: "write"}) as started:
        os.environ["HF_ENDPOINT"] = started.url  # a next version's build looks for the previous one here
        yield started


def received(stats: Any) -> int:
    """The large files' bytes as the Hub received them: LFS object bytes, or xorbs and shards."""
    return sum(stats.upload_bytes.values()) + stats.xet_bytes["xorb_received"] + stats.xet_bytes["shard_received"]


def build_and_push(spec: Path, dist: Path, url: str) -> tuple[Any, float]:
    from release.builder import build
    from release.publish.push import PushOptions, push
    from release.spec import load_spec

    staged = build(load_spec(spec), dist).dist
    started = time.perf_counter()
    result = push(staged, PushOptions(endpoint=url, token=TOKEN))
    return result, time.perf_counter() - started


def example(work: Path, transport: str) -> dict[str, Any]:
    project = work / f"example-{transport}"
    shutil.copytree(EXAMPLE, project / "artifacts" / "v5")
    with hub(work / f"hub-example-{transport}", transport) as h:
        result, seconds = build_and_push(project / "artifacts" / "v5" / "release.toml", project / "dist", h.url)
        assert result.xet == (transport == "xet") and result.bytes_measured
        return {"seconds": round(seconds, 3), "bytes_sent": result.bytes_sent, "hub_received": received(h.stats)}


def mixed(work: Path, transport: str, large: int, large_size: int, small: int) -> dict[str, Any]:
    """The mixed release (bench/versions.py's shape: the example, large sparse files, many random 100 KB ones)."""
    folder_big, folder_small = work / "mixed-large", work / "mixed-small"
    if not folder_big.exists():
        folder_big.mkdir(parents=True)
        for i in range(large):
            with open(folder_big / f"part-{i}.bin", "wb") as f:
                f.truncate(large_size)  # sparse
        write_random_files(folder_small, small, 100_000, seed=24)
    spec = spec_with_folders(work / f"spec-mixed-{transport}", [(folder_big, "large"), (folder_small, "data")])
    with hub(work / f"hub-mixed-{transport}", transport) as h:
        result, seconds = build_and_push(spec, work / f"dist-mixed-{transport}", h.url)
        assert result.xet == (transport == "xet") and result.bytes_measured
        return {"seconds": round(seconds, 3), "bytes_sent": result.bytes_sent, "hub_received": received(h.stats)}


def change_one_tensor(source: Path, dest: Path, name: str) -> int:
    """A copy of the drafter with every bf16 value of one tensor changed (its lowest mantissa bit); its size."""
    shutil.copyfile(source, dest)
    with dest.open("r+b") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        begin, end = json.loads(f.read(length))[name]["data_offsets"]
        f.seek(8 + length + begin)
        data = bytearray(f.read(end - begin))
        data[0::2] = bytes(b ^ 1 for b in data[0::2])  # little-endian bf16: the low byte holds the mantissa's end
        f.seek(8 + length + begin)
        f.write(data)
    return end - begin


def next_spec(spec: Path, version: str) -> None:
    """The example's spec as `init VERSION --from v5` words it, its evidence declared still applying (the bench
    JSONs were measured on v5; only the weights' bytes change here)."""
    text = spec.read_text()
    for old, new in (
        ('version = "v5"', f'version = "{version}"'),
        ("Champion Drafter (v5)", f"Champion Drafter ({version})"),
        ("`v5` is this exact release", f"`{version}` is this exact release"),
    ):
        assert old in text, f"artifacts/v5/release.toml changed: update bench/xet.py ({old!r})"
        text = text.replace(old, new, 1)
    benches = sorted(p.name for p in spec.parent.glob("glm53-v*.json"))
    text += f'\n[[card.still_applies]]\nfiles = {json.dumps(benches)}\nreason = "bench: only the bytes moved"\n'
    spec.write_text(text)


def next_versions(work: Path, transport: str, drafter: Path, changed: Path) -> dict[str, Any]:
    project = work / f"next-{transport}"
    dist = project / "dist"
    out: dict[str, Any] = {}
    with hub(work / f"hub-next-{transport}", transport) as h:
        steps = (("v5", drafter, "model.safetensors"), ("v6", changed, "model.safetensors"), ("v7", changed, NEW_PATH))
        for version, weights, path_in_repo in steps:
            spec = make_spec(project / "artifacts" / version, [(weights, path_in_repo)], md5=False, full_size=False)
            if version != "v5":
                next_spec(spec, version)
            before = received(h.stats), h.stats.xet_bytes["xorb_received"]
            result, seconds = build_and_push(spec, dist, h.url)
            assert result.xet == (transport == "xet") and result.bytes_measured
            out[version] = {
                "seconds": round(seconds, 3),
                "bytes_sent": result.bytes_sent,
                "large_files_received": received(h.stats) - before[0],
                "xorb_bytes": h.stats.xet_bytes["xorb_received"] - before[1],
                "xet_new": result.xet_new,
                "xet_deduplicated": result.xet_deduplicated,
                # the drafter's own chunk bytes: new (sent in xorbs, before compression), deduplicated
                "drafter_xet": (result.xet_files or {}).get(path_in_repo),
            }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256 * MiB, help="the drafter's size, about (bytes)")
    parser.add_argument("--full-size", action="store_true", help="the real config's widths (2.3 GB)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--mixed", default="4,64,1000", help="the mixed release: LARGE,LARGE_MIB,SMALL (100 KB each)")
    args = parser.parse_args(argv)

    from release.kinds.dflash2_drafter.inventory import expected_tensors, write_drafter

    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="hf-release-bench-xet-") as folder:
        work = Path(folder)
        results["example"] = {t: example(work, t) for t in ("xet", "lfs")}
        large, large_mib, small = (int(n) for n in args.mixed.split(","))
        results["mixed"] = {t: mixed(work, t, large, large_mib * MiB, small) for t in ("xet", "lfs")}
        results["mixed_shape"] = {"large": large, "large_size": large_mib * MiB, "small": small}
        config = json.loads((EXAMPLE / "config.json").read_text())
        if not args.full_size:
            config = quick_config(config, args.size)
        drafter, changed = work / "drafter-v5.safetensors", work / "drafter-v6.safetensors"
        write_drafter(drafter, config, data="random", seed=39)
        size = drafter.stat().st_size
        shape, _ = expected_tensors(config)[CHANGED_TENSOR]
        tensor = change_one_tensor(drafter, changed, CHANGED_TENSOR)
        assert tensor == math.prod(shape) * 2
        results["drafter"] = {"size": size, "changed_tensor": CHANGED_TENSOR, "changed_tensor_bytes": tensor}
        results["next"] = {t: next_versions(work, t, drafter, changed) for t in ("xet", "lfs")}
    report(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


def report(r: dict[str, Any]) -> None:
    for t, e in r["example"].items():
        print(
            f"[xet] example push over {t}: {e['seconds']} s, {e['bytes_sent']:,} B sent, "
            f"{e['hub_received']:,} B received"
        )
    shape = r["mixed_shape"]
    for t, e in r["mixed"].items():
        print(
            f"[xet] mixed release ({shape['large']} x {shape['large_size']:,} B sparse + {shape['small']:,} x 100 KB) "
            f"push over {t}: {e['seconds']} s, {e['bytes_sent']:,} B sent, {e['hub_received']:,} B large files received"
        )
    d = r["drafter"]
    print(f"[xet] drafter: {d['size']:,} B; {d['changed_tensor']} {d['changed_tensor_bytes']:,} B changed in v6")
    for t, steps in r["next"].items():
        for version, s in steps.items():
            print(
                f"[xet] {version} over {t}: {s['seconds']} s, large files {s['large_files_received']:,} B "
                f"({s['large_files_received'] / d['size']:.4f}x the drafter), xorbs {s['xorb_bytes']:,} B, "
                f"new {s['xet_new']}, deduplicated {s['xet_deduplicated']}; "
                f"drafter (new, deduplicated) {s['drafter_xet']}"
            )
    v6, v7 = r["next"]["xet"]["v6"], r["next"]["xet"]["v7"]
    ratio = v6["large_files_received"] / d["size"]
    print(f"[ratio] xet-one-tensor-changed: {ratio:.4f} / ≤ 0.05 {'PASS' if ratio <= 0.05 else 'MISS'}")
    drafter_new = v7["drafter_xet"][0]
    print(f"[ratio] xet-new-path-drafter-new-bytes: {drafter_new} / ≤ 0 {'PASS' if drafter_new == 0 else 'MISS'}")


if __name__ == "__main__":
    main()
