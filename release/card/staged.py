"""The card of a staged release: lint it from the staged files alone (`verify`), re-render it (`hf-release card`).

The evidence files are found by their role in the manifest and re-parsed with the same loaders the
checks use, into the same typed store the build steps read.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from release.card.evidence import Evidence, EvidenceMap, FileRow, LedgerReading, ListedFile
from release.card.lint import lint_text
from release.card.render import Rendered, produce, template_for
from release.card.results import eval_results_problems
from release.checks.loaders import role_loaders
from release.checks.proxy import load_proxy
from release.errors import CheckFailed, InputError, Problem
from release.kinds import default_kind, kind_named
from release.kinds.kind import KindFiles
from release.pipeline import Parsed
from release.spec import ReleaseSpec
from release.staged.locks import version_lock
from release.staged.manifest import (
    REGULAR_FILE_MAX_BYTES,
    Manifest,
    ManifestFile,
    atomic_write,
    git_blob_id,
    write_manifest,
)
from release.staged.names import (
    CARD_NAME,
    CARD_ROLE,
    CHART_ROLE,
    EVAL_RESULTS_NAME,
    EVAL_RESULTS_ROLE,
    MANIFEST_NAME,
    SIGNATURE_NAME,
)


def load_staged_evidence(
    dist: Path, manifest: Manifest, *, include_chart: bool = True
) -> tuple[Evidence, list[Problem]]:
    """Re-parse the staged evidence files (by role) with the checks' loaders."""
    parsed = Parsed()
    files: list[ListedFile] = []
    problems: list[Problem] = []
    emap = recorded_map(manifest)
    reading = emap.ledger_reading if emap else LedgerReading()
    loaders = role_loaders(
        baseline=reading.baseline,
        column_types=dict(reading.column_types),
        weights_format=emap.kind.weights_format if emap else "pt",
    )
    for f in sorted(manifest.files, key=lambda f: f.path_in_repo):
        if f.role in loaders:
            try:
                parsed.add(f.path_in_repo, loaders[f.role](dist / f.path_in_repo, f.path_in_repo))
            except CheckFailed as exc:
                problems.extend(exc.problems)
            except OSError as exc:
                problems.append(Problem(f.path_in_repo, f"cannot be read: {exc.strerror or exc}"))
        if f.role == CARD_ROLE or (f.role == CHART_ROLE and not include_chart):
            continue
        files.append(f)  # the manifest's own record of the file is its row
    if emap is not None and emap.kind.files_check is not None:  # the kind's own files, read as build read them
        read, _ = emap.kind.files_check({f.path_in_repo: dist / f.path_in_repo for f in manifest.files}, {})
        if read is not None:
            parsed.add(emap.kind.name, KindFiles(read))
    proxy = emap.proxy if emap else None
    if proxy and proxy.evidence and isinstance(proxy.before, tuple) and isinstance(proxy.after, tuple):
        try:
            parsed.add(proxy.evidence, load_proxy(dist / proxy.evidence, proxy.evidence, proxy.before, proxy.after))
        except CheckFailed as exc:
            problems.extend(exc.problems)
        except OSError as exc:
            problems.append(Problem(proxy.evidence, f"cannot be read: {exc.strerror or exc}"))
    return Evidence.of(parsed, files, manifest.changes), problems


def recorded_map(manifest: Manifest) -> EvidenceMap | None:
    """The evidence map release.json's `card` records (None: no readable record)."""
    return EvidenceMap.from_record(manifest.card, kind_named) if manifest.card is not None else None


def lint_staged(dist: Path, manifest: Manifest) -> list[Problem]:
    """Every card problem of a staged release, from the staged files alone."""
    card = next((f for f in manifest.files if f.role == CARD_ROLE), None) or manifest.file(CARD_NAME)
    if card is None:
        return [Problem(CARD_NAME, "the release has no model card; run `hf-release build` (or `hf-release card`)")]
    try:
        text = (dist / card.path_in_repo).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(card.path_in_repo, f"cannot be read as UTF-8 text: {exc}")]
    evidence, problems = load_staged_evidence(dist, manifest)
    problems += _eval_results_problems(dist, manifest, evidence)
    return problems + lint_text(
        text,
        release_files={f.path_in_repo for f in manifest.files},
        release_digest=manifest.release_digest,
        version=manifest.version,
        evidence=evidence,
        emap=recorded_map(manifest),
        label=card.path_in_repo,
        repo_id=manifest.repo_id,
    )


def _eval_results_problems(dist: Path, manifest: Manifest, evidence: Evidence) -> list[Problem]:
    """The staged .eval_results/ file re-derived from the staged evidence and the mapping release.json records."""
    staged = next((f for f in manifest.files if f.role == EVAL_RESULTS_ROLE), None)
    label = staged.path_in_repo if staged else EVAL_RESULTS_NAME
    try:
        text = (dist / staged.path_in_repo).read_text("utf-8") if staged else None
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(label, f"cannot be read as UTF-8 text: {exc}")]
    return eval_results_problems(text, recorded_map(manifest), evidence, manifest.repo_id, manifest.version, label)


def card_diff(
    old_text: str, new_text: str, *, old_label: str = "current", new_label: str = "rendered", context: int = 3
) -> str:
    """A unified diff from `old_text` to `new_text` (empty when they are equal); for `card --diff FILE`."""
    return "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=old_label,
            tofile=new_label,
            n=context,
        )
    )


@dataclass(frozen=True)
class CardResult:
    dist: Path
    text: str  # the card as rendered
    previous: str | None  # the staged card it replaces (None when there was none)
    charts: tuple[str, ...]  # path_in_repo of the card's pictures
    written: bool


def render_card(spec: ReleaseSpec, dist: Path, *, template: Path | None = None, write: bool = True) -> CardResult:
    """Re-render README.md (and the chart) of the staged release `dist` from the spec's [card].

    The artifacts are not touched, so the release digest does not change: the evidence is re-read
    from the staged files, the card is linted like `build` does, and with `write` the card, the chart,
    release.json (its generated entries and spec_sha256) and SHA256SUMS are rewritten in place.
    Raises CheckFailed when the card cannot be rendered or fails lint, InputError when `dist` is not
    a staged release of this spec or is signed (rewriting release.json would invalidate model.sig).
    """
    manifest = Manifest.load(dist / MANIFEST_NAME)
    if (manifest.repo_id, manifest.version) != (spec.repo_id, spec.version):
        raise InputError(
            f"is a staged release of {manifest.repo_id}@{manifest.version}, the spec describes "
            f"{spec.repo_id}@{spec.version}",
            file=str(dist),
        )
    if write and (dist / SIGNATURE_NAME).exists():
        raise InputError(
            f"the staged release is signed ({SIGNATURE_NAME}); rebuild and re-sign instead of re-rendering its card",
            file=str(dist),
        )
    evidence, problems = load_staged_evidence(dist, manifest, include_chart=False)
    if problems:
        raise CheckFailed(problems)
    kind = kind_named(spec.kind or (manifest.card or {}).get("kind")) or default_kind()
    rendered, problems = produce(spec, kind, evidence, manifest.release_digest, template_for(spec, template, kind))
    if rendered is None or problems:
        raise CheckFailed(problems)
    files = {f.path_in_repo for f in manifest.files if f.role not in (CARD_ROLE, CHART_ROLE)} | {
        CARD_NAME,
        *rendered.charts,
    }
    problems = lint_text(
        rendered.text,
        release_files=files,
        release_digest=manifest.release_digest,
        version=manifest.version,
        evidence=_with_charts(evidence, rendered),
        emap=rendered.facts.map,
        repo_id=manifest.repo_id,
        facts=rendered.facts,
    )
    if problems:
        raise CheckFailed(problems)
    card_path = dist / CARD_NAME
    previous = card_path.read_text("utf-8") if card_path.is_file() else None
    if write:
        with version_lock(dist, f"hf-release card {dist.name}"):  # one writer: no build or push of it meanwhile
            _rewrite(dist, manifest, spec, rendered)
    return CardResult(dist, rendered.text, previous, tuple(rendered.charts), write)


def _with_charts(evidence: Evidence, rendered: Rendered) -> Evidence:
    rows = [
        FileRow(path, len(png), hashlib.sha256(png).hexdigest(), CHART_ROLE) for path, png in rendered.charts.items()
    ]
    return replace(evidence, files=[*evidence.files, *rows]) if rows else evidence


def _rewrite(dist: Path, manifest: Manifest, spec: ReleaseSpec, rendered: Rendered) -> None:
    """Write the re-rendered card (and charts) and their manifest entries; nothing at all when they are unchanged."""
    body = rendered.text.encode("utf-8")
    new = [f for f in manifest.files if f.role not in (CARD_ROLE, CHART_ROLE)]
    new.append(
        ManifestFile(
            CARD_NAME,
            len(body),
            hashlib.sha256(body).hexdigest(),
            CARD_ROLE,
            generated=True,
            git_blob_id=git_blob_id(body),
        )
    )
    for path, png in rendered.charts.items():
        new.append(
            ManifestFile(
                path,
                len(png),
                hashlib.sha256(png).hexdigest(),
                CHART_ROLE,
                generated=True,
                git_blob_id=git_blob_id(png) if len(png) < REGULAR_FILE_MAX_BYTES else None,
            )
        )
    # Everything else the build recorded (changes since the previous version, metrics, tool) is kept.
    updated = replace(
        manifest,
        spec_sha256=spec.sha256,
        files=tuple(sorted(new, key=lambda f: f.path_in_repo)),
        card=rendered.facts.map.as_dict(),
    )
    if updated == manifest:
        return  # a published release stays byte for byte what was pushed
    if updated.release_digest != manifest.release_digest:  # only generated files may change here
        raise CheckFailed(Problem(MANIFEST_NAME, "re-rendering the card would change the artifacts; build again"))
    for old in manifest.files:
        if old.role == CHART_ROLE and old.path_in_repo not in rendered.charts:
            (dist / old.path_in_repo).unlink(missing_ok=True)
    for path, png in rendered.charts.items():
        atomic_write(dist / path, png)
    atomic_write(dist / CARD_NAME, body)
    write_manifest(dist, updated)
