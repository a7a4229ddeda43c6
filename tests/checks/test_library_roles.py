"""release/checks/library_roles.py: the roles the libraries' loading rules give (init's), and build's warning where the
spec gives role `extra` to a file the release's library loads, on folders the libraries' own save functions wrote."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from release.checks.library_roles import library_role
from tests.kinds.transformers.test_library_written import build_card, folder_of, init_spec


def as_extra(spec: Path, *names: str) -> None:
    """Give these files role `extra` in the spec init wrote (as an author who did not know the library loads them)."""
    text = spec.read_text()
    for name in names:
        text, found = re.subn(rf'(source = "[^"]*/{re.escape(name)}"\nrole = )"[a-z-]+"', r'\1"extra"', text, count=1)
        assert found == 1, name
    spec.write_text(text)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_file_the_library_loads_given_role_extra_is_warned_about_naming_its_role(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spec = init_spec(folder_of("llama", tmp_path), tmp_path)
    as_extra(spec, "generation_config.json")
    with caplog.at_level(logging.WARNING):
        build_card(spec, tmp_path)
    assert (
        "warning: generation_config.json has role 'extra', but transformers loads it (generation_config.json): as "
        "'extra' it is published unchecked; give it role \"generation-config\" in the spec's [[files]]"
    ) in warnings_of(caplog)


def test_a_kind_s_own_file_given_role_extra_is_warned_about(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    spec = init_spec(folder_of("sentence-transformers", tmp_path), tmp_path)
    as_extra(spec, "modules.json")
    with caplog.at_level(logging.WARNING):
        try:
            build_card(spec, tmp_path)
        except Exception:  # without modules.json the kind may refuse too; the warning comes first either way
            pass
    assert any(
        w.startswith("warning: modules.json has role 'extra', but sentence-transformers loads it")
        for w in warnings_of(caplog)
    ), warnings_of(caplog)


def test_a_file_the_kind_s_library_does_not_read_stays_a_quiet_extra(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A GGUF release with the source model's config.json beside it: llama.cpp reads the .gguf file alone."""
    folder = folder_of("gguf", tmp_path)
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}')
    spec = init_spec(folder, tmp_path)
    as_extra(spec, "config.json")
    with caplog.at_level(logging.WARNING):
        build_card(spec, tmp_path)
    assert not [w for w in warnings_of(caplog) if "has role 'extra'" in w], warnings_of(caplog)


@pytest.mark.parametrize(
    ("fixture", "name", "role"),
    [
        ("llama", "tokenizer.json", "tokenizer"),
        ("llama", "chat_template.jinja", "tokenizer"),
        ("llama", "model.safetensors", "weights"),
        ("llava", "processor_config.json", "processor"),
        ("whisper", "preprocessor_config.json", "processor"),
        ("llama-pickle", "pytorch_model.bin.index.json", "weights-index"),
        ("llama-pickle", "pytorch_model-00001-of-00003.bin", "weights"),
        ("sentence-transformers", "modules.json", "sentence-transformers-config"),
    ],
)
def test_the_libraries_rules_name_each_file_they_load(fixture: str, name: str, role: str) -> None:
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "libraries" / fixture
    found = library_role(folder / name, name)
    assert found is not None and found[0] == role, found


def test_a_file_no_library_loads_has_no_role(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("training notes")
    (tmp_path / "model.safetensors").write_bytes(b"not a header")  # the name alone is not enough
    assert library_role(tmp_path / "notes.txt") is None
    assert library_role(tmp_path / "model.safetensors") is None
