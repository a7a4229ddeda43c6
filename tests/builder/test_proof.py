"""The load proof without the library (release/builder/proof.py): build goes on, says the load was not proven and how
to prove it, records why in release.json, and the card claims nothing. (With the library: tests/libraries.)"""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

from release.builder.proof import loading_code
from tests.kinds.transformers.test_library_written import build_card, folder_of, init_spec


def test_without_the_library_the_load_is_not_proven_and_the_card_claims_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is importable here: the proof runs (tests/libraries/test_load_proof.py)")
    monkeypatch.delenv("LIBRARY_PYTHON", raising=False)
    with caplog.at_level(logging.WARNING):
        dist, card, _ = build_card(init_spec(folder_of("llama", tmp_path), tmp_path), tmp_path)
    record = json.loads((dist / "release.json").read_text("utf-8"))["proof"]
    assert record["proven"] is False
    assert "transformers is not importable here" in record["why"] and "build --prove-with PYTHON" in record["why"]
    assert any("the load was not proven" in r.getMessage() for r in caplog.records)
    assert "Loaded by the code below" not in card and "before publishing" not in card


def test_the_loading_code_is_the_card_s_block_up_to_the_model() -> None:
    block = (
        "```python\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
        'tokenizer = AutoTokenizer.from_pretrained("o/m", revision="v1")\n'
        'model = AutoModelForCausalLM.from_pretrained("o/m", revision="v1")\n\n'
        "outputs = model.generate(**inputs)\n```\n\nThis model ships its own code."
    )
    assert loading_code(block).splitlines()[-1] == 'model = AutoModelForCausalLM.from_pretrained("o/m", revision="v1")'
    assert "generate" not in loading_code(block)


def test_a_kind_names_the_line_that_ends_its_load() -> None:
    """A diffusers LoRA's block binds no `model`: its load ends at load_lora_weights, before the generation."""
    from release.kinds import kind_named

    block = (
        '```python\nfrom diffusers import DiffusionPipeline\n\npipe = DiffusionPipeline.from_pretrained("b/sd")\n'
        'pipe.load_lora_weights("o/l", weight_name="pytorch_lora_weights.safetensors", revision="v1")\n'
        'image = pipe("a photo").images[0]\nimage.save("image.png")\n```\n'
    )
    lora = kind_named("diffusers-lora").load_proof
    assert lora is not None
    assert loading_code(block, lora.loaded_by).splitlines()[-1].startswith("pipe.load_lora_weights(")
    assert "image" not in loading_code(block, lora.loaded_by)
    assert "image.save" in loading_code(block)  # no `model =`: the default runs the whole block


INTERRUPTED_PROOF = """
import sys
from pathlib import Path
from release.builder.proof import run_load
code = "import os, time\\nopen(%r, 'w').write(str(os.getpid()))\\ntime.sleep(60)\\n" % sys.argv[1]
run_load(sys.executable, "json", code, Path(sys.argv[2]), meta=False, trust_remote_code=False)
"""


def test_ctrl_c_during_the_proof_ends_its_child(tmp_path: Path) -> None:
    """The proof's child runs in a session of its own (the time bound kills its group): Ctrl-C in build must end it
    too, not leave it running with nobody waiting (before: it went on as an orphan)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pid_file, folder = tmp_path / "child.pid", tmp_path / "release"
    folder.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", INTERRUPTED_PROOF, str(pid_file), str(folder)])
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    parent.send_signal(signal.SIGINT)
    assert parent.wait(timeout=30) != 0
    time.sleep(0.2)
    try:
        os.kill(child, 0)
    except ProcessLookupError:
        return
    os.kill(child, signal.SIGKILL)
    raise AssertionError("the proof's child outlived the interrupted build")
