"""What changed since the previous version: files, config keys, metrics, ledger rows.

A release records its own headline metrics in release.json, so the next version compares against
them whether the previous release is staged here or read from the Hub (`--since hub:v5`, the only
case where build uses the network). The result goes into release.json, the commit description and
the tag message; card/changes.py prints it as the card's "Changes since vN" section.
"""

from __future__ import annotations

import atexit
import fnmatch
import json
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InputError

if TYPE_CHECKING:
    from .manifest import Manifest

SMALL_FILE = 8 * 1024 * 1024  # only files up to this size are read to compare contents
BENCH_METRICS = ("aggregate_tps", "ttft_avg", "inter_token_latency_avg", "server_spec_accept_length")
MAX_LISTED = 50  # rows of each kind in a commit description (release.json keeps them all)


@dataclass(frozen=True)
class FileEntry:
    role: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Snapshot:
    """One version as the comparison sees it: its files, a reader for small ones, its recorded metrics."""

    version: str
    files: dict[str, FileEntry]
    read: Callable[[str], bytes | None]
    metrics: dict[str, float] | None


@dataclass(frozen=True)
class Changes:
    since: str | None  # "v5", "hub:v5", or None for a first release
    files: list[dict[str, Any]] = field(default_factory=list)  # path, change, sizes, short digests
    config: list[dict[str, Any]] = field(default_factory=list)  # file, key, old, new
    metrics: list[dict[str, Any]] = field(default_factory=list)  # metric, old, new, delta
    ledger_rows_added: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be compared, and why

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Changes:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def compare(current: Snapshot, previous: Snapshot | None, since: str | None) -> Changes:
    """Everything that differs from the previous version's release; a first release has no changes."""
    if previous is None:
        return Changes(since=None)
    files, config, ledger, notes = [], [], [], []
    for path in sorted(current.files.keys() | previous.files.keys()):
        old, new = previous.files.get(path), current.files.get(path)
        if old is not None and new is not None and old.sha256 == new.sha256:
            continue
        files.append(_file_row(path, old, new))
        role = (new or old).role  # type: ignore[union-attr]
        if old is None or new is None or role not in ("config", "ledger"):
            continue
        before, after = previous.read(path), current.read(path)
        if before is None or after is None:
            notes.append(f"{path}: larger than {SMALL_FILE} bytes or unreadable; contents not compared")
        elif role == "config":
            config += _config_changes(path, before, after, notes)
        else:
            ledger += _rows_added(before, after)
    metrics, metric_note = _metric_deltas(previous.metrics, current.metrics or {})
    return Changes(since, files, config, metrics, ledger, notes + metric_note)


def release_metrics(files: dict[str, tuple[str, Path]], bench_current: list[str] | None) -> dict[str, float]:
    """This release's headline numbers: each bench cell's metrics (mean over the current bench files)
    and each numeric lm-evaluation-harness result. `files` maps path_in_repo → (role, file)."""
    sums: dict[str, list[float]] = {}
    for path, (role, file) in sorted(files.items()):
        data = _small_json(file)
        current = bench_current is None or any(fnmatch.fnmatchcase(path, pattern) for pattern in bench_current)  # globs, as the card reads them
        if role == "bench" and current and isinstance(data, dict):
            for cell in data.get("results", []):
                for name in BENCH_METRICS:
                    _add(sums, f"{name} c{cell.get('concurrency')} ctx{cell.get('context_tokens')}", cell.get(name))
        elif role == "eval" and isinstance(data, dict) and isinstance(data.get("results"), dict):
            for task, values in data["results"].items():
                for name, value in (values.items() if isinstance(values, dict) else ()):
                    if "stderr" not in name:
                        _add(sums, f"{task} {name}", value)
    return {name: round(sum(v) / len(v), 6) for name, v in sums.items()}


def staged_snapshot(folder: Path) -> Snapshot:
    """A staged release (DIST/VERSION) as the comparison reads it."""
    from .manifest import MANIFEST_NAME, Manifest

    manifest = Manifest.load(folder / MANIFEST_NAME)

    def read(path: str) -> bytes | None:
        return _read_small(folder / path)

    return Snapshot(manifest.version, _entries(manifest), read, _metrics(manifest.metrics))


def hub_snapshot(hub: Any, repo_id: str, version: str) -> Snapshot:
    """A published release read from the Hub at its tag: release.json, then small files on demand."""
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    from .manifest import MANIFEST_NAME, Manifest
    from .publish.client import remote_errors

    cache = Path(tempfile.mkdtemp(prefix="hf-release-since-"))
    atexit.register(shutil.rmtree, cache, True)  # read lazily during the build: removed when the command ends

    def download(path: str) -> Path:
        with remote_errors(repo_id, f"reading {path} at {version}"):
            try:
                return Path(hub.api.hf_hub_download(repo_id, path, revision=version, cache_dir=cache))
            except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
                raise InputError(f"{repo_id} has no {path} at {version}; pick a version published by hf-release",
                                 file=f"--since hub:{version}") from None

    try:
        manifest = Manifest.load(download(MANIFEST_NAME))  # the Hub's copy is input like any other: schema and digest checked
    except InputError as exc:
        raise InputError(f"{repo_id}@{version}: {exc.problems[0].message.split(';')[0]}; pick another version",
                         file=f"--since hub:{version}") from None
    entries = _entries(manifest)

    def read(path: str) -> bytes | None:
        entry = entries.get(path)
        return None if entry is None or entry.size > SMALL_FILE else _read_small(download(path))

    return Snapshot(version, entries, read, _metrics(manifest.metrics))


def _metrics(metrics: Any) -> dict[str, float] | None:
    """release.json's recorded metrics, when they are a mapping of numbers (else: not comparable)."""
    if not isinstance(metrics, dict) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in metrics.values()):
        return None
    return {str(k): float(v) for k, v in metrics.items()}


def describe(changes: Changes | None, message: str | None = None) -> str:
    """The commit description (and tag message body): the author's words, then what changed."""
    lines = [message.strip(), ""] if message and message.strip() else []
    if changes is None:
        return "\n".join(lines).strip()
    if changes.since is None:
        lines.append("First release: nothing to compare with.")
        return "\n".join(lines).strip()
    lines.append(f"Changes since {changes.since}:")
    if not (changes.files or changes.config or changes.metrics or changes.ledger_rows_added):
        lines.append("- no file changed")
    for row in changes.files[:MAX_LISTED]:
        lines.append(f"- {row['change']} {row['path']} " + _sizes(row))
    lines += [f"- config {c['file']}: {c['key']}: {c['old']} → {c['new']}" for c in changes.config[:MAX_LISTED]]
    lines += [f"- {m['metric']}: {m['old']} → {m['new']} ({m['delta']:+g})" for m in changes.metrics[:MAX_LISTED]]
    lines += [f"- ledger row added: {r}" for r in changes.ledger_rows_added[:MAX_LISTED]]
    hidden = sum(max(0, len(x) - MAX_LISTED) for x in (changes.files, changes.config, changes.metrics, changes.ledger_rows_added))
    lines += [f"- … and {hidden} more (release.json lists them all)"] if hidden else []
    lines += [f"- note: {n}" for n in changes.notes]
    return "\n".join(lines).strip()


def _entries(manifest: Manifest) -> dict[str, FileEntry]:
    """The artifacts of a manifest (the generated card and chart always change: not compared)."""
    return {f.path_in_repo: FileEntry(f.role, f.size, f.sha256) for f in manifest.artifacts}


def _file_row(path: str, old: FileEntry | None, new: FileEntry | None) -> dict[str, Any]:
    change = "added" if old is None else "removed" if new is None else "changed"
    row: dict[str, Any] = {"path": path, "change": change, "role": (new or old).role}  # type: ignore[union-attr]
    if old is not None:
        row.update(old_size=old.size, old_sha256=old.sha256[:12])
    if new is not None:
        row.update(new_size=new.size, new_sha256=new.sha256[:12])
    return row


def _sizes(row: dict[str, Any]) -> str:
    if row["change"] == "added":
        return f"({row['new_size']:,} B, {row['new_sha256']})"
    if row["change"] == "removed":
        return f"(was {row['old_size']:,} B, {row['old_sha256']})"
    return f"({row['old_size']:,} B {row['old_sha256']} → {row['new_size']:,} B {row['new_sha256']})"


def _config_changes(path: str, before: bytes, after: bytes, notes: list[str]) -> list[dict[str, Any]]:
    try:
        old, new = _flatten(json.loads(before)), _flatten(json.loads(after))
    except (ValueError, RecursionError):
        notes.append(f"{path}: not JSON on one side; keys not compared")
        return []
    missing = "(absent)"
    return [{"file": path, "key": key, "old": old.get(key, missing), "new": new.get(key, missing)}
            for key in sorted(old.keys() | new.keys()) if old.get(key, missing) != new.get(key, missing)]


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Dotted keys → compact JSON values (lists compared whole)."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix or "(document)": json.dumps(value, sort_keys=True, ensure_ascii=False)}


def _rows_added(before: bytes, after: bytes) -> list[str]:
    old = set(before.decode("utf-8", "replace").splitlines()[1:])
    return [row for row in after.decode("utf-8", "replace").splitlines()[1:] if row.strip() and row not in old]


def _metric_deltas(old: dict[str, float] | None, new: dict[str, float]) -> tuple[list[dict[str, Any]], list[str]]:
    if old is None:
        return [], ["the previous release.json records no metrics (built by an older hf-release); metrics not compared"]
    rows = [{"metric": name, "old": old[name], "new": new[name], "delta": round(new[name] - old[name], 6)}
            for name in sorted(old.keys() & new.keys()) if old[name] != new[name]]
    return rows, []


def _add(sums: dict[str, list[float]], name: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        sums.setdefault(name, []).append(float(value))


def _read_small(path: Path) -> bytes | None:
    try:
        if path.stat().st_size > SMALL_FILE:
            return None
        return path.read_bytes()
    except OSError:
        return None


def _small_json(path: Path) -> Any:
    data = _read_small(path)
    try:
        return json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return None


def find_previous(version: str, dist_root: Path, since: str | None, hub: Callable[[], Any] | None, repo_id: str) -> tuple[str, Snapshot] | None:
    """What to compare with: `--since vN` (staged), `--since hub:vN`, else the greatest staged version before this one."""
    from .manifest import MANIFEST_NAME
    from .versions import previous_version, version_key, version_problem, versions_under

    if since is None:
        found = previous_version(version, versions_under(dist_root, MANIFEST_NAME))
        return (found, staged_snapshot(dist_root / found)) if found else None
    on_hub = since.startswith("hub:")
    wanted = since.removeprefix("hub:")
    why = version_problem(wanted)
    if not why and version_key(wanted) >= version_key(version):
        why = "is this release itself" if wanted == version else f"comes after {version}"
    if why:
        raise InputError(f"{wanted!r} {why}; name an earlier version, e.g. v5 or hub:v5", file="--since")
    if on_hub and hub is None:
        raise InputError("comparing with the Hub needs a connection; run it through `hf-release build --since hub:VERSION`", file="--since")
    if on_hub:
        return since, hub_snapshot(hub(), repo_id, wanted)
    if not (dist_root / wanted / MANIFEST_NAME).is_file():
        raise InputError(f"{wanted} is not staged in {dist_root}; build it first, or compare with the Hub's: --since hub:{wanted}",
                         file="--since")
    return wanted, staged_snapshot(dist_root / wanted)


class CompareWithPrevious:
    """Step: what changed since the previous version (found before staging, see build), and this release's metrics."""

    name = "changes"

    def run(self, ctx: Any) -> Any:
        from .pipeline import Done

        files = {f.path_in_repo: (f.role, f.staged) for f in ctx.files if not f.generated}
        bench = ctx.spec.card.get("bench", {}).get("current", {}).get("files")
        metrics = release_metrics(files, bench)
        previous = ctx.previous
        entries = {f.path_in_repo: FileEntry(f.role, f.size, f.sha256) for f in ctx.files if not f.generated}
        current = Snapshot(ctx.spec.version, entries, lambda path: _read_small(files[path][1]), metrics)
        changes = compare(current, previous[1] if previous else None, previous[0] if previous else None)
        ctx.changes, ctx.metrics = changes, metrics
        if changes.since is None:
            return Done("first release: nothing to compare with")
        return Done(f"since {changes.since}: {len(changes.files)} files, {len(changes.config)} config keys, "
                    f"{len(changes.metrics)} metrics, {len(changes.ledger_rows_added)} ledger rows changed")
