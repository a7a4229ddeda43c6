"""release.json's schema check: the per-entry fast path accepts only what jsonschema accepts."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from release.manifest import Manifest, _schema_errors
from release.spec import load_schema


@pytest.mark.parametrize("bad", [{"size": -1}, {"size": 1.0}, {"size": True}, {"sha256": "A" * 64}, {"md5": "0" * 31},
                                 {"extra": 1}, {"generated": 1}, {"path_in_repo": ""}], ids=str)
def test_a_bad_entry_among_many_gets_jsonschemas_own_error(built: Path, bad: dict[str, object]) -> None:
    data = json.loads((built / "release.json").read_text())
    data["files"][3] = {**data["files"][3], **bad}
    full = sorted(jsonschema.Draft202012Validator(load_schema("manifest.schema.json")).iter_errors(data), key=str)
    assert [str(e) for e in _schema_errors(data)] == [str(e) for e in full]  # 1.0 is an integer to jsonschema too
    assert not full or list(_schema_errors(data)[0].absolute_path)[:2] == ["files", 3]


def test_a_good_manifest_loads(built: Path) -> None:
    assert len(Manifest.load(built / "release.json").files) == len(json.loads((built / "release.json").read_text())["files"])
