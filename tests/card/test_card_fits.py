"""The flagship card (issue 40): its code blocks fit a code box (no line past CODE_WIDTH), the vLLM command
still runs as one shell command with valid JSON, and each serving setting is printed once."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from markdown_it import MarkdownIt

from release.card.text import CODE_WIDTH


def code_blocks(card: str) -> list[str]:
    return [t.content for t in MarkdownIt("commonmark").parse(card) if t.type == "fence"]


def test_every_code_line_of_the_flagship_card_fits(built: Path) -> None:
    card = (built / "README.md").read_text("utf-8")
    long = [line for block in code_blocks(card) for line in block.splitlines() if len(line) > CODE_WIDTH]
    assert long == []


def test_the_wrapped_vllm_command_is_one_command_with_valid_json(built: Path) -> None:
    card = (built / "README.md").read_text("utf-8")
    (serve,) = [b for b in code_blocks(card) if b.startswith("vllm serve")]
    words = shlex.split(serve.replace("\\\n", " "))
    assert words[:3] == ["vllm", "serve", "zai-org/GLM-5.3-Flash"] and words[3] == "--speculative-config"
    assert json.loads(words[4]) == {
        "method": "dflash",
        "model": "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark",
        "num_speculative_tokens": 7,
        "revision": "v5",
    }


def test_the_speculative_config_is_printed_once_in_serving_config(built: Path) -> None:
    card = (built / "README.md").read_text("utf-8")
    serving = card.split("\n## Serving config\n", 1)[1].split("\n## ", 1)[0]
    assert serving.count("num_speculative_tokens") == 1  # the flags table's row, no second code block
