"""A file named on the command line, read with a cap: up to cap + 1 bytes, never by its stat (a FIFO, /dev/zero
or a /proc file says 0 bytes and may never end)."""

from __future__ import annotations

from pathlib import Path

from release.errors import InputError


def read_capped(path: Path, cap: int, *, what: str, advice: str, label: str | None = None) -> bytes:
    """The file's bytes, or InputError naming it (`label`, else the path): over `cap` bytes (`advice` says what
    to pass instead), or unreadable (`what` says what it was read as)."""
    where = label or str(path)
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", file=where) from None
    if len(data) > cap:
        raise InputError(f"is over {cap:,} bytes, more than any {what}; {advice}", file=where)
    return data
