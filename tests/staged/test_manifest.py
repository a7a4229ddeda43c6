"""release.json's schema check (the per-entry fast path accepts only what jsonschema accepts) and its release digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from release.staged.manifest import (
    DIGEST_BATCH,
    Manifest,
    ManifestFile,
    _schema_errors,
    canonical_json,
    release_digest_in_order,
)
from release.util.schemas import load_schema


@pytest.mark.parametrize(
    "bad",
    [
        {"size": -1},
        {"size": 1.0},
        {"size": True},
        {"sha256": "A" * 64},
        {"md5": "0" * 31},
        {"extra": 1},
        {"generated": 1},
        {"path_in_repo": ""},
    ],
    ids=str,
)
def test_a_bad_entry_among_many_gets_jsonschemas_own_error(built: Path, bad: dict[str, object]) -> None:
    data = json.loads((built / "release.json").read_text())
    data["files"][3] = {**data["files"][3], **bad}
    full = sorted(jsonschema.Draft202012Validator(load_schema("manifest.schema.json")).iter_errors(data), key=str)
    assert [str(e) for e in _schema_errors(data)] == [str(e) for e in full]  # 1.0 is an integer to jsonschema too
    assert not full or list(_schema_errors(data)[0].absolute_path)[:2] == ["files", 3]


def test_a_good_manifest_loads(built: Path) -> None:
    assert len(Manifest.load(built / "release.json").files) == len(
        json.loads((built / "release.json").read_text())["files"]
    )


@pytest.mark.parametrize("count", [0, 1, DIGEST_BATCH - 1, DIGEST_BATCH, DIGEST_BATCH + 1, 2 * DIGEST_BATCH + 3])
def test_the_release_digest_is_the_sha256_of_the_canonical_document(count: int) -> None:
    """Hashed a batch at a time, it is still sha256 of canonical_json({"files", "repo_id", "version"}) whole."""
    files = [
        ManifestFile(
            f"données/{i:05}.bin",
            i,
            f"{i:064x}",
            "extra",
            md5=None if i % 2 else f"{i:032x}",
            generated=i % 3 == 0,
            git_blob_id=f"{i:040x}",
        )
        for i in range(count)
    ]
    document = {"files": [f.as_dict() for f in files], "repo_id": "acme/x", "version": "v1"}
    assert release_digest_in_order("acme/x", "v1", files) == hashlib.sha256(canonical_json(document)).hexdigest()
