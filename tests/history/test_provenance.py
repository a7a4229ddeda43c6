"""Which version measured each evidence file: carried forward while unchanged, stale when the kind's model changed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed
from release.history.compare import Snapshot, evidence_words
from release.history.provenance import measured_on, model_digest, reused
from release.kinds import kind_named
from release.spec import load_spec
from release.staged.manifest import Manifest
from release.verify import verify_staged
from tests.card.test_model_index import FULL, RESULTS
from tests.history.helpers import snapshot
from tests.kinds.helpers import make_release, tensors, write_sharded


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


def test_provenance_follows_the_digest_to_a_new_path() -> None:
    """v1's eval file moved to a new path_in_repo is still v1's measurement (was: "measured on v2" over v2's new
    weights), and stale as v2's evidence, as it is at the old path."""
    roles = kind_named("transformers").model_roles
    v1 = snapshot("v1", {"model.safetensors": ("weights", b"W1"), "results.json": ("eval", b"E")})
    v1_record = measured_on(v1, None, roles, {})
    v2 = snapshot("v2", {"model.safetensors": ("weights", b"W2"), "eval/results.json": ("eval", b"E")})
    v2_record = measured_on(v2, Snapshot("v1", v1.files, v1.read, None, v1_record), roles, {})
    assert v2_record == {"eval/results.json": v1_record["results.json"]}
    assert reused(v2_record, "v2", model_digest(v2.files, roles), {}) == [
        {"path": "eval/results.json", "measured_on": "v1", "model_changed": True}
    ]


def test_an_earlier_version_not_at_hand_leaves_provenance_untold() -> None:
    """v1 exists (its spec) but neither its release.json nor its files are here: no evidence file is said to be
    measured on any version, and the words say why."""
    roles = kind_named("transformers").model_roles
    v2 = snapshot("v2", {"model.safetensors": ("weights", b"W2"), "results.json": ("eval", b"E")})
    record = measured_on(v2, None, roles, {}, unread="v1")
    assert record == {"results.json": {"measured_on": "", "model_sha256": "", "unread": "v1"}}
    (row,) = reused(record, "v2", model_digest(v2.files, roles), {})
    assert row == {"path": "results.json", "measured_on": "", "unread": "v1"}
    assert evidence_words(row).startswith("cannot tell which version measured it: v1's release")
    v3 = snapshot("v3", {"model.safetensors": ("weights", b"W2"), "results.json": ("eval", b"E")})
    assert measured_on(v3, Snapshot("v2", v2.files, v2.read, None, record), roles, {}) == record  # never resolved


def _v1_and_v2(root: Path, v2_edit: Callable[[str], str], new_weights: bool) -> tuple[Path, Path]:
    """The transformers test release as v1 with lm-evaluation-harness's own results file, and v2 copied from it
    (its spec edited by `v2_edit`, its weights rewritten when `new_weights`); returns both specs."""
    v1 = make_release(root / "artifacts" / "v1")
    shutil.copyfile(FULL, v1.parent / RESULTS)
    shutil.copytree(v1.parent, root / "artifacts" / "v2")
    v2 = root / "artifacts" / "v2" / "release.toml"
    v2.write_text(v2_edit(v2.read_text().replace('version = "v1"', 'version = "v2"').replace("(v1)", "(v2)")))
    if new_weights:
        write_sharded(v2.parent, {name: t * 2 for name, t in tensors().items()})
    return v1, v2


def test_a_moved_lm_eval_file_is_refused_as_stale_over_new_weights(tmp_path: Path) -> None:
    moved = f'source = "{RESULTS}"\npath_in_repo = "eval/{RESULTS}"\n'
    v1, v2 = _v1_and_v2(tmp_path, lambda text: text.replace(f'source = "{RESULTS}"\n', moved), new_weights=True)
    build(load_spec(v1), tmp_path / "dist")
    with pytest.raises(CheckFailed) as refused:
        build(load_spec(v2), tmp_path / "dist")
    (problem,) = refused.value.problems
    assert problem.file == f"eval/{RESULTS}" and "measured on v1" in problem.message and "stale" in problem.message
    reason = '\n[[card.still_applies]]\nfiles = ["eval/*"]\nreason = "only the scale of the weights changed"\n'
    v2.write_text(v2.read_text() + reason)
    staged = build(load_spec(v2), tmp_path / "dist").dist
    assert Manifest.load(staged / "release.json").evidence == {
        f"eval/{RESULTS}": Manifest.load(tmp_path / "dist" / "v1" / "release.json").evidence[RESULTS]  # type: ignore[index]
    }
    card = (staged / "README.md").read_text("utf-8")
    assert f"`eval/{RESULTS}` measured on v1; the weights changed since" in card and "measured on v2" not in card


def test_a_fresh_checkout_without_the_previous_weights_cannot_tell(tmp_path: Path) -> None:
    """Nothing staged, nothing published, v1's weights gone: v2 says it cannot tell, never "measured on v2"."""
    v1, v2 = _v1_and_v2(tmp_path, lambda text: text, new_weights=False)
    for weights in v1.parent.glob("model-*.safetensors"):
        weights.unlink()
    staged = build(load_spec(v2), tmp_path / "dist").dist
    manifest = Manifest.load(staged / "release.json")
    assert manifest.evidence == {RESULTS: {"measured_on": "", "model_sha256": "", "unread": "v1"}}
    card = (staged / "README.md").read_text("utf-8")
    assert "**Not compared:** v1 exists but its release is not here" in card and "First release" not in card
    assert f"`{RESULTS}` cannot tell which version measured it" in card
    verify_staged(staged)
