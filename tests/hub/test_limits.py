"""The Hub's documented limits: an error past a hard one, a warning naming the fix past a recommendation."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from release.builder import build
from release.errors import CheckFailed
from release.hub.limits import GB, hub_limits
from release.spec import load_spec
from tests.helpers import TOKEN, edit, local_hub


def messages(problems: list) -> list[str]:
    return [f"{p.file}: {p.message}" for p in problems]


def test_a_small_release_is_within_every_limit() -> None:
    assert hub_limits([("model.safetensors", 5 * GB), ("config.json", 1000)]) == ([], [])


def test_file_size_hard_limit_and_recommendation() -> None:
    errors, warnings = hub_limits([("huge.bin", 50 * GB + 1), ("big.bin", 20 * GB + 1), ("ok.bin", 20 * GB)])
    assert [p.file for p in errors] == ["huge.bin"] and "refuses files over 50 GB" in errors[0].message
    assert [p.file for p in warnings] == ["big.bin"] and "shard it" in warnings[0].message


def test_entries_per_folder_count_files_and_subfolders() -> None:
    files = [(f"data/{i:05}.bin", 1) for i in range(9_999)] + [("data/sub/x.bin", 1)]
    _, warnings = hub_limits(files, repo_id="o/r")
    assert any(
        w.file == "o/r:data/" and "10,000 entries" in w.message and "subfolders" in w.message for w in warnings
    ), messages(warnings)
    _, fewer = hub_limits(files[:-1], repo_id="o/r")
    assert not any("entries" in w.message for w in fewer), messages(fewer)


def test_files_per_repo_and_per_commit() -> None:
    _, many = hub_limits([(f"d{i // 5000}/{i}", 1) for i in range(100_000)], repo_id="o/r")
    assert [w.file for w in many] == ["o/r"] and "100,000" in many[0].message and "merge small files" in many[0].message
    _, some = hub_limits([(f"f{i}", 1) for i in range(101)], repo_id="o/r")
    assert len(some) == 1 and "one atomic commit" in some[0].message
    assert hub_limits([(f"f{i}", 1) for i in range(100)]) == ([], [])


def test_the_commit_limits_huggingface_hub_documents() -> None:
    """25,000 LFS files and 1 GB of regular files a commit: warned about, since the Hub decides which is which."""
    _, lfs = hub_limits([(f"d{i // 5000}/{i}.bin", 1) for i in range(25_001)], repo_id="o/r")
    assert [w.file for w in lfs] == ["o/r"] and "25,000 LFS files" in lfs[0].message, messages(lfs)
    _, fewer = hub_limits([(f"d{i // 5000}/{i}.bin", 1) for i in range(25_000)], repo_id="o/r")
    assert not any("LFS files" in w.message for w in fewer), messages(fewer)
    small = 10 * 1024 * 1024 - 1
    _, inline = hub_limits([(f"f{i}.json", small) for i in range(96)], repo_id="o/r")
    assert [w.file for w in inline] == ["o/r"] and "1.0 GB of files under 10 MiB" in inline[0].message, messages(inline)
    assert hub_limits([(f"f{i}.json", small) for i in range(95)]) == ([], [])
    assert hub_limits([(f"f{i}.bin", small + 1) for i in range(99)]) == ([], [])  # LFS by size: not in the commit


def test_build_refuses_a_file_over_50_gb_before_hashing(example: Path, tmp_path: Path) -> None:
    with open(example.parent / "huge.bin", "wb") as f:
        f.truncate(50 * GB + 1)  # sparse: no disk used, and hashing it would take a minute
    edit(
        example,
        '[[files]]\nsource = "LICENSE"',
        '[[files]]\nsource = "huge.bin"\nrole = "extra"\n\n[[files]]\nsource = "LICENSE"',
    )
    with pytest.raises(CheckFailed) as failed:
        build(load_spec(example), tmp_path / "dist")
    assert [p.file for p in failed.value.problems] == ["huge.bin"], failed.value.problems
    assert not (tmp_path / "dist" / "v5").exists()


def test_push_dry_run_warns_past_the_commit_recommendation(
    example: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from release.publish.push import PushOptions, push

    many = example.parent / "many"
    many.mkdir()
    for i in range(100):
        (many / f"{i:03}.txt").write_text(f"row {i}\n")
    edit(
        example,
        '[[files]]\nsource = "LICENSE"',
        '[[files]]\nsource = "many/*.txt"\npath_in_repo = "many/"\nrole = "extra"\n\n[[files]]\nsource = "LICENSE"',
    )
    with caplog.at_level(logging.WARNING, logger="release.hub.limits"):
        dist = build(load_spec(example), tmp_path / "dist").dist
        at_build = [r.getMessage() for r in caplog.records if "one atomic commit" in r.getMessage()]  # build warns
        caplog.clear()
        with local_hub(tmp_path / "hub") as hub:
            result = push(dist, PushOptions(endpoint=hub.url, token=TOKEN, dry_run=True))
    assert result.commit is None and len(result.plan.add) > 100
    assert len(result.plan.warnings) == 1 and "one atomic commit" in result.plan.warnings[0]
    assert result.plan.as_dict()["warnings"] == result.plan.warnings
    at_push = [
        r.getMessage() for r in caplog.records if "one atomic commit" in r.getMessage()
    ]  # …and so does the dry run
    # both count the commit push sends: the 100 + 13 files from the spec, the card, the two charts, release.json,
    # SHA256SUMS
    assert at_build == at_push and len(at_push) == 1 and "is 118 files in one commit" in at_push[0], (at_build, at_push)


@pytest.mark.parametrize("count", [44, 45])
def test_a_name_of_four_byte_characters_is_measured_in_bytes_past_the_fast_path(count: int) -> None:
    """path_refusal skips paths too short to cross either bound even at 4 UTF-8 bytes a character (44 of them);
    45 such characters are 180 bytes, one name over the 179 allowed."""
    from release.hub.limits import MAX_NAME_BYTES, path_refusal

    name = "\U0001f600" * count
    assert (path_refusal(name) is None) == (4 * count <= MAX_NAME_BYTES)
