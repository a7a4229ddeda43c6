"""Which version measured each evidence file: carried forward while unchanged, stale when the kind's model changed."""

from __future__ import annotations

from release.history.compare import Snapshot
from release.history.provenance import measured_on, model_digest, reused
from release.kinds import kind_named
from tests.history.helpers import snapshot


def test_carried_forward_while_unchanged_and_stale_once_the_kinds_model_changes() -> None:
    roles = kind_named("peft-adapter").model_roles  # the adapter's files are its model; a bench file is evidence
    v5 = snapshot(
        "v5",
        {
            "adapter_model.safetensors": ("adapter-weights", b"A"),
            "bench.json": ("bench", b"B"),
            "notes.md": ("extra", b"n"),
        },
    )
    v6 = snapshot(
        "v6",
        {
            "adapter_model.safetensors": ("adapter-weights", b"A"),
            "bench.json": ("bench", b"B"),
            "notes.md": ("extra", b"changed"),
        },
    )
    v5_record = measured_on(v5, None, roles, {})
    assert v5_record == {"bench.json": {"measured_on": "v5", "model_sha256": model_digest(v5.files, roles)}}
    v6_record = measured_on(v6, Snapshot("v5", v5.files, v5.read, None, v5_record), roles, {})
    assert v6_record == v5_record  # the same file, the same weights: v5's measurement, said as such
    assert reused(v6_record, "v6", model_digest(v6.files, roles), {}) == [
        {"path": "bench.json", "measured_on": "v5", "model_changed": False}
    ]
    v7 = snapshot("v7", {"adapter_model.safetensors": ("adapter-weights", b"A2"), "bench.json": ("bench", b"B")})
    v7_record = measured_on(v7, Snapshot("v6", v6.files, v6.read, None, v6_record), roles, {})
    assert v7_record["bench.json"]["measured_on"] == "v5"  # carried through v6, never relabelled
    card = {"still_applies": [{"files": ["bench*.json"], "reason": "the served path is unchanged"}]}
    assert reused(v7_record, "v7", model_digest(v7.files, roles), {}) == [
        {"path": "bench.json", "measured_on": "v5", "model_changed": True}
    ]
    assert (
        reused(v7_record, "v7", model_digest(v7.files, roles), card)[0]["still_applies"]
        == "the served path is unchanged"
    )


def test_a_previous_release_json_without_a_record_counts_its_files_as_measured_on_it() -> None:
    roles = kind_named("gguf").model_roles
    v1 = snapshot("v1", {"m.gguf": ("gguf", b"G"), "results.json": ("eval", b"E")})  # built by an older hf-release
    v2 = snapshot("v2", {"m.gguf": ("gguf", b"G"), "results.json": ("eval", b"E"), "README-notes.md": ("extra", b"x")})
    assert measured_on(v2, v1, roles, {})["results.json"] == {
        "measured_on": "v1",
        "model_sha256": model_digest(v1.files, roles),
    }


def test_a_file_the_spec_labels_as_an_earlier_versions_is_never_recorded_as_measured_on_this_one() -> None:
    """The example's v4 bench ([card.bench.previous] label "v4") ships in v5's first release: v4 measured it, on a
    model this release does not hold — its record says v4 and an unknown model digest, and carries forward so."""
    roles = kind_named("transformers").model_roles
    card = {
        "bench": {
            "previous": {"label": "v4", "files": ["bench-v4*.json"]},
            "current": {"label": "v5", "files": ["bench-v5.json"]},
        }
    }
    v5 = snapshot(
        "v5",
        {
            "model.safetensors": ("weights", b"W"),
            "bench-v4-grid.json": ("bench", b"4"),
            "bench-v5.json": ("bench", b"5"),
        },
    )
    record = measured_on(v5, None, roles, card)
    assert record["bench-v4-grid.json"] == {"measured_on": "v4", "model_sha256": ""}
    assert record["bench-v5.json"] == {"measured_on": "v5", "model_sha256": model_digest(v5.files, roles)}
    v6 = snapshot("v6", {"model.safetensors": ("weights", b"W2"), "bench-v4-grid.json": ("bench", b"4")})
    assert (
        measured_on(v6, Snapshot("v5", v5.files, v5.read, None, record), roles, {})["bench-v4-grid.json"]["measured_on"]
        == "v4"
    )
