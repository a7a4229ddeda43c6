"""Versions compared: what changed since the previous version — files, config keys, metrics, ledger rows.

Pure: both versions come in as Snapshots (builder/previous.py finds the previous one, staged or on the
Hub, before staging; builder/steps.py describes the release being built from what its checks parsed).
A release records its own headline metrics in release.json, so the next version compares against
them wherever the previous release is read from. The result goes into release.json, the commit
description and the tag message; card/changes.py prints it as the card's "Changes since vN" section.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from release.evidence.bench_metrics import BENCH_METRICS
from release.util.jsonio import parse
from release.util.wording import human_size

SMALL_FILE = 8 * 1024 * 1024  # only files up to this size are read to compare contents
MAX_LISTED = 50  # rows of each kind in a commit description (release.json keeps them all)
# The JSON files whose keys are compared: the model's config.json and generation_config.json (its sampling defaults)
CONFIG_ROLES = ("config", "generation-config")


class Entry(Protocol):
    """A file as the comparison reads it: a FileEntry, or build's own record of the file (no copy per file)."""

    @property
    def role(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def sha256(self) -> str: ...


@dataclass(frozen=True, slots=True)  # one per file: no __dict__
class FileEntry:
    role: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Snapshot:
    """One version as the comparison sees it: its files, a reader for small ones, its recorded metrics."""

    version: str
    files: Mapping[str, Entry]
    read: Callable[[str], bytes | None]
    metrics: dict[str, float] | None
    evidence: dict[str, Any] | None = None  # release.json's record of which version measured each evidence file


@dataclass(frozen=True)
class Unread:
    """An earlier version known to exist (its spec is in artifacts/) whose release cannot be read here: not staged,
    not published, not every file its spec names present. Nothing can be compared with it, and no evidence file
    can be told apart from its (release/history/provenance.py says so, never "measured on" a version)."""

    version: str
    why: str  # what is missing, for the record's note


@dataclass(frozen=True)
class Changes:
    since: str | None  # "v5" (staged), "hub:v5" (published), "spec:v5" (its spec's files), or None for a first release
    files: list[dict[str, Any]] = field(default_factory=list)  # path, change, sizes, short digests
    config: list[dict[str, Any]] = field(default_factory=list)  # file, key, old, new
    metrics: list[dict[str, Any]] = field(default_factory=list)  # metric, old, new, delta
    ledger_rows_added: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be compared, and why
    evidence: list[dict[str, Any]] = field(
        default_factory=list
    )  # evidence measured on an earlier version (release/history/provenance.py)
    # What the two versions have to compare besides files ("config", "metrics", "ledger"): the card counts only
    # those (a model with no metrics is not told "0 metrics"). None: recorded by an earlier hf-release (all four).
    compared: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.evidence:  # said only when evidence was reused (a first release records what it always has)
            del out["evidence"]
        if self.compared is None:  # a first release compares nothing: its record stays as it was
            del out["compared"]
        return out

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
        if old is None or new is None or role not in (*CONFIG_ROLES, "ledger"):
            continue
        before, after = previous.read(path), current.read(path)
        if before is None or after is None:
            notes.append(f"{path}: larger than {SMALL_FILE} bytes or unreadable; contents not compared")
        elif role in CONFIG_ROLES:
            config += _config_changes(path, before, after, notes)
        else:
            ledger += _rows_added(before, after)
    metrics, metric_note = _metric_deltas(previous.metrics, current.metrics or {})
    roles = {e.role for snap in (current, previous) for e in snap.files.values()}
    compared = [
        what
        for what, has in (
            ("config", bool(roles & set(CONFIG_ROLES))),
            ("metrics", bool(previous.metrics or current.metrics)),
            ("ledger", "ledger" in roles),
        )
        if has
    ]
    return Changes(since, files, config, metrics, ledger, notes + metric_note, compared=compared)


def release_metrics(
    bench: Mapping[str, Sequence[Mapping[str, Any]]],
    evals: Mapping[str, Mapping[str, Any]],
    bench_current: list[str] | None,
) -> dict[str, float]:
    """This release's headline numbers: each bench cell's metrics (mean over the current bench files)
    and each numeric lm-evaluation-harness result. `bench` maps path_in_repo → its cells, `evals` maps
    path_in_repo → its `results` object; files are read in path order (the order the means sum in)."""
    sums: dict[str, list[float]] = {}
    for path in sorted(bench.keys() | evals.keys()):
        current = bench_current is None or any(
            fnmatch.fnmatchcase(path, pattern) for pattern in bench_current
        )  # globs, as the card reads them
        if path in bench and current:
            for cell in bench[path]:
                for metric in BENCH_METRICS:
                    _add(
                        sums,
                        f"{metric.field} c{cell.get('concurrency')} ctx{cell.get('context_tokens')}",
                        cell.get(metric.field),
                    )
        elif path in evals:
            for task, values in evals[path].items():
                for name, value in values.items() if isinstance(values, dict) else ():
                    if "stderr" not in name:
                        _add(sums, f"{task} {name}", value)
    return {name: round(sum(v) / len(v), 6) for name, v in sums.items()}


def describe(changes: Changes | None, message: str | None = None) -> str:
    """The commit description (and tag message body): the author's words, then what changed."""
    lines = [message.strip(), ""] if message and message.strip() else []
    if changes is None:
        return "\n".join(lines).strip()
    if changes.since is None and changes.notes:  # an earlier version exists, but could not be read
        lines += [f"Not compared with an earlier version: {n}" for n in changes.notes]
        lines += [f"- evidence {e['path']}: {evidence_words(e)}" for e in changes.evidence[:MAX_LISTED]]
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
    hidden = sum(
        max(0, len(x) - MAX_LISTED) for x in (changes.files, changes.config, changes.metrics, changes.ledger_rows_added)
    )
    lines += [f"- … and {hidden} more (release.json lists them all)"] if hidden else []
    lines += [f"- evidence {e['path']}: {evidence_words(e)}" for e in changes.evidence[:MAX_LISTED]]
    lines += [f"- note: {n}" for n in changes.notes]
    return "\n".join(lines).strip()


def evidence_words(row: Mapping[str, Any]) -> str:
    """How the card and the commit description word an evidence file measured on an earlier version."""
    if not row["measured_on"]:
        return (
            f"cannot tell which version measured it: {row['unread']}'s release (its release.json, or its files) "
            "was not at hand to compare with"
        )
    if not row.get("model_changed"):
        return f"measured on {row['measured_on']}, the same weights as this version's"
    words = f"measured on {row['measured_on']}; the weights changed since"
    return words + (f"; the authors state it still applies: {row['still_applies']}" if row.get("still_applies") else "")


def _file_row(path: str, old: Entry | None, new: Entry | None) -> dict[str, Any]:
    change = "added" if old is None else "removed" if new is None else "changed"
    row: dict[str, Any] = {"path": path, "change": change, "role": (new or old).role}  # type: ignore[union-attr]
    if old is not None:
        row.update(old_size=old.size, old_sha256=old.sha256[:12])
    if new is not None:
        row.update(new_size=new.size, new_sha256=new.sha256[:12])
    return row


def _sizes(row: dict[str, Any]) -> str:
    if row["change"] == "added":
        return f"({human_size(row['new_size'])}, {row['new_sha256']})"
    if row["change"] == "removed":
        return f"(was {human_size(row['old_size'])}, {row['old_sha256']})"
    return f"({human_size(row['old_size'])} {row['old_sha256']} → {human_size(row['new_size'])} {row['new_sha256']})"


def _config_changes(path: str, before: bytes, after: bytes, notes: list[str]) -> list[dict[str, Any]]:
    try:
        old, new = _flatten(parse(before, detect_encoding=True)), _flatten(parse(after, detect_encoding=True))
    except (ValueError, RecursionError):
        notes.append(f"{path}: not JSON on one side; keys not compared")
        return []
    missing = "(absent)"
    return [
        {"file": path, "key": key, "old": old.get(key, missing), "new": new.get(key, missing)}
        for key in sorted(old.keys() | new.keys())
        if old.get(key, missing) != new.get(key, missing)
    ]


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
    if old is None and not new:  # a model with no metrics is told nothing about metrics
        return [], []
    if old is None:
        return [], ["the previous release.json records no metrics (built by an older hf-release); metrics not compared"]
    rows = [
        {"metric": name, "old": old[name], "new": new[name], "delta": round(new[name] - old[name], 6)}
        for name in sorted(old.keys() & new.keys())
        if old[name] != new[name]
    ]
    return rows, []


def _add(sums: dict[str, list[float]], name: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        sums.setdefault(name, []).append(float(value))
