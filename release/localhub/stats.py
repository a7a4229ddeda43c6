"""What the local Hub counts while it serves, for tests and the bench to read (`app.state.stats`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class HubStats:
    """Counters tests read from `app.state.stats`. Only the event loop thread updates them."""

    requests: Counter[str] = field(default_factory=Counter)  # "METHOD route" -> count
    upload_bytes: Counter[str] = field(default_factory=Counter)  # LFS oid -> bytes received, all attempts
    commits: int = 0
    faults: Counter[str] = field(default_factory=Counter)  # fault kind -> times fired
    # Xet CAS: bytes of xorbs received ("xorb_received", split "xorb_new"/"xorb_known"), of shards
    # ("shard_received"), of xorb ranges sent ("fetch_sent"); files registered ("shard_files") and bridged.
    xet_bytes: Counter[str] = field(default_factory=Counter)
