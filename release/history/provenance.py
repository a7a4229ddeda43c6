"""Evidence bound to the weights it measured: for each evidence file, the version that measured it.

An evidence file whose bytes the previous version shipped keeps that version's record (carried forward while
its bytes stay the same), at whatever path it has now: provenance follows the digest, so a file moved to a new
path_in_repo is not taken for a new measurement; a file whose bytes are new was measured on this version. When
an earlier version is known but its release cannot be read here (Unread: no release.json, its files not all
present), no file can be told apart from its: the record says so (`unread`), never "measured on" a version.
Each record holds the digest of "the model" at the version that measured it — the files of the roles the kind
names (`Kind.model_roles`): weights and config, a pipeline's components, the GGUF files, an adapter (whose
config names its base). A
carried file whose model digest differs from this version's measured other weights: it is stale, and build
refuses it as this version's evidence unless the spec declares that it still applies ([[card.still_applies]]).
Pure: both versions come in as Snapshots (release/history/compare.py).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from release.history.compare import Entry, Snapshot

EVIDENCE_ROLES = (
    "bench",
    "eval",
)  # files whose numbers measure the model (the ledger records experiments, not this model)


def model_digest(files: Mapping[str, Entry], roles: Iterable[str]) -> str:
    """sha256 over the (path, sha256) of the model's files: what evidence measured."""
    wanted = set(roles)
    body = sorted((path, f.sha256) for path, f in files.items() if f.role in wanted)
    return hashlib.sha256(json.dumps(body, separators=(",", ":")).encode()).hexdigest()


def measured_on(
    current: Snapshot,
    previous: Snapshot | None,
    roles: Iterable[str],
    card: Mapping[str, Any],
    unread: str | None = None,
) -> dict[str, dict[str, str]]:
    """path → {"measured_on": version, "model_sha256": the model digest at that version}, for every evidence file.
    A new file the spec labels as an earlier version's ([card.bench.previous]) was measured on that version,
    whose model this release does not hold: its model digest is "" (unknown), never this version's.
    `unread` names an earlier version that exists but could not be read (no previous Snapshot): every other
    evidence file may be its, so each is recorded as {"measured_on": "", "model_sha256": "", "unread": version}."""
    roles = tuple(roles)
    model = model_digest(current.files, roles)
    before = model_digest(previous.files, roles) if previous is not None else ""
    shipped = _paths_by_digest(previous)
    record: dict[str, dict[str, str]] = {}
    for path, entry in sorted(current.files.items()):
        if entry.role not in EVIDENCE_ROLES:
            continue
        same = previous.files.get(path) if previous is not None else None
        old = path if same is not None and same.sha256 == entry.sha256 else shipped.get(entry.sha256)
        if previous is None or old is None:
            label = previous_label(path, card)
            if label and label != current.version:
                record[path] = {"measured_on": label, "model_sha256": ""}
            elif previous is None and unread:
                record[path] = {"measured_on": "", "model_sha256": "", "unread": unread}
            else:
                record[path] = {"measured_on": current.version, "model_sha256": model}
            continue
        carried = (previous.evidence or {}).get(old)
        record[path] = (
            {k: v for k, v in carried.items() if isinstance(v, str)}
            if isinstance(carried, dict)
            and all(isinstance(carried.get(k), str) for k in ("measured_on", "model_sha256"))
            else {"measured_on": previous.version, "model_sha256": before}
        )  # an older release.json: shipped with it
    return record


def _paths_by_digest(previous: Snapshot | None) -> dict[str, str]:
    """sha256 → the previous version's path of those bytes: an evidence file's first, then any (the lowest path:
    one answer for the same inputs)."""
    if previous is None:
        return {}
    found: dict[str, str] = {}
    for path, entry in sorted(previous.files.items(), key=lambda item: (item[1].role not in EVIDENCE_ROLES, item[0])):
        found.setdefault(entry.sha256, path)
    return found


def reused(
    record: Mapping[str, Mapping[str, str]], version: str, model: str, card: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The evidence files measured on an earlier version, as the card and the changes record say it: path,
    version, whether the model changed since, and the spec's reason when it declares that the file still applies.
    Files the spec labels as an earlier version's ([card.bench.previous]) are presented as such already. A file
    whose version cannot be told (recorded `unread`) is a row without a version: {"path", "measured_on": "",
    "unread": the version whose release was not at hand}."""
    rows = []
    for path, r in sorted(record.items()):
        if r["measured_on"] == version or presented_as_another_version(path, card):
            continue
        if not r["measured_on"]:  # an earlier version's release was not at hand: no version can be named
            rows.append({"path": path, "measured_on": "", "unread": r.get("unread", "")})
            continue
        row: dict[str, Any] = {
            "path": path,
            "measured_on": r["measured_on"],
            "model_changed": r["model_sha256"] != model,
        }
        reason = still_applies(path, card)
        if row["model_changed"] and reason is not None:
            row["still_applies"] = reason
        rows.append(row)
    return rows


def still_applies(path: str, card: Mapping[str, Any]) -> str | None:
    """The reason the spec gives for evidence of other weights that still applies to this version's, or None."""
    for entry in card.get("still_applies", ()):
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in entry["files"]):
            return str(entry["reason"])
    return None


def presented_as_another_version(path: str, card: Mapping[str, Any]) -> bool:
    """A file the card labels as an earlier version's by the spec's own words ([card.bench.previous]): never this
    version's."""
    previous = card.get("bench", {}).get("previous") or {}
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in previous.get("files", ()))


def previous_label(path: str, card: Mapping[str, Any]) -> str | None:
    """The version label [card.bench.previous] gives a file it names (e.g. "v4"), or None."""
    previous = card.get("bench", {}).get("previous") or {}
    label = previous.get("label")
    return str(label) if label and presented_as_another_version(path, card) else None
