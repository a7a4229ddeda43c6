"""The previous version read from its spec, when it is neither staged nor published on the Hub but every
file its spec names is present (e.g. built here, never pushed, its staging removed).

Its files are hashed when the comparison runs, after this release's digests: a file both versions share (the
same inode, size and mtime — hard-linked into this staging) is never read twice; only a file this version
replaced (the old weights) is hashed anew. Its metrics are read from its bench and eval files as build records
them. It records no evidence of its own: its evidence files count as measured on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from release.builder.collect import generated_names, path_in_repo, resolve_source
from release.checks.bench import load_bench
from release.checks.model_files import load_eval
from release.errors import CheckFailed
from release.history.compare import SMALL_FILE, FileEntry, Snapshot, release_metrics
from release.spec import ReleaseSpec
from release.staged.file_stat import Stat
from release.staged.names import chart_paths

StatKey = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


def stat_key(stat: Stat) -> StatKey:
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


@dataclass(frozen=True)
class SpecPrevious:
    """The previous version's spec, its files resolved (path_in_repo → file): hashed by `snapshot`."""

    spec: ReleaseSpec
    files: dict[str, tuple[str, Path]]  # path_in_repo → (role, local file)

    @classmethod
    def of(cls, spec: ReleaseSpec) -> SpecPrevious | str:
        """The spec's files, or why they cannot stand for what was released (the first source that is missing
        or does not stage)."""
        files: dict[str, tuple[str, Path]] = {}
        for fs in spec.files:
            sources, why = resolve_source(spec.root, fs.source, spec.reach)
            if why:
                return f"{fs.source}: {why}"
            for source in sources:
                dest, why = path_in_repo(fs, source, generated_names(chart_paths(spec.card)))
                if why or dest in files:
                    return f"{fs.source}: {why or f'{dest} is named twice'}"
                files[dest] = (fs.role, Path(source))
        return cls(spec, files)

    def snapshot(self, known: Mapping[StatKey, str]) -> Snapshot:
        """The snapshot, hashing only the files whose digest `known` (this build's, by stat) does not hold."""
        entries = {}
        for dest, (role, source) in sorted(self.files.items()):
            stat = source.stat()
            digest = known.get(stat_key(stat))
            if digest is None:
                with source.open("rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
            entries[dest] = FileEntry(role, stat.st_size, digest)
        return Snapshot(self.spec.version, entries, self._read, self._metrics())

    def _read(self, dest: str) -> bytes | None:
        found = self.files.get(dest)
        if found is None or found[1].stat().st_size > SMALL_FILE:
            return None
        return found[1].read_bytes()

    def _metrics(self) -> dict[str, float] | None:
        """What its release.json would record: None when one of its evidence files does not read."""
        bench, evals = {}, {}
        try:
            for dest, (role, source) in self.files.items():
                if source.stat().st_size > SMALL_FILE:
                    continue
                if role == "bench":
                    bench[dest] = load_bench(source, dest).cells
                elif role == "eval":
                    evals[dest] = load_eval(source, dest).results
        except (CheckFailed, OSError):
            return None
        return release_metrics(bench, evals, self.spec.card.get("bench", {}).get("current", {}).get("files"))
