"""The card's files table is bounded whatever the file count; every file stays counted in it."""

from __future__ import annotations

import re

from release.card.evidence import FileRow
from release.card.facts import FILE_ROWS, files_table


def _counted(rows: tuple[tuple[str, ...], ...]) -> tuple[int, int]:
    """(files, bytes) the rows account for: a file row is one file, a summary row says how many."""
    files = sum(
        int(m.group(1).replace(",", "")) if (m := re.search(r"([\d,]+) (?:more )?files", r[0])) else 1 for r in rows
    )
    return files, sum(int(r[1].removesuffix(" B").replace(",", "")) for r in rows)


def test_a_small_release_lists_every_file() -> None:
    rows = files_table([FileRow(f"data/{i}.bin", 10, "a" * 64, "extra") for i in range(FILE_ROWS)]).rows
    assert len(rows) == FILE_ROWS and rows[0][0] == "[data/0.bin](data/0.bin)"


def test_large_releases_are_summarised_by_folder_and_bounded() -> None:
    tiny = [FileRow(f"tiny/{k:02}/{i:05}.bin", 1000, "a" * 64, "extra") for k in range(10) for i in range(400)]
    weights = FileRow("model.safetensors", 7, "b" * 64, "weights", "c" * 32)
    rows = files_table([weights, *tiny]).rows
    assert rows[0][:3] == ("[model.safetensors](model.safetensors)", "7 B", "`bbbbbbbbbbbb`")
    assert rows[1] == ("tiny/00/ (400 files)", "400,000 B", "in SHA256SUMS", "in SHA256SUMS", "extra")
    assert len(rows) == 11 and _counted(rows) == (4_001, 4_000_007)
    flat = [FileRow(f"{i:06}.bin", 1, "a" * 64, "extra") for i in range(3 * FILE_ROWS)]  # no folder to summarise by
    rows = files_table(flat).rows
    assert len(rows) == FILE_ROWS and _counted(rows) == (3 * FILE_ROWS, 3 * FILE_ROWS)
    many_folders = [FileRow(f"d{i:04}/{j}.bin", 1, "a" * 64, "extra") for i in range(2 * FILE_ROWS) for j in range(3)]
    rows = files_table(many_folders).rows
    assert len(rows) == FILE_ROWS and _counted(rows) == (6 * FILE_ROWS, 6 * FILE_ROWS)
