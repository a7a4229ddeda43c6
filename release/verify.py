"""`hf-release verify`: prove the staged release matches its manifest, byte for byte."""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.errors import InputError, Problem, VerifyFailed
from release.staged import (
    OtherVersionStaged,
    StagedRelease,
    bookkeeping_changed,
    read_staged_json,
    staged_from_json,
    staged_paths,
)
from release.staged.digest import hash_files, progress_bar, result_interruptibly
from release.staged.manifest import Manifest
from release.staged.names import CARD_NAME, GENERATED_ROLES, MANIFEST_NAME
from release.util.capped import read_capped
from release.util.forked import fork_call
from release.util.wording import exact_size

MAX_PEER_BYTES = 64 * 1024 * 1024  # a digest list of 500,000 files
DIGEST_LINE = re.compile(r"^([0-9a-fA-F]{32}|[0-9a-fA-F]{64})\s+\*?(.+)$")


@dataclass(frozen=True)
class VerifyResult:
    staged: StagedRelease  # as read once: `verify --remote` goes on with it
    files: int
    bytes: int
    peers: list[str] = field(default_factory=list)
    not_compared: dict[str, list[str]] = field(
        default_factory=dict
    )  # peer → files it lists no digest for (--allow-partial)

    @property
    def dist(self) -> Path:
        return self.staged.dist

    @property
    def manifest(self) -> Manifest:
        return self.staged.manifest


def verify_staged(
    dist: Path,
    *,
    progress: bool = False,
    peers: list[Path] | None = None,
    version: str | None = None,
    allow_partial: bool = False,
) -> VerifyResult:
    """Re-read every staged file and compare with the manifest; every difference is reported together.
    `version`: the one the user named; the staged release must be that version's. Each peer list must give a
    digest for every file of the release its node could hash (all but the generated card and chart); one
    that leaves some out fails, naming them, unless `allow_partial`.

    The hashing starts as soon as release.json is decoded: its schema check, the card lint and their imports
    run meanwhile, in a child process where one can be forked (release/util/forked.py)."""
    if not (dist / MANIFEST_NAME).exists():
        raise InputError("no staged release here; run `hf-release build` first", file=str(dist))
    try:
        body, data = read_staged_json(dist, version=version)
    except OtherVersionStaged:
        raise
    except InputError as exc:  # the manifest is there but damaged: that is a failed verification
        raise VerifyFailed(Problem(MANIFEST_NAME, exc.problems[0].message)) from None
    on_disk = staged_paths(dist)
    listed = _listed(data)
    stop = threading.Event()
    with fork_call(_lint_json, dist, data) or nullcontext() as lint, ThreadPoolExecutor(max_workers=1) as background:
        hashing = None
        try:
            if listed is not None:  # the files release.json lists, as its schema check will accept them (or refuse all)
                to_hash = [(path, size, md5) for path, size, md5 in listed if path in on_disk]
                sizes = [size for _, size, _ in to_hash]  # release.json's: they order the work and size the bar
                hashing = background.submit(
                    hash_files,
                    [(f"{dist}/{path}", md5) for path, _, md5 in to_hash],
                    sizes=sizes,
                    on_bytes=progress_bar(sum(sizes), progress, "verifying"),
                    stop=stop,
                )
            verdict = lint.result() if lint is not None else None  # (the schema's refusal, the card's problems)
            if verdict is not None and verdict[0] is not None:
                raise VerifyFailed(Problem(MANIFEST_NAME, verdict[0]))
            try:
                staged = staged_from_json(dist, body, data, schema_checked=verdict is not None)
            except InputError as exc:
                raise VerifyFailed(Problem(MANIFEST_NAME, exc.problems[0].message)) from None
            if verdict is None:  # no child (or it did not answer): the lint runs here, beside the hashing thread
                from release.card.staged import lint_staged

                card_problems = lint_staged(dist, staged.manifest)
            else:
                card_problems = verdict[1]
            assert hashing is not None, "a manifest its schema accepts lists its files"
            digests = result_interruptibly(hashing)
        except BaseException:
            stop.set()  # Ctrl-C here: the hashing threads stop at their next chunk instead of finishing every file
            raise
    manifest = staged.manifest
    problems: list[Problem] = []
    listed_paths = {f.path_in_repo for f in manifest.files}
    for path in sorted(listed_paths - on_disk):
        problems.append(Problem(path, "is in the manifest but missing from the staged release"))
    for path in sorted(on_disk - manifest.owned_paths):
        problems.append(Problem(path, "is in the staged release but not in the manifest (extra file)"))
    present = [f for f in manifest.files if f.path_in_repo in on_disk]
    total = sum(f.size for f in present)
    for f, d in zip(present, digests, strict=True):
        if d.size != f.size:
            problems.append(
                Problem(f.path_in_repo, f"size is {exact_size(d.size)}, the manifest says {exact_size(f.size)}")
            )
        if d.sha256 != f.sha256:
            problems.append(Problem(f.path_in_repo, f"sha256 is {d.sha256}, the manifest says {f.sha256}"))
        if f.md5 is not None and d.md5 != f.md5:
            problems.append(Problem(f.path_in_repo, f"md5 is {d.md5}, the manifest says {f.md5}"))
        if f.git_blob_id is not None and d.sha256 == f.sha256 and d.git_blob_id != f.git_blob_id:
            # the bytes are right, so release.json's blob id was edited: the Hub's copy would be checked against it
            problems.append(
                Problem(f.path_in_repo, f"git blob id is {d.git_blob_id}, the manifest says {f.git_blob_id}")
            )

    problems.extend(bookkeeping_changed(staged))

    if all(p.file == CARD_NAME for p in problems):
        # the evidence is intact: a hand-edited card is told by section and number, not only by digest
        problems.extend(card_problems)
    peer_labels, not_compared = [], {}
    for peer in peers or []:
        compared = compare_peer(manifest, peer)
        problems.extend(compared.problems)
        peer_labels.append(str(peer))
        if compared.missing and not allow_partial:
            more = f" and {len(compared.missing) - 5} more" if len(compared.missing) > 5 else ""
            problems.append(
                Problem(
                    str(peer),
                    f"gives no digest for {len(compared.missing)} file(s) of this release "
                    f"({', '.join(compared.missing[:5])}{more}): they were never compared; hash them on "
                    "that node too (`hf-release hash`), or pass --allow-partial",
                )
            )
        elif compared.missing:
            not_compared[str(peer)] = compared.missing
    if problems:
        raise VerifyFailed(problems)
    return VerifyResult(staged, len(present), total, peer_labels, not_compared)


def _listed(data: Any) -> list[tuple[str, int, bool]] | None:
    """(path_in_repo, size, wants md5) of each file release.json lists, in its order, as Manifest.from_json will
    read them, before the schema check; None when the files are not a list of entries naming a path, which
    the schema refuses (the size only orders the hashing and sizes the progress bar)."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and isinstance(f.get("path_in_repo"), str) for f in files
    ):
        return None
    return [
        (f["path_in_repo"], f["size"] if type(f.get("size")) is int else 0, f.get("md5") is not None) for f in files
    ]


def _lint_json(dist: Path, data: Any) -> tuple[str | None, list[Problem]]:
    """In the forked child: release.json's decoded JSON checked as a manifest (what is wrong with it, or None),
    then the card linted against it."""
    from release.card.staged import lint_staged
    from release.staged.manifest import Manifest

    try:
        manifest = Manifest.from_json(data, MANIFEST_NAME)
    except InputError as exc:
        return exc.problems[0].message, []
    return None, lint_staged(dist, manifest)


def digest_lines(paths: list[Path], *, md5: bool) -> list[str]:
    """What `hf-release hash` prints: sha256sum-format lines, then md5sum-format lines when asked."""
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise InputError(
            [
                Problem(
                    str(p),
                    f"is a folder; name its files, e.g. `hf-release hash {p}/*`" if p.is_dir() else "no such file",
                )
                for p in missing
            ]
        )
    digests = hash_files([(p, md5) for p in paths])
    lines = [sum_line(d.sha256, str(p)) for p, d in zip(paths, digests, strict=True)]
    if md5:
        lines += [sum_line(str(d.md5), str(p)) for p, d in zip(paths, digests, strict=True)]
    return lines


def sum_line(digest: str, name: str) -> str:
    """One sha256sum (md5sum) line, a name holding a backslash, newline or carriage return escaped as coreutils
    does (the line then starts with a backslash): a newline in a name cannot forge a second line."""
    if not any(c in name for c in "\\\n\r"):
        return f"{digest}  {name}"
    escaped = name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return f"\\{digest}  {escaped}"


def _unescaped(name: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), name)


@dataclass(frozen=True)
class PeerComparison:
    problems: list[Problem]
    missing: list[str]  # files of the release (but the generated card and chart) it gives no digest for, largest first


def compare_peer(manifest: Manifest, peer: Path) -> PeerComparison:
    """Compare a node's digest list (sha256sum or md5sum lines) with the manifest, matching files by name;
    and name the files it does not cover."""
    label = str(peer)
    data = read_capped(
        peer, MAX_PEER_BYTES, what="digest list of a release", advice="pass the list `hf-release hash` printed"
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read the peer digest list: {exc}", file=label) from None
    by_name = {Path(f.path_in_repo).name: f for f in manifest.files}
    by_path = {f.path_in_repo: f for f in manifest.files}
    problems = []
    matched = 0
    covered: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        escaped = line.startswith("\\")  # coreutils' escaped name
        m = DIGEST_LINE.match(line.strip()[1:] if escaped else line.strip())
        if not m:
            problems.append(Problem(f"{label}:{number}", "is not a sha256sum or md5sum line"))
            continue
        digest, name = m.group(1).lower(), m.group(2).strip()
        name = _unescaped(name) if escaped else name
        entry = by_path.get(name) or by_name.get(os.path.basename(name))
        if entry is None:
            problems.append(Problem(f"{label}:{number}", f"{name} is not a file of this release"))
            continue
        covered.add(entry.path_in_repo)
        algorithm, ours = ("sha256", entry.sha256) if len(digest) == 64 else ("md5", entry.md5)
        if ours is None:
            problems.append(
                Problem(
                    f"{label}:{number}",
                    f'gives an md5 for {entry.path_in_repo} but the manifest records none; add digests = ["md5"] to '
                    "the spec",
                )
            )
        elif digest != ours:
            problems.append(
                Problem(f"{label}:{number}", f"{entry.path_in_repo} {algorithm} is {digest} on that node, {ours} here")
            )
        else:
            matched += 1
    if matched == 0 and not problems:
        problems.append(Problem(label, "lists no file of this release"))
    left_out = [f for f in manifest.files if f.path_in_repo not in covered and f.role not in GENERATED_ROLES]
    missing = [f.path_in_repo for f in sorted(left_out, key=lambda f: (-f.size, f.path_in_repo))]  # the weights first
    return PeerComparison(problems, missing)
