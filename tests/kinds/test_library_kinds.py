"""The peft-adapter and gguf kinds, on folders the libraries' own save functions wrote (tests/fixtures/libraries/):
`init --files` → `build` with no edit gives the card the Hub expects for that library, and each corruption
is refused in one line naming the file."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

from release.builder import build
from release.errors import CheckFailed
from release.init import init_from_files
from release.spec import load_spec
from tests.helpers import ROOT
from tests.kinds.helpers import apache_license

LIBRARIES = ROOT / "tests" / "fixtures" / "libraries"


def folder(tmp_path: Path, fixture: str, *, license: bool = True) -> Path:
    """A copy of a library fixture inside the project, plus a LICENSE (no library writes one)."""
    copy = tmp_path / "artifacts" / "incoming"
    shutil.copytree(LIBRARIES / fixture, copy)
    if license:
        (copy / "LICENSE").write_text(apache_license())
    return copy


def front_matter(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def built_card(tmp_path: Path, files: Path, repo_id: str) -> tuple[Path, str]:
    spec = init_from_files(tmp_path, "v1", files, repo_id).spec
    staged = build(load_spec(spec), tmp_path / "dist").dist
    return spec, (staged / "README.md").read_text("utf-8")


def refusal(tmp_path: Path, files: Path, repo_id: str) -> list[str]:
    spec = init_from_files(tmp_path, "v1", files, repo_id).spec
    with pytest.raises(CheckFailed) as failed:
        build(load_spec(spec), tmp_path / "dist")
    return [f"{p.file}: {p.message}" for p in failed.value.problems]


# --- PEFT adapter ------------------------------------------------------------------------------------


def test_a_peft_adapter_builds_without_edits_as_an_adapter_of_its_base(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "peft-lora"), "test-org/tiny-lora")
    text = spec.read_text("utf-8")
    written = tomllib.loads(text)
    assert 'kind = "peft-adapter"  # detected: the release holds adapter_config.json' in text
    roles = {Path(f["source"]).name: f["role"] for f in written["files"]}
    assert roles == {
        "adapter_config.json": "adapter-config",
        "adapter_model.safetensors": "adapter-weights",
        "LICENSE": "license",
    }
    # PEFT's README: its front matter carried into the spec, its 39 "[More Information Needed]" not
    assert written["card"]["metadata"] == {
        "base_model": "hf-release-test/tiny-llama",
        "library_name": "peft",
        "pipeline_tag": "text-generation",
        "tags": ["lora", "transformers"],
    }
    assert "More Information Needed" not in text and "More Information Needed" not in card
    assert written["card"]["summary"] == "tiny-lora: a LORA adapter of hf-release-test/tiny-llama (peft-adapter)."
    meta = front_matter(card)
    assert meta["library_name"] == "peft" and meta["pipeline_tag"] == "text-generation"
    assert meta["base_model"] == "hf-release-test/tiny-llama" and meta["base_model_relation"] == "adapter"
    for row in (
        "| PEFT method | LORA |",
        "| Rank (r) | 4 |",
        "| Alpha (lora_alpha) | 8 |",
        "| Target modules | `q_proj`, `v_proj` |",
        "| Trainable parameters | 448 |",
    ):
        assert row in card
    assert (
        'base = AutoModelForCausalLM.from_pretrained("hf-release-test/tiny-llama")\n'
        'model = PeftModel.from_pretrained(base, "test-org/tiny-lora", revision="v1")'
    ) in card
    assert 'AutoModel.from_pretrained("test-org/tiny-lora"' not in card  # no transformers snippet on the adapter repo


def test_the_front_matter_comes_from_adapter_config_even_without_peft_readme(tmp_path: Path) -> None:
    files = folder(tmp_path, "peft-lora")
    (files / "README.md").unlink()
    _, card = built_card(tmp_path, files, "test-org/tiny-lora")
    meta = front_matter(card)
    assert (meta["library_name"], meta["base_model"], meta["base_model_relation"]) == (
        "peft",
        "hf-release-test/tiny-llama",
        "adapter",
    )


def test_the_base_revision_pins_the_base_in_the_snippet(tmp_path: Path) -> None:
    spec = init_from_files(tmp_path, "v1", folder(tmp_path, "peft-lora"), "test-org/tiny-lora").spec
    spec.write_text(
        spec.read_text("utf-8").replace(
            "\n[card.metadata]\n", '\n[card.usage]\nbase_revision = "v1"\n\n[card.metadata]\n'
        )
    )
    card = (build(load_spec(spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    assert 'AutoModelForCausalLM.from_pretrained("hf-release-test/tiny-llama", revision="v1")' in card


def test_a_base_that_is_a_local_path_is_asked_for_in_the_spec(tmp_path: Path) -> None:
    files = folder(tmp_path, "peft-lora")
    (files / "README.md").unlink()
    config = json.loads((files / "adapter_config.json").read_text())
    (files / "adapter_config.json").write_text(json.dumps({**config, "base_model_name_or_path": "/data/base"}))
    [line] = refusal(tmp_path, files, "test-org/tiny-lora")
    assert line.startswith("adapter_config.json: base_model_name_or_path is '/data/base', not a Hub id")
    assert '[card.metadata] base_model = "ORG/NAME"' in line


def test_an_adapter_whose_rank_disagrees_with_its_tensors_is_refused_naming_the_file(tmp_path: Path) -> None:
    files = folder(tmp_path, "peft-lora")
    config = json.loads((files / "adapter_config.json").read_text())
    (files / "adapter_config.json").write_text(json.dumps({**config, "r": 8}))
    [line] = refusal(tmp_path, files, "test-org/tiny-lora")
    assert line.startswith("adapter_config.json: r says rank 8, but adapter_model.safetensors holds rank 4")
    assert "PEFT would fail to load them" in line


def test_an_adapter_task_type_peft_does_not_know_is_refused(tmp_path: Path) -> None:
    files = folder(tmp_path, "peft-lora")
    config = json.loads((files / "adapter_config.json").read_text())
    (files / "adapter_config.json").write_text(json.dumps({**config, "task_type": "CAUSAL"}))
    [line] = refusal(tmp_path, files, "test-org/tiny-lora")
    assert line.startswith("adapter_config.json: task_type is 'CAUSAL'; PEFT refuses it")


# --- GGUF --------------------------------------------------------------------------------------------


def test_gguf_files_build_without_edits_as_gguf(tmp_path: Path) -> None:
    spec, card = built_card(tmp_path, folder(tmp_path, "gguf"), "test-org/tiny-gguf")
    text = spec.read_text("utf-8")
    assert 'kind = "gguf"  # detected: the release holds tiny-llama-17K-F16.gguf' in text
    assert {f["role"] for f in tomllib.loads(text)["files"]} == {"gguf", "license"}
    assert tomllib.loads(text)["card"]["summary"] == "tiny-gguf: a llama model in 2 GGUF files (gguf)."
    meta = front_matter(card)
    assert meta["library_name"] == "gguf" and "base_model" not in meta
    for row in (
        "| Architecture | llama |",
        "| Context length | 128 |",
        "| Parameters | 16,976 (16.98 K) |",
        "| `tiny-llama-17K-F16.gguf` | F16: F16 × 16, F32 × 5 tensors |",
        "| Chat template | yes |",
    ):
        assert row in card
    assert (
        "hf download test-org/tiny-gguf tiny-llama-17K-F16.gguf --revision v1 --local-dir .\nllama-cli -m "
        "tiny-llama-17K-F16.gguf" in card
    )
    assert (
        'AutoModelForCausalLM.from_pretrained("test-org/tiny-gguf", gguf_file="tiny-llama-17K-F16.gguf", revision="v1")'
        in card
    )
    assert "library_name: transformers" not in card


def test_a_truncated_gguf_is_refused_naming_it(tmp_path: Path) -> None:
    files = folder(tmp_path, "gguf")
    damaged = files / "tiny-llama-17K-F32.gguf"
    damaged.write_bytes(damaged.read_bytes()[:-1000])
    [line] = refusal(tmp_path, files, "test-org/tiny-gguf")
    assert line.startswith("tiny-llama-17K-F32.gguf: is cut short: tensor ")
    assert "copy the file again" in line


# --- a folder without a LICENSE ------------------------------------------------------------------------


def test_a_folder_without_license_gets_a_placeholder_that_build_names(tmp_path: Path) -> None:
    spec = init_from_files(tmp_path, "v1", folder(tmp_path, "gguf", license=False), "test-org/tiny-gguf").spec
    text = spec.read_text("utf-8")
    assert "# No LICENSE file in" in text and '# [card.license]\n# id = "apache-2.0"' in text
    with pytest.raises(Exception, match="'license' is required") as refused:
        build(load_spec(spec), tmp_path / "dist")
    # the fix, not only the rule: where the text goes and what [card.license] takes
    assert 'with role "license" in [[files]]' in str(refused.value) and "commented [card.license] block" in str(
        refused.value
    )


@pytest.mark.parametrize(
    ("fixture", "repo_id"),
    [("peft-lora", "test-org/tiny-lora"), ("gguf", "test-org/tiny-gguf"), ("timm", "test-org/tiny-convnext")],
)
def test_verify_and_card_recompute_the_kind_facts_from_the_staged_files(
    tmp_path: Path, fixture: str, repo_id: str
) -> None:
    """verify re-reads the kind's own files as build did: the staged release verifies, and its card re-renders
    from the staged files byte for byte."""
    from release.card.staged import render_card
    from release.verify import verify_staged

    spec = init_from_files(tmp_path, "v1", folder(tmp_path, fixture), repo_id).spec
    staged = build(load_spec(spec), tmp_path / "dist").dist
    verify_staged(staged)
    again = render_card(load_spec(spec), staged, write=False)
    assert again.text == (staged / "README.md").read_text("utf-8")


def test_a_base_given_in_the_spec_becomes_the_adapter_base(tmp_path: Path) -> None:
    """A local-path base, then [card.metadata] base_model given: the card names that base, as an adapter of it."""
    files = folder(tmp_path, "peft-lora")
    (files / "README.md").unlink()
    config = json.loads((files / "adapter_config.json").read_text())
    (files / "adapter_config.json").write_text(json.dumps({**config, "base_model_name_or_path": "/data/base"}))
    spec = init_from_files(tmp_path, "v1", files, "test-org/tiny-lora").spec
    spec.write_text(spec.read_text("utf-8") + '\n[card.metadata]\nbase_model = "hf-release-test/tiny-llama"\n')
    card = (build(load_spec(spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    meta = front_matter(card)
    assert (meta["base_model"], meta["base_model_relation"], meta["library_name"]) == (
        "hf-release-test/tiny-llama",
        "adapter",
        "peft",
    )
    assert 'AutoModelForCausalLM.from_pretrained("hf-release-test/tiny-llama")' in card
