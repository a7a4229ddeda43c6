"""The manifest (release.json) and SHA256SUMS — what the release is, byte for byte.

This module imports no step: build, card, verify and push all read this type (the file names are in names.py).
Deterministic: no timestamps, sorted entries, canonical JSON; two builds of the same inputs are identical.
The release digest covers the artifacts (not the generated card), so the card can quote it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from release import __version__
from release.errors import InputError, first_line
from release.spec.paths import check_path_in_repo
from release.staged.names import MANIFEST_NAME, SUMS_NAME, bookkeeping
from release.util.jsonio import MAX_BYTES, StreamedList, json_blocks, parse, read_bounded

FORMAT = "hf-release/manifest/1"
# The Hub sends every file of 10 MiB or more to LFS whatever its name or content; a smaller one may be stored
# as a plain git blob, which its listing identifies by git blob id (sha1), not sha256. The manifest records
# that id for every such file, so the Hub's copy is checked against release.json, never against the disk.
REGULAR_FILE_MAX_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)  # one per file: no __dict__
class ManifestFile:
    path_in_repo: str
    size: int
    sha256: str
    role: str
    md5: str | None = None
    generated: bool = False
    git_blob_id: str | None = None  # files under REGULAR_FILE_MAX_BYTES

    def as_dict(self) -> dict[str, Any]:
        # by hand, not dataclasses.asdict (a deep copy: ~30 µs a file, called for every file of every digest)
        out: dict[str, Any] = {
            "path_in_repo": self.path_in_repo,
            "size": self.size,
            "sha256": self.sha256,
            "role": self.role,
        }
        if self.md5 is not None:
            out["md5"] = self.md5
        if self.generated:
            out["generated"] = True
        if self.git_blob_id is not None:
            out["git_blob_id"] = self.git_blob_id
        return out


@dataclass(frozen=True)
class Manifest:
    repo_id: str
    version: str
    spec_sha256: str
    files: tuple[ManifestFile, ...]
    source_commit: str | None = None
    tool_version: str = __version__
    # what the card was derived from (which staged file plays which part, as the spec chose): `verify`
    # re-derives the card's numbers from the staged files and this record, never from the card itself
    card: dict[str, Any] | None = None
    changes: dict[str, Any] | None = None  # since the previous version (release/history/compare.py)
    metrics: dict[str, float] | None = None  # this release's headline numbers, for the next comparison
    evidence: dict[str, dict[str, str]] | None = (
        None  # per evidence file, the version that measured it (release/history/provenance.py)
    )
    proof: dict[str, Any] | None = None  # the card's code run on the staged release by its library (builder/proof.py)

    @property
    def artifacts(self) -> tuple[ManifestFile, ...]:
        return tuple(f for f in self.files if not f.generated)

    @cached_property
    def release_digest(self) -> str:
        """sha256 over the canonical artifact list: what the card quotes as this release's identity.

        Computed once per manifest (a build asks ~8 times; with thousands of files each costs milliseconds):
        the manifest is frozen, so the digest cannot go stale."""
        return release_digest(self.repo_id, self.version, self.artifacts)

    @property
    def owned_paths(self) -> frozenset[str]:
        """Every path hf-release writes for this release: the files listed, then the bookkeeping files."""
        return frozenset(f.path_in_repo for f in self.files) | frozenset(bookkeeping())

    def file(self, path_in_repo: str) -> ManifestFile | None:
        return next((f for f in self.files if f.path_in_repo == path_in_repo), None)

    def as_dict(self, *, streamed: bool = False) -> dict[str, Any]:
        """release.json's document. `streamed`: its files list makes each entry's dict only as json's indenting
        encoder reaches it (StreamedList), for iterencode with indent; else a plain list of them all."""
        files = sorted(self.files, key=lambda f: f.path_in_repo)
        out: dict[str, Any] = {
            "format": FORMAT,
            "repo_id": self.repo_id,
            "version": self.version,
            "release_digest": self.release_digest,
            "tool": {"name": "hf-release", "version": self.tool_version},
            "spec_sha256": self.spec_sha256,
            "files": StreamedList(len(files), lambda: (f.as_dict() for f in files))
            if streamed
            else [f.as_dict() for f in files],
        }
        if self.source_commit:
            out["source_commit"] = self.source_commit
        if self.card is not None:
            out["card"] = self.card
        if self.changes is not None:
            out["changes"] = self.changes
        if self.metrics is not None:
            out["metrics"] = self.metrics
        if self.evidence:
            out["evidence"] = self.evidence
        if self.proof is not None:
            out["proof"] = self.proof
        return out

    def to_bytes(self) -> bytes:
        return (_PRETTY.encode(self.as_dict()) + "\n").encode()

    def sha256sums(self, manifest_sha256: str) -> bytes:
        """`sha256sum -c` format, sorted by path, covering every file and the manifest itself."""
        return b"".join(self.sha256sums_blocks(manifest_sha256))

    def sha256sums_blocks(self, manifest_sha256: str) -> Iterator[bytes]:
        """sha256sums()'s bytes in blocks of a few thousand lines (never one string of them all)."""
        rows = sorted([*self.files, ManifestFile(MANIFEST_NAME, 0, manifest_sha256, "")], key=lambda f: f.path_in_repo)
        for start in range(0, len(rows), BLOCK_LINES):
            yield "".join(f"{f.sha256}  {f.path_in_repo}\n" for f in rows[start : start + BLOCK_LINES]).encode()

    @classmethod
    def load(cls, path: Path, *, max_bytes: int = MAX_BYTES) -> Manifest:
        """Read and validate release.json (schema, then the release digest); InputError if it is not one."""
        return cls.from_json(read_manifest(path, max_bytes)[1], str(path))

    @classmethod
    def from_json(cls, data: Any, label: str, *, schema_checked: bool = False) -> Manifest:
        """Validate release.json's decoded JSON (schema, then the release digest); InputError if it is not one.
        `schema_checked`: this very data already passed the schema check (in verify's forked child), so only
        the checks after it run here."""
        errors = [] if schema_checked else _schema_errors(data)
        if errors:
            from release.spec import key_path

            where = key_path(list(errors[0].absolute_path)) or "(top level)"
            raise InputError(
                f"is not a valid hf-release manifest: {where}: {errors[0].message}; rebuild the release", file=label
            )
        manifest = cls(
            repo_id=data["repo_id"],
            version=data["version"],
            spec_sha256=data["spec_sha256"],
            files=tuple(
                ManifestFile(
                    f["path_in_repo"],
                    f["size"],
                    f["sha256"],
                    f["role"],
                    f.get("md5"),
                    f.get("generated", False),
                    f.get("git_blob_id"),
                )
                for f in data["files"]
            ),
            source_commit=data.get("source_commit"),
            tool_version=data["tool"]["version"],
            card=data.get("card"),
            changes=data.get("changes"),
            metrics=data.get("metrics"),
            evidence=data.get("evidence"),
            proof=data.get("proof"),
        )
        bad = next(((f.path_in_repo, why) for f in manifest.files if (why := check_path_in_repo(f.path_in_repo))), None)
        if bad:
            raise InputError(
                f"lists the path {bad[0]!r}, which {bad[1].split(';')[0]}; rebuild the release", file=label
            )
        try:
            digest = manifest.release_digest
        except UnicodeError:
            raise InputError("holds a path that is not valid Unicode; rebuild the release", file=label) from None
        if digest != data["release_digest"]:
            raise InputError("release_digest does not match the files listed; the manifest was edited", file=label)
        return manifest


def _schema_errors(data: Any) -> list[Any]:
    """The schema's errors, sorted. The file entries (thousands of them: jsonschema spends ~0.5 ms on each) are
    first checked by `_entry_ok`, which accepts only entries the schema's own items rule accepts; when it accepts
    them all, the schema validates the document with its first entry only. Any doubt, and jsonschema validates
    the whole document: every error is jsonschema's, word for word."""
    import jsonschema  # here, not at the top: verify starts hashing before it checks the schema

    from release.util.schemas import load_schema

    schema = load_schema("manifest.schema.json")
    validator = jsonschema.Draft202012Validator(schema)
    files = data.get("files") if isinstance(data, dict) else None
    rule = schema["properties"]["files"]["items"]
    simple = (
        set(rule) <= {"type", "additionalProperties", "required", "properties"}
        and rule.get("additionalProperties") is False
    )
    if simple and isinstance(files, list) and len(files) > 1:
        checks = {key: _value_check(sub) for key, sub in rule["properties"].items()}
        if all(_entry_ok(f, rule["required"], checks) for f in files):
            data = {**data, "files": files[:1]}
    return sorted(validator.iter_errors(data), key=str)


def _value_check(rule: dict[str, Any]) -> Any:
    """A conservative check of one property against its (string | integer | boolean) rule: True only when
    the schema would accept the value."""
    kind = rule.get("type")
    pattern = re.compile(rule["pattern"]) if "pattern" in rule else None
    low, high, shortest = rule.get("minimum"), rule.get("maximum"), rule.get("minLength", 0)
    if set(rule) - {"type", "pattern", "minimum", "maximum", "minLength", "description"}:
        return lambda value: False  # a keyword this check does not know: leave the entry to jsonschema
    if kind == "string":
        return lambda v: type(v) is str and len(v) >= shortest and (pattern is None or pattern.search(v) is not None)
    if kind == "integer":
        return lambda v: type(v) is int and (low is None or v >= low) and (high is None or v <= high)
    if kind == "boolean":
        return lambda v: type(v) is bool
    return lambda value: False


def _entry_ok(entry: Any, required: list[str], checks: dict[str, Any]) -> bool:
    return (
        type(entry) is dict
        and all(k in entry for k in required)
        and all(k in checks and checks[k](v) for k, v in entry.items())
    )


def read_manifest(path: Path, max_bytes: int = MAX_BYTES) -> tuple[bytes, Any]:
    """release.json's bytes and their JSON, read and decoded once; InputError when missing or not JSON."""
    label = str(path)
    try:
        body = read_bounded(path, max_bytes)
        return body, parse(body)
    except FileNotFoundError:
        raise InputError("no staged release here; run `hf-release build` first", file=label) from None
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        raise InputError(
            f"is not a readable JSON manifest ({first_line(exc)}); rebuild the release", file=label
        ) from None


def git_blob_id(data: bytes) -> str:
    """The git object id of these bytes as a plain blob: what the Hub lists for a file it keeps out of LFS."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


_PRETTY = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False)  # release.json's own layout
BLOCK_LINES = 4096  # lines joined into one write


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # one, not one per call


def canonical_json(value: Any) -> bytes:
    return _CANONICAL.encode(value).encode()


def release_digest(repo_id: str, version: str, artifacts: Iterable[ManifestFile]) -> str:
    """sha256 over the canonical artifact list (generated files excluded by the caller)."""
    return release_digest_in_order(repo_id, version, sorted(artifacts, key=lambda f: f.path_in_repo))


def release_digest_in_order(repo_id: str, version: str, files: Iterable[ManifestFile]) -> str:
    """release_digest of artifacts already in path order: `files` may make each entry as it is read (build
    digests 50,000 files without holding their entries)."""
    # canonical_json({"files": [...], "repo_id": …, "version": …}) (keys in sorted order), hashed DIGEST_BATCH
    # entries at a time: the same bytes, never one string of them all. A batch is encoded as one list (one call
    # into json's C encoder, not one per entry), its brackets left out: "[a,b]" → "a,b".
    digest = hashlib.sha256(b'{"files":[')
    for i, batch in enumerate(_batched(files)):
        digest.update((b"," if i else b"") + canonical_json([f.as_dict() for f in batch])[1:-1])
    digest.update(b'],"repo_id":' + canonical_json(repo_id) + b',"version":' + canonical_json(version) + b"}")
    return digest.hexdigest()


DIGEST_BATCH = 1024


def _batched(files: Iterable[ManifestFile]) -> Iterator[list[ManifestFile]]:  # itertools.batched, from Python 3.12
    it = iter(files)
    while batch := list(itertools.islice(it, DIGEST_BATCH)):
        yield batch


def write_manifest(folder: Path, manifest: Manifest) -> None:
    """Write release.json and SHA256SUMS into `folder`, each replaced atomically: the one manifest writer."""
    digest = hashlib.sha256()

    def chunks() -> Iterable[bytes]:  # to_bytes()'s bytes, written and hashed as encoded: never one big string
        for text in itertools.chain(json_blocks(_PRETTY, manifest.as_dict(streamed=True)), ["\n"]):
            data = text.encode()
            digest.update(data)
            yield data

    atomic_write(folder / MANIFEST_NAME, chunks())
    atomic_write(folder / SUMS_NAME, manifest.sha256sums_blocks(digest.hexdigest()))


def atomic_write(path: Path, data: bytes | Iterable[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # what a plain write would give (mkstemp makes 0600)
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                f.writelines(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
