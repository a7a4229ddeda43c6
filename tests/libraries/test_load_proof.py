"""The library proves the load (release/builder/proof.py): build runs the card's loading code with transformers
(LIBRARY_PYTHON) on the staged release, offline, bounded, before the card is rendered. It passes on every
transformers fixture the libraries wrote, fails on a breakage the static checks miss in transformers' own words,
stays within its time and memory bounds on a hostile release, and runs no shipped code without --trust-remote-code."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from release.builder import build, proof
from release.localhub import LocalHub
from release.spec import load_spec
from tests.helpers import TOKEN
from tests.kinds.transformers.test_library_written import build_card, folder_of, init_spec, refusals
from tests.libraries.conftest import library_python, publish

TRANSFORMERS_FIXTURES = [
    "llama",
    "gpt2",
    "bert-mlm",
    "mixtral",
    "whisper",
    "vit",
    "llama-pickle",
    "llama-fp16",
    "llava",
]


def release_json(dist: Path) -> dict:
    return json.loads((dist / "release.json").read_text("utf-8"))


@pytest.mark.parametrize("fixture", TRANSFORMERS_FIXTURES)
def test_the_card_s_code_loads_each_fixture_before_publishing(fixture: str, tmp_path: Path) -> None:
    library_python("LIBRARY_PYTHON")
    dist, card, _ = build_card(init_spec(folder_of(fixture, tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["library"] == "transformers", record
    assert record["device"] == "cpu" and record["trust_remote_code"] is False
    assert record["loads"] and all(not (x["missing"] or x["unexpected"] or x["mismatched"]) for x in record["loads"])
    assert any('.from_pretrained("test-org/tiny"' in line for line in record["call"]), record["call"]
    assert f"Loaded by the code below with transformers {record['version']} before publishing." in card


def test_above_the_size_bound_the_load_is_on_the_meta_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    library_python("LIBRARY_PYTHON")
    monkeypatch.setattr(proof, "REAL_LOAD_MAX_BYTES", 0)
    dist, _, _ = build_card(init_spec(folder_of("llama", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["device"] == "meta", record


@pytest.mark.parametrize(
    ("fixture", "library", "loads", "call"),
    [
        (
            "sentence-transformers",
            "sentence_transformers",
            {"BertModel"},
            'model = SentenceTransformer("test-org/tiny"',
        ),
        ("cross-encoder", "sentence_transformers", {"BertForSequenceClassification"}, 'model = CrossEncoder("test-org'),
        (
            "diffusers-sd",
            "diffusers",
            {"UNet2DConditionModel", "AutoencoderKL", "CLIPTextModel"},
            'pipe = DiffusionPipeline.from_pretrained("test-org/tiny"',
        ),
    ],
)
def test_the_other_libraries_prove_their_card_s_code(
    fixture: str, library: str, loads: set[str], call: str, tmp_path: Path
) -> None:
    """sentence-transformers (its backbone through transformers) and diffusers (each component, its own models and a
    transformers text encoder) load the release as the card prints it, every load reporting no key problems."""
    library_python("LIBRARY_PYTHON")
    dist, card, _ = build_card(init_spec(folder_of(fixture, tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["library"] == library and record["device"] == "cpu", record
    assert {x["class"] for x in record["loads"]} == loads, record["loads"]
    assert all(not (x["missing"] or x["unexpected"] or x["mismatched"]) for x in record["loads"])
    assert any(line.startswith(call) for line in record["call"]), record["call"]
    shown = library.replace("_", "-")
    assert f"Loaded by the code below with {shown} {record['version']} before publishing." in card


def test_a_library_that_cannot_load_on_the_meta_device_proves_nothing_above_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """diffusers reads every weight byte: above the real-load bound the proof is not run, and the card claims none."""
    library_python("LIBRARY_PYTHON")
    monkeypatch.setattr(proof, "REAL_LOAD_MAX_BYTES", 0)
    dist, card, _ = build_card(init_spec(folder_of("diffusers-sd", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is False and "cannot load them without reading every byte" in record["why"], record
    assert "Loaded by the code below" not in card


def renamed_in(weights: Path, name: str, python: str) -> None:
    """One tensor saved under another name (shapes and sizes all right: no static rule sees it)."""
    script = (
        "import sys\nfrom safetensors.torch import load_file, save_file\n"
        "t = load_file(sys.argv[1]); t[sys.argv[2] + '_renamed'] = t.pop(sys.argv[2])\n"
        "save_file(t, sys.argv[1], metadata={'format': 'pt'})\n"
    )
    subprocess.run([python, "-c", script, str(weights), name], check=True, timeout=120)


@pytest.mark.parametrize(
    ("fixture", "weights", "tensor", "words"),
    [
        (
            "sentence-transformers",
            "model.safetensors",
            "pooler.dense.weight",
            "BertModel LOAD REPORT from: the release; pooler.dense.weight_renamed UNEXPECTED; pooler.dense.weight "
            "MISSING",
        ),
        (
            "diffusers-sd",
            "unet/diffusion_pytorch_model.safetensors",
            "conv_out.weight",
            "Some weights of UNet2DConditionModel were not initialized from the model checkpoint at unet and are "
            "newly initialized: ['conv_out.weight']",
        ),
    ],
)
def test_a_renamed_tensor_is_refused_in_the_library_s_words_naming_its_file(
    fixture: str, weights: str, tensor: str, words: str, tmp_path: Path
) -> None:
    folder = folder_of(fixture, tmp_path)
    renamed_in(folder / weights, tensor, library_python("LIBRARY_PYTHON"))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith(f"{weights}: the card's code does not load this release with ") and words in line
        for line in lines
    ), lines


def renamed_tensor(folder: Path, python: str) -> None:
    """model.norm.weight saved as model.final_norm.weight: every shape and size still right (no static rule sees it);
    transformers reports it MISSING and the other UNEXPECTED."""
    script = (
        "import sys\nfrom safetensors.torch import load_file, save_file\n"
        "t = load_file(sys.argv[1]); t['model.final_norm.weight'] = t.pop('model.norm.weight')\n"
        "save_file(t, sys.argv[1], metadata={'format': 'pt'})\n"
    )
    subprocess.run([python, "-c", script, str(folder / "model.safetensors")], check=True, timeout=120)


def test_a_breakage_the_checks_miss_is_refused_in_transformers_words(tmp_path: Path) -> None:
    folder = folder_of("llama", tmp_path)
    renamed_tensor(folder, library_python("LIBRARY_PYTHON"))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("model.safetensors: the card's code does not load this release with transformers ")
        and "model.final_norm.weight UNEXPECTED" in line
        and "model.norm.weight MISSING" in line
        and "\n" not in line
        for line in lines
    ), lines


def test_a_tower_wider_than_its_weights_is_refused_with_the_load_report_s_rows(tmp_path: Path) -> None:
    """vision_config.hidden_size 32 over a 16-wide tower: no static rule reads a tower's width; transformers raises
    "…look at the above report!", and the line carries that report's rows (the tensors and their shapes)."""
    library_python("LIBRARY_PYTHON")
    folder = folder_of("llava", tmp_path)
    config = json.loads((folder / "config.json").read_text("utf-8"))
    config["vision_config"]["hidden_size"] = 32
    (folder / "config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        "the card's code does not load this release with transformers " in line
        and "LlavaForConditionalGeneration LOAD REPORT from: the release; model.vision_tower." in line
        # the report's rows come in no fixed order, and a long line is cut in its middle (errors.py): a 16 anywhere
        and "MISMATCH Reinit due to size mismatch - ckpt: torch.Size([" in line
        and "torch.Size([16" in line
        and "\x1b" not in line
        for line in lines
    ), lines


def test_a_processor_the_library_does_not_know_is_refused_naming_its_file(tmp_path: Path) -> None:
    """preprocessor_config.json naming an image processor transformers does not have: no static rule reads it."""
    folder = folder_of("vit", tmp_path)
    library_python("LIBRARY_PYTHON")
    config = json.loads((folder / "preprocessor_config.json").read_text("utf-8"))
    config["image_processor_type"] = "NoSuchImageProcessor"
    (folder / "preprocessor_config.json").write_text(json.dumps(config))
    lines = refusals(init_spec(folder, tmp_path), tmp_path)
    assert any(
        line.startswith("preprocessor_config.json: the card's code does not load this release with transformers ")
        and "ValueError: Unrecognized image processor in the release" in line
        and len(line) < 1000
        for line in lines
    ), lines


def test_a_hostile_config_stays_within_the_memory_bound(tmp_path: Path) -> None:
    """A config that asks for a model of 10^8 x 4096 embeddings (1.6 TB) beside tiny weights: the child fails inside
    its address-space bound, quickly, and says so; the machine is untouched."""
    python = library_python("LIBRARY_PYTHON")
    folder = tmp_path / "hostile"
    shutil.copytree(folder_of("llama", tmp_path), folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(vocab_size=10**8, hidden_size=4096, intermediate_size=16384, num_hidden_layers=64)
    (folder / "config.json").write_text(json.dumps(config))
    code = "from transformers import AutoModelForCausalLM\n"
    code += f"model = AutoModelForCausalLM.from_pretrained({str(folder)!r})\n"
    started = time.monotonic()
    result = proof.run_load(python, "transformers", code, folder, meta=False, trust_remote_code=False, time_limit=60)
    assert time.monotonic() - started < 60
    assert result["ok"] is False, result


def test_a_load_that_never_ends_is_stopped_at_its_time_bound(tmp_path: Path) -> None:
    python = library_python("LIBRARY_PYTHON")
    started = time.monotonic()
    result = proof.run_load(
        python,
        "transformers",
        "import time\ntime.sleep(600)\n",
        tmp_path,
        meta=False,
        trust_remote_code=False,
        time_limit=5,
    )
    assert time.monotonic() - started < 30
    assert result == {"ok": False, "error": "the load took longer than 5 s; it was stopped", "bound": True}


def marked_custom_code(tmp_path: Path) -> tuple[Path, Path]:
    """The custom-code fixture whose modeling file leaves a mark when it is imported."""
    folder = folder_of("custom-code", tmp_path)
    marker = tmp_path / "imported"
    with (folder / "modeling_tinycode.py").open("a") as f:
        f.write(f"\nimport pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n")
    return folder, marker


def test_shipped_code_is_not_run_without_trust_remote_code(tmp_path: Path) -> None:
    library_python("LIBRARY_PYTHON")
    folder, marker = marked_custom_code(tmp_path)
    dist, card, _ = build_card(init_spec(folder, tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is False and "build --trust-remote-code" in record["why"], record
    assert "Loaded by the code below" not in card
    assert not marker.exists()


def test_the_child_refuses_a_shipped_code_file_even_when_the_code_asks(tmp_path: Path) -> None:
    """Without --trust-remote-code the child refuses to open the release's .py files, whatever the code passes."""
    python = library_python("LIBRARY_PYTHON")
    folder, marker = marked_custom_code(tmp_path)
    code = (
        "from transformers import AutoModelForCausalLM\n"
        f"model = AutoModelForCausalLM.from_pretrained({str(folder)!r}, trust_remote_code=True)\n"
    )
    result = proof.run_load(python, "transformers", code, folder, meta=False, trust_remote_code=False)
    assert result["ok"] is False and "runs only with --trust-remote-code" in result["error"], result
    assert not marker.exists()


def test_with_trust_remote_code_the_model_s_own_code_is_loaded_and_recorded(tmp_path: Path) -> None:
    library_python("LIBRARY_PYTHON")
    folder, marker = marked_custom_code(tmp_path)
    dist = build(load_spec(init_spec(folder, tmp_path)), tmp_path / "dist", trust_remote_code=True).dist
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["trust_remote_code"] is True, record
    assert [x["class"] for x in record["loads"]] == ["TinyCodeForCausalLM"]
    assert marker.read_text() == "imported"


BASE = "hf-release-test/tiny-llama"  # the base the peft-lora fixture's adapter_config.json names
SD_BASE = "hf-release-test/tiny-sd"  # the base the diffusers-lora fixture's README names


def cache_base(fixture: str, repo_id: str, hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hugging Face cache of this test's own holding an adapter's base, as huggingface_hub downloads it (the base
    published to the local Hub first); build reads it as this machine's cache."""
    from huggingface_hub import constants, snapshot_download

    library_python("LIBRARY_PYTHON")
    publish(fixture, repo_id, hub, tmp_path / "base")
    cache = tmp_path / "hf-cache"
    snapshot_download(repo_id, cache_dir=cache, endpoint=hub.url, token=TOKEN)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture
def base_cache(hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return cache_base("llama", BASE, hub, tmp_path, monkeypatch)


@pytest.fixture
def sd_base_cache(hub: LocalHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return cache_base("diffusers-sd", SD_BASE, hub, tmp_path, monkeypatch)


def test_a_peft_adapter_is_proven_on_its_base_from_the_cache(base_cache: Path, tmp_path: Path) -> None:
    dist, card, _ = build_card(init_spec(folder_of("peft-lora", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["library"] == "peft" and record["device"] == "meta", record
    assert {x["class"] for x in record["loads"]} == {"LlamaForCausalLM"}, record["loads"]
    assert any(line.startswith("model = PeftModel.from_pretrained(base") for line in record["call"]), record["call"]
    assert f"Loaded by the code below with peft {record['version']} before publishing." in card


def test_a_classification_adapter_that_brings_its_own_head_is_proven(base_cache: Path, tmp_path: Path) -> None:
    """PEFT's SEQ_CLS adapter saves the classifier head the base checkpoint lacks: the base's own load reports that
    head missing (and lm_head unexpected), which is the adapter's to fill, not a fault of the release."""
    dist, card, _ = build_card(init_spec(folder_of("peft-seq-cls", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["library"] == "peft", record
    assert any("AutoModelForSequenceClassification" in line for line in record["call"]), record["call"]


def test_without_its_base_in_the_cache_a_peft_adapter_is_not_proven_and_the_card_claims_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    library_python("LIBRARY_PYTHON")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    dist, card, _ = build_card(init_spec(folder_of("peft-lora", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is False and "not in this machine's Hugging Face cache" in record["why"], record
    assert "hf download" in record["why"]
    assert "Loaded by the code below" not in card


def test_an_adapter_missing_a_module_s_weights_is_refused_in_peft_s_words(base_cache: Path, tmp_path: Path) -> None:
    """One adapted module's LoRA pair left out of the weights (each saved module still whole: no static rule sees
    it): PEFT loads the rest and only warns; the proof refuses in its words."""
    folder = folder_of("peft-lora", tmp_path)
    script = (
        "import sys\nfrom safetensors.torch import load_file, save_file\n"
        "t = {k: v for k, v in load_file(sys.argv[1]).items() if '.layers.0.self_attn.q_proj.' not in k}\n"
        "save_file(t, sys.argv[1], metadata={'format': 'pt'})\n"
    )
    weights = folder / "adapter_model.safetensors"
    subprocess.run([library_python("LIBRARY_PYTHON"), "-c", script, str(weights)], check=True, timeout=120)
    [line] = refusals(init_spec(folder, tmp_path), tmp_path)
    assert line.startswith("adapter_model.safetensors: the card's code does not load this release with peft"), line
    assert "Found missing adapter keys while loading the checkpoint" in line and "q_proj.lora_A" in line, line


def test_a_diffusers_lora_is_proven_on_its_base_pipeline_from_the_cache(sd_base_cache: Path, tmp_path: Path) -> None:
    """The base pipeline read whole from the cache (within the real-load bound), the LoRA loaded on it; the card's
    generation after load_lora_weights is not run."""
    dist, card, _ = build_card(init_spec(folder_of("diffusers-lora", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is True and record["library"] == "diffusers" and record["device"] == "cpu", record
    assert record["call"][-1].startswith("pipe.load_lora_weights("), record["call"]
    assert {"UNet2DConditionModel", "CLIPTextModel"} <= {x["class"] for x in record["loads"]}, record["loads"]
    assert f"Loaded by the code below with diffusers {record['version']} before publishing." in card


def test_a_diffusers_lora_over_a_base_above_the_real_load_bound_is_not_proven(
    sd_base_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proof, "REAL_LOAD_MAX_BYTES", 1 << 10)
    dist, card, _ = build_card(init_spec(folder_of("diffusers-lora", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is False and "with the cached models the card loads" in record["why"], record
    assert "Loaded by the code below" not in card


def test_without_its_base_pipeline_in_the_cache_a_diffusers_lora_is_not_proven(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    library_python("LIBRARY_PYTHON")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    dist, card, _ = build_card(init_spec(folder_of("diffusers-lora", tmp_path), tmp_path), tmp_path)
    record = release_json(dist)["proof"]
    assert record["proven"] is False and f"hf download {SD_BASE}" in record["why"], record
    assert "Loaded by the code below" not in card
