"""The local Hub's Xet store: xorbs as uploaded, their chunk lists, verified file records, and who holds what.

Layout under the Hub's root (every file written whole, fs.py):

    xet/xorbs/ab/<hash>                  a xorb's bytes as uploaded (footer included)
    xet/xorbs/ab/<hash>.json             its chunks as the CAS recomputed them: [hash, size, start, end]
    xet/files/ab/<hash>.json             a verified file: size, sha256 and terms [xorb, first, end, size]
    xet/accounts/<key>/xorbs/ab/<hash>   (empty) this account uploaded that xorb
    repos/<type>s/<ns>/<name>/xet/xorbs/ab/<hash>   (empty) the repo holds that xorb
    repos/<type>s/<ns>/<name>/xet/files/ab/<hash>   (empty) the repo holds that file
    repos/<type>s/<ns>/<name>/xet/sha256/ab/<oid>   the hash of the repo's Xet file with that sha256

Like the LFS store, holdings are per repository, plus per account for xorbs (a push's xorbs may serve the same
account's next repo): a shard may cite, and the dedup query answers with, only xorbs its repo or its account
holds, so no one reads another account's bytes by naming their hash. A registered file is also rebuilt into
the LFS store (objects/sha256/): its sha256 is checked there, and the plain-bytes bridge serves that copy.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from release.localhub.errors import HubError
from release.localhub.records import RepoId
from release.localhub.storage import Storage
from release.localhub.xet.hashes import file_hash, from_hex, to_hex, verification_hash
from release.localhub.xet.shard import FileInfo
from release.localhub.xet.xorb import ChunkRecord, parse_xorb, unpack_range

MAX_FILE_TERMS = 1_000_000


def _fan(folder: Path, name: str) -> Path:
    return folder / name[:2] / name


@functools.lru_cache(maxsize=512)
def _load_chunks(path: Path) -> tuple[ChunkRecord, ...]:
    # Chunk lists are immutable once renamed into place, so caching by path is safe.
    return tuple(ChunkRecord(from_hex(h), s, a, b) for h, s, a, b in json.loads(path.read_bytes()))


class XetStore:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.root = storage.root / "xet"

    # ---- paths ------------------------------------------------------------------------------------

    def _xorb_path(self, xorb: str) -> Path:
        return _fan(self.root / "xorbs", xorb)

    def _repo_dir(self, repo: RepoId) -> Path:
        return self.storage.root / "repos" / f"{repo.type}s" / repo.namespace / repo.name / "xet"

    def _account_dir(self, account: str) -> Path:
        return self.root / "accounts" / hashlib.sha256(account.encode()).hexdigest()[:24]

    def _mark(self, path: Path, content: bytes = b"") -> None:
        if not path.exists():
            self.storage.fs.atomic_write(path, content)

    # ---- xorbs ------------------------------------------------------------------------------------

    def has_xorb(self, xorb: str) -> bool:
        return self._xorb_path(xorb).with_suffix(".json").exists()

    def chunks(self, xorb: str) -> tuple[ChunkRecord, ...]:
        return _load_chunks(self._xorb_path(xorb).with_suffix(".json"))

    def xorb_path(self, xorb: str) -> Path:
        return self._xorb_path(xorb)

    def holds_xorb(self, repo: RepoId, account: str, xorb: str) -> bool:
        return (
            _fan(self._repo_dir(repo) / "xorbs", xorb).exists()
            or _fan(self._account_dir(account) / "xorbs", xorb).exists()
        )

    def store_xorb(self, repo: RepoId, account: str, xorb: str, body: bytes) -> bool:
        """Check a uploaded xorb (XorbError if it is not `xorb`) and keep it; False if it was stored already.
        The repo and the account hold it either way: they sent its bytes."""
        chunks = parse_xorb(body, xorb)
        inserted = not self.has_xorb(xorb)
        if inserted:
            self.storage.fs.atomic_write(self._xorb_path(xorb), body)
            listing = [[to_hex(c.hash), c.size, c.start, c.end] for c in chunks]
            self.storage.fs.atomic_write(self._xorb_path(xorb).with_suffix(".json"), json.dumps(listing).encode())
        self._mark(_fan(self._repo_dir(repo) / "xorbs", xorb))
        self._mark(_fan(self._account_dir(account) / "xorbs", xorb))
        return inserted

    def held_xorbs(self, repo: RepoId, account: str) -> list[str]:
        found: set[str] = set()
        for folder in (self._repo_dir(repo) / "xorbs", self._account_dir(account) / "xorbs"):
            if folder.is_dir():
                found.update(p.name for p in folder.glob("??/*"))
        return sorted(found)

    def xorbs_with_chunk(self, repo: RepoId, account: str, chunk: bytes, limit: int) -> list[str]:
        """The xorbs this repo or account holds that contain `chunk` (the global dedup query, scoped)."""
        return [x for x in self.held_xorbs(repo, account) if any(c.hash == chunk for c in self.chunks(x))][:limit]

    def read_chunks(self, xorb: str, start: int, end: int) -> list[bytes]:
        chunks = self.chunks(xorb)[start:end]
        with self._xorb_path(xorb).open("rb") as f:
            f.seek(chunks[0].start)
            data = f.read(chunks[-1].end - chunks[0].start)
        return unpack_range(data, len(chunks))

    # ---- files ------------------------------------------------------------------------------------

    def file_record(self, repo: RepoId, file: str) -> dict[str, Any] | None:
        """The verified record of a file this repo holds, None otherwise."""
        if not _fan(self._repo_dir(repo) / "files", file).exists():
            return None
        return dict(json.loads(_fan(self.root / "files", file).with_suffix(".json").read_bytes()))

    def file_for_sha256(self, repo: RepoId, sha256: str) -> str | None:
        """The hash of this repo's Xet file whose bytes have this sha256, if any (a commit's `lfsFile` oid)."""
        path = _fan(self._repo_dir(repo) / "sha256", sha256)
        return path.read_text() if path.exists() else None

    def register_file(self, repo: RepoId, account: str, info: FileInfo) -> str:
        """Check one file of a uploaded shard against the xorbs it cites, rebuild its bytes, check their sha256,
        and record that the repo holds it. HubError 400 naming what does not match."""
        name = to_hex(info.hash)
        if info.sha256 is None:
            raise HubError(400, f"file {name} has no sha256 (FileMetadataExt): git repos need one")
        if len(info.verification) != len(info.terms):
            raise HubError(400, f"file {name}: every term needs a verification entry")
        if len(info.terms) > MAX_FILE_TERMS:
            raise HubError(400, f"file {name} has more than {MAX_FILE_TERMS} terms")
        pairs: list[tuple[bytes, int]] = []
        for term, check in zip(info.terms, info.verification, strict=True):
            xorb = to_hex(term.xorb)
            if not self.has_xorb(xorb) or not self.holds_xorb(repo, account, xorb):
                raise HubError(400, f"file {name} cites xorb {xorb}, which was never uploaded to {repo.id}")
            chunks = self.chunks(xorb)
            if term.end > len(chunks):
                raise HubError(400, f"file {name} cites chunks past the end of xorb {xorb}")
            span = chunks[term.start : term.end]
            if sum(c.size for c in span) != term.size:
                raise HubError(400, f"file {name}: a term of xorb {xorb} does not unpack to {term.size} bytes")
            if verification_hash(c.hash for c in span) != check:
                raise HubError(400, f"file {name}: a verification hash does not match xorb {xorb}'s chunks")
            pairs.extend((c.hash, c.size) for c in span)
        if file_hash(pairs) != info.hash:
            raise HubError(400, f"the chunks cited for file {name} hash to {to_hex(file_hash(pairs))}")
        sha256 = to_hex(info.sha256)  # stored as a hash: 8-byte words little-endian, like every hash here
        size = sum(s for _, s in pairs)
        self._rebuild(info, name, sha256, size)
        terms = [[to_hex(t.xorb), t.start, t.end, t.size] for t in info.terms]
        record = {"size": size, "sha256": sha256, "terms": terms}
        record_path = _fan(self.root / "files", name).with_suffix(".json")
        if not record_path.exists():
            self.storage.fs.atomic_write(record_path, json.dumps(record).encode())
        repo_dir = self._repo_dir(repo)
        for term in info.terms:
            self._mark(_fan(repo_dir / "xorbs", to_hex(term.xorb)))
        self._mark(_fan(repo_dir / "files", name))
        self.storage.fs.atomic_write(_fan(repo_dir / "sha256", sha256), name.encode())
        self.storage.hold(repo, sha256)
        return name

    def _rebuild(self, info: FileInfo, name: str, sha256: str, size: int) -> None:
        """Write the file's bytes from its xorbs into the LFS store, checking the sha256 the shard claims."""
        target = self.storage.lfs_path(sha256)
        record = _fan(self.root / "files", name).with_suffix(".json")
        if target.exists() and record.exists() and json.loads(record.read_bytes())["sha256"] == sha256:
            return  # this file hash was rebuilt and checked against this sha256 before
        writer = self.storage.fs.new_writer()
        try:
            for term in info.terms:
                for raw in self.read_chunks(to_hex(term.xorb), term.start, term.end):
                    writer.write(raw)
            if writer.hexdigest() != sha256:
                raise HubError(400, f"file {name} rebuilds to sha256 {writer.hexdigest()}, not the {sha256} claimed")
        except BaseException:
            writer.discard()
            raise
        self.storage.fs.keep(writer, target)
