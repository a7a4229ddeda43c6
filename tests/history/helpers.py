"""Helpers for the history tests (compare, provenance): versions made of in-memory files."""

from __future__ import annotations

import hashlib

from release.history.compare import FileEntry, Snapshot


def snapshot(version: str, files: dict[str, tuple[str, bytes]], metrics: dict[str, float] | None = None) -> Snapshot:
    """A version of `files` (path -> (role, bytes)) with its recorded metrics, as the comparison sees it."""
    entries = {p: FileEntry(role, len(data), hashlib.sha256(data).hexdigest()) for p, (role, data) in files.items()}
    return Snapshot(version, entries, lambda path: files[path][1], metrics)
