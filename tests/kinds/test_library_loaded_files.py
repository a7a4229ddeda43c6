"""Files a library loads beyond config and weights, on folders its own save functions wrote
(tests/fixtures/libraries/): none stays `extra`. Custom code (an `auto_map`) is read statically, never imported, and
carded with trust_remote_code=True; a processor config is loaded in the card's code and required where the task needs
one; a variant is loaded with `variant=`; what transformers refuses at load time build refuses first, in its terms."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from release.init.detect import scan
from release.verify import verify_staged
from tests.kinds.transformers.test_library_written import build_card, folder_of, init_spec, refusals


def roles(folder: Path) -> dict[str, str]:
    return {d.path.relative_to(folder).as_posix(): d.role for d in scan(folder)}


def test_the_code_an_auto_map_names_is_code_and_its_card_trusts_it_by_name(tmp_path: Path) -> None:
    folder = folder_of("custom-code", tmp_path)
    assert roles(folder) == {
        "LICENSE": "license",
        "config.json": "config",
        "configuration_tinycode.py": "code",
        "model.safetensors": "weights",
        "modeling_tinycode.py": "code",
    }
    before = set(sys.modules)
    dist, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert not {m for m in set(sys.modules) - before if "tinycode" in m}, "a shipped code file was imported"
    assert front["library_name"] == "transformers" and front["pipeline_tag"] == "text-generation"
    assert (
        'model = AutoModelForCausalLM.from_pretrained("test-org/tiny", revision="v1", trust_remote_code=True)' in card
    )
    assert "This model ships its own code (`configuration_tinycode.py`, `modeling_tinycode.py`)" in card
    assert "review those files at this revision before loading" in card
    verify_staged(dist)


def test_a_deleted_modeling_file_is_refused_in_transformers_terms(tmp_path: Path) -> None:
    folder = folder_of("custom-code", tmp_path)
    (folder / "modeling_tinycode.py").unlink()
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith(
            "config.json: auto_map's AutoModelForCausalLM names modeling_tinycode.TinyCodeForCausalLM, but "
            "the release does not hold modeling_tinycode.py; transformers: 'does not appear to have a file "
            "named modeling_tinycode.py'"
        )
        for line in lines
    ), lines


def test_an_auto_map_naming_an_undefined_class_is_refused(tmp_path: Path) -> None:
    folder = folder_of("custom-code", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"]["AutoModelForCausalLM"] = "modeling_tinycode.TinyCodeModel"
    (folder / "config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith(
            "modeling_tinycode.py: defines no TinyCodeModel, which config.json's auto_map names for "
            "AutoModelForCausalLM; transformers: \"module 'modeling_tinycode' has no attribute"
        )
        for line in lines
    ), lines


def test_a_relative_import_of_a_missing_file_is_refused(tmp_path: Path) -> None:
    folder = folder_of("custom-code", tmp_path)
    code = folder / "modeling_tinycode.py"
    code.write_text(code.read_text().replace("from .configuration_tinycode", "from .configuration_other"))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith(
            "modeling_tinycode.py: imports .configuration_other relatively, but the release does not hold "
            "configuration_other.py"
        )
        for line in lines
    ), lines


def test_a_whisper_feature_extractor_is_a_processor_loaded_by_the_card(tmp_path: Path) -> None:
    folder = folder_of("whisper", tmp_path)
    assert roles(folder)["preprocessor_config.json"] == "processor"
    dist, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert front["pipeline_tag"] == "automatic-speech-recognition"
    assert "from transformers import AutoModelForSpeechSeq2Seq, AutoFeatureExtractor" in card
    assert 'processor = AutoFeatureExtractor.from_pretrained("test-org/tiny", revision="v1")' in card
    verify_staged(dist)


def test_a_vit_image_processor_is_loaded_by_the_card(tmp_path: Path) -> None:
    folder = folder_of("vit", tmp_path)
    assert roles(folder)["preprocessor_config.json"] == "processor"
    _, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert front["pipeline_tag"] == "image-classification"
    assert 'processor = AutoImageProcessor.from_pretrained("test-org/tiny", revision="v1")' in card


def test_a_missing_processor_config_is_refused_where_the_task_needs_one(tmp_path: Path) -> None:
    for fixture in ("whisper", "vit"):
        folder = folder_of(fixture, tmp_path / fixture)
        (folder / "preprocessor_config.json").unlink()
        lines = refusals(init_spec(folder, tmp_path / fixture), tmp_path / fixture)
        assert any(
            line.startswith("preprocessor_config.json: is missing:") and "Can't load feature extractor" in line
            for line in lines
        ), lines


def test_a_variant_only_release_is_loaded_with_its_variant(tmp_path: Path) -> None:
    folder = folder_of("llama-fp16", tmp_path)
    assert roles(folder)["model.fp16.safetensors"] == "weights"
    _, card, _ = build_card(init_spec(folder, tmp_path), tmp_path)
    assert 'model = AutoModelForCausalLM.from_pretrained("test-org/tiny", revision="v1", variant="fp16")' in card


def test_the_code_files_are_part_of_the_model_evidence_measured() -> None:
    """Evidence measured on a model whose code then changed measured another model (history/provenance.py)."""
    from release.card.evidence import FileRow
    from release.history.provenance import model_digest
    from release.kinds.transformers import KIND

    files = {p: FileRow(p, 1, h * 64, r) for p, h, r in (("model.safetensors", "a", "weights"), ("m.py", "b", "code"))}
    changed = {**files, "m.py": FileRow("m.py", 1, "c" * 64, "code")}
    assert model_digest(files, KIND.model_roles) != model_digest(changed, KIND.model_roles)


def test_pickle_shards_and_their_index_are_weights_checked_without_unpickling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = folder_of("llama-pickle", tmp_path)
    found = roles(folder)
    assert found["pytorch_model.bin.index.json"] == "weights-index"
    assert {found[f"pytorch_model-0000{n}-of-00003.bin"] for n in (1, 2, 3)} == {"weights"}
    with caplog.at_level(logging.WARNING):
        dist, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(w.startswith("warning: pytorch_model-00001-of-00003.bin, ") and "pickle" in w for w in warnings)
    assert front["pipeline_tag"] == "text-generation"
    assert "The weights are pickle files (`pytorch_model-00001-of-00003.bin`" in card
    assert "safetensors headers" not in card
    verify_staged(dist)


def test_a_cut_pickle_shard_is_refused_naming_it(tmp_path: Path) -> None:
    folder = folder_of("llama-pickle", tmp_path)
    shard = folder / "pytorch_model-00002-of-00003.bin"
    shard.write_bytes(shard.read_bytes()[:-200])
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("pytorch_model-00002-of-00003.bin: is not a complete torch.save zip") for line in lines
    ), lines


def test_a_missing_pickle_shard_is_refused_by_its_index(tmp_path: Path) -> None:
    folder = folder_of("llama-pickle", tmp_path)
    (folder / "pytorch_model-00003-of-00003.bin").unlink()
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("pytorch_model.bin.index.json: weight_map points")
        and "at pytorch_model-00003-of-00003.bin, which is not a weights file of the release" in line
        for line in lines
    ), lines


def test_init_lists_what_stayed_extra_and_why(tmp_path: Path) -> None:
    from release.cli.results import Initialized
    from release.init import init_from_files

    folder = folder_of("custom-code", tmp_path)
    (folder / "notes.txt").write_text("training notes\n")
    lines = Initialized(init_from_files(tmp_path / "project", "v1", folder, "test-org/tiny"), "v1").lines()
    extra = [line for line in lines if "stayed extra" in line]
    assert extra == [
        "  stayed extra: notes.txt (not recognised: no library this release's kind uses loads a file of that name; "
        "shipped unchecked)"
    ], lines


def test_a_config_without_weights_is_refused(tmp_path: Path) -> None:
    folder = folder_of("llama", tmp_path)
    (folder / "model.safetensors").unlink()
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("config.json: has no weights beside it") and "does not appear to have a file named" in line
        for line in lines
    ), lines


def test_a_classifier_head_over_other_labels_is_refused(tmp_path: Path) -> None:
    folder = folder_of("vit", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["id2label"] = {str(i): f"label {i}" for i in range(5)}
    config["label2id"] = {f"label {i}": i for i in range(5)}
    (folder / "config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert (
        "config.json: id2label has 5 labels, but the classifier head classifier.weight has 3 rows; transformers: "
        "'size mismatch for classifier.weight'; give id2label the head's labels, or save the model again with "
        "save_pretrained" in lines
    ), lines


def test_whispers_mel_bins_are_checked_against_its_first_convolution(tmp_path: Path) -> None:
    folder = folder_of("whisper", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config["num_mel_bins"] = 80
    (folder / "config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("config.json: num_mel_bins is 80, but model.encoder.conv1.weight takes 16 channels")
        for line in lines
    ), lines


def test_a_vision_language_model_loads_its_processor_and_checks_each_tower(tmp_path: Path) -> None:
    """Llava as save_pretrained wrote it: processor_config.json (the image processor and the tokenizer's processor)
    is loaded with AutoProcessor, and the card's model class takes images and text."""
    folder = folder_of("llava", tmp_path)
    assert roles(folder)["processor_config.json"] == "processor"
    _, card, front = build_card(init_spec(folder, tmp_path), tmp_path)
    assert front["library_name"] == "transformers" and front["pipeline_tag"] == "image-text-to-text"
    assert 'processor = AutoProcessor.from_pretrained("test-org/tiny", revision="v1")' in card
    assert 'model = AutoModelForImageTextToText.from_pretrained("test-org/tiny", revision="v1")' in card


@pytest.mark.parametrize(
    ("tower", "words"),
    [
        (
            "vision_config",
            "config.json: vision_config.num_hidden_layers is 3, but model.safetensors holds layers 0–1 "
            "(vision_tower.encoder.layers.N.)",
        ),
        (
            "text_config",
            "config.json: num_hidden_layers (stored as 'text_config.num_hidden_layers') is 3, but model.safetensors "
            "holds layers 0–1 (language_model.model.layers.N.)",
        ),
    ],
)
def test_a_tower_s_layers_are_checked_against_its_own_sub_config(tmp_path: Path, tower: str, words: str) -> None:
    """Each nested sub-config sizes its own tower: transformers reports the extra layer's keys MISSING."""
    folder = folder_of("llava", tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config[tower]["num_hidden_layers"] = 3
    (folder / "config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(line.startswith(words) for line in lines), lines
