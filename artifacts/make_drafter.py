"""Write the example release's drafter weights, deterministically.

The real v5 drafter is 2,342,169,824 bytes, too big for a git repo, so the committed
``v5/model.safetensors`` is a miniature: the same 81 tensor names and structure as the
real config, with tiny dimensions and seeded pseudo-random BF16 values. Running this
script twice gives byte-identical output (tests/test_inventory.py checks the committed
file against a fresh run).

``--full-size PATH`` instead writes a sparse file with the real config's shapes at the
real size (header plus a hole for the data), for exercising checkers at full scale.

Usage:
    python artifacts/make_drafter.py                    # rewrite artifacts/v5/model.safetensors
    python artifacts/make_drafter.py --full-size /tmp/model.safetensors
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Run as a plain script from a clone: make the repo's `release` package importable.
sys.path.insert(0, str(HERE.parent))

from release.kinds.dflash2_drafter.inventory import FULL_SIZE, write_drafter  # noqa: E402

CONFIG = HERE / "v5" / "config.json"
OUTPUT = HERE / "v5" / "model.safetensors"
SEED = 5

# Shrinks every dimension that scales the file; layer count, target_layer_ids and the
# conv settings stay as in the real config so the tensor list and structure are identical.
TINY_DIMS: dict[str, Any] = {
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 8,
    "vocab_size": 64,
}
TINY_DFLASH: dict[str, Any] = {"selector_rank": 8, "selector_top_k": 4, "mask_token_id": 63}


def tiny_config(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` with the miniature dimensions."""
    tiny = copy.deepcopy(config)
    tiny.update(TINY_DIMS)
    tiny["dflash_config"].update(TINY_DFLASH)
    return tiny


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=OUTPUT,
        metavar="PATH",
        help=f"where to write the miniature (default: {OUTPUT.relative_to(HERE.parent)})",
    )
    parser.add_argument(
        "--full-size",
        type=Path,
        metavar="PATH",
        help="write the sparse full-size drafter here instead of the miniature",
    )
    args = parser.parse_args(argv)
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    if args.full_size is not None:
        write_drafter(args.full_size, config, data="sparse", total_size=FULL_SIZE)
        print(f"wrote {args.full_size} ({args.full_size.stat().st_size:,} bytes, sparse)")
    else:
        write_drafter(args.out, tiny_config(config), data="random", seed=SEED)
        print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
