"""The one JSON reader: its size and depth bounds, strict mode, and the errors callers word as before."""

from __future__ import annotations

import json
import time
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from release.checks.common import read_json
from release.errors import CheckFailed
from release.util import jsonio
from release.util.jsonio import StreamedList, json_blocks
from tests.helpers import write_file


def test_a_file_over_the_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = write_file(tmp_path / "big.json", b"[" + b"0," * 1000 + b"0]")
    with pytest.raises(jsonio.TooLarge) as exc:
        jsonio.read_json(big, max_bytes=100)
    assert exc.value.size == big.stat().st_size and exc.value.limit == 100
    assert jsonio.read_json(big, max_bytes=big.stat().st_size) == [0] * 1001


def test_a_file_growing_while_it_is_read_is_refused_at_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat said small; the bytes arriving say otherwise (a FIFO, a file still being written)."""
    path = write_file(tmp_path / "growing.json", b"[" + b"1," * 5000 + b"1]")
    real = jsonio.os.fstat

    class Small:
        def __init__(self, st: object) -> None:
            self.st_size = 10

    monkeypatch.setattr(jsonio.os, "fstat", lambda fd: Small(real(fd)))
    monkeypatch.setattr(jsonio, "CHUNK", 64)
    with pytest.raises(jsonio.TooLarge) as exc:
        jsonio.read_bounded(path, max_bytes=1000)
    assert exc.value.size == 1001  # stopped one byte past the bound, not at the end of the file


def test_nesting_past_the_bound_is_refused_before_the_parser_recurses() -> None:
    deep = "[" * (jsonio.MAX_DEPTH + 1) + "]" * (jsonio.MAX_DEPTH + 1)
    with pytest.raises(jsonio.TooDeep):
        jsonio.parse(deep)
    assert isinstance(jsonio.TooDeep("x"), RecursionError)  # callers that caught Python's own limit still do
    at_bound = "[" * jsonio.MAX_DEPTH + "]" * jsonio.MAX_DEPTH
    assert jsonio.parse(at_bound) is not None


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps({"prompt": "[" * 5000 + '\\"{' * 3000, "list": [[1], [2]]})
    assert jsonio.parse(text)["list"] == [[1], [2]]
    wide = json.dumps([[i] for i in range(20_000)])  # many openings, never deep
    assert len(jsonio.parse(wide)) == 20_000


def test_strict_mode_refuses_constants_and_repeated_keys() -> None:
    with pytest.raises(ValueError, match="holds NaN, which is not a JSON number"):
        jsonio.parse('{"a": NaN}', strict=True)
    with pytest.raises(ValueError, match="key 'a' appears twice"):
        jsonio.parse('{"a": 1, "a": 2}', strict=True)
    assert jsonio.parse('{"a": 1, "a": 2}') == {"a": 2}
    assert str(jsonio.parse("NaN")) == "nan"


def test_bytes_are_utf8_unless_the_encoding_is_detected() -> None:
    utf16 = '{"a": 1}'.encode("utf-16")
    with pytest.raises(UnicodeDecodeError):
        jsonio.parse(utf16)
    assert jsonio.parse(utf16, detect_encoding=True) == {"a": 1}


def test_the_loose_reader_returns_none_for_anything_unreadable(tmp_path: Path) -> None:
    assert jsonio.read_json_or_none(tmp_path / "absent.json") is None
    assert jsonio.read_json_or_none(write_file(tmp_path / "bad.json", "{")) is None
    assert jsonio.read_json_or_none(write_file(tmp_path / "latin.json", b'"\xff"')) is None
    assert jsonio.read_json_or_none(write_file(tmp_path / "deep.json", "[" * 2000 + "]" * 2000)) is None
    assert jsonio.read_json_or_none(write_file(tmp_path / "ok.json", '{"a": [1]}'), max_bytes=5) is None
    assert jsonio.read_json_or_none(tmp_path / "ok.json") == {"a": [1]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff{}", "is not UTF-8 text"),
        (b'{"a": }', "is not valid JSON: Expecting value at line 1 column 7"),
        (b'{"a": Infinity}', "holds Infinity, which is not a JSON number; write a finite number or null"),
        (b"[" * 3000 + b"]" * 3000, "nests arrays or objects too deeply to read; flatten it"),
    ],
)
def test_the_checks_word_each_problem_as_before(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(CheckFailed) as exc:
        read_json(write_file(tmp_path / "x.json", content), "x.json")
    assert [p.message for p in exc.value.problems] == [message]


def test_a_large_manifest_is_scanned_in_a_fraction_of_its_parse(tmp_path: Path) -> None:
    """The depth scan runs at C speed: a 100,000-file release.json costs little on top of json itself."""
    doc = json.dumps(
        {"files": [{"path_in_repo": f"shard-{i:06d}/[x].bin", "sha256": "0" * 64, "size": i} for i in range(100_000)]}
    )
    data = doc.encode()
    started = time.perf_counter()
    json.loads(data)
    parse_time = time.perf_counter() - started
    started = time.perf_counter()
    jsonio.check_depth(data)
    assert time.perf_counter() - started < max(2 * parse_time, 0.5)


def _streamed(items: list[Any]) -> StreamedList:
    return StreamedList(len(items), lambda: iter(items))


FLAT = [
    {
        "path_in_repo": "données/été.bin",
        "size": 7,
        "sha256": "ab" * 32,
        "role": "extra",
        "generated": True,
        "md5": None,
        "z": False,
    },
    {"b": 'x\ny\t"\\', "a": 10**30},
]
ODD = [{}, {"k": 1.5}, {"k": [1, {"n": None}]}, "text", 3, None, [], {1: "int key"}, {"k": IntEnum("E", "A").A}]


@pytest.mark.parametrize(
    "encoder",
    [
        json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False),  # release.json's
        json.JSONEncoder(indent=2, sort_keys=True),  # the CLI's --format json
        json.JSONEncoder(indent="\t"),
        json.JSONEncoder(indent=0, separators=(";", "= ")),
        json.JSONEncoder(),
    ],
    ids=["release.json", "cli", "tab", "odd-separators", "no-indent"],
)
@pytest.mark.parametrize("items", [FLAT, ODD, [], FLAT * 300], ids=["flat", "odd", "empty", "many"])
def test_streamed_lists_are_written_as_the_encoder_writes_the_list(encoder: json.JSONEncoder, items: list[Any]) -> None:
    """json_blocks gives the encoder's own text, cut at line ends, wherever a streamed list lies."""
    for document in (
        {"files": _streamed(items), "after": [1, {"x": _streamed(items)}], "before": "v"},
        _streamed(items),
        [_streamed(items), "tail"],
    ):
        expected = encoder.encode(_plain(document))
        blocks = list(json_blocks(encoder, document))
        assert "".join(blocks) == expected
        assert all(b.startswith("\n") for b in blocks[1:])  # cut at line ends


def _plain(value: Any) -> Any:
    if isinstance(value, StreamedList):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
