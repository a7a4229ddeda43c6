"""Expected digests in the spec: a full sha256 or a hex prefix (the seed's md5), compared after hashing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.checks.helpers import check_problems
from tests.helpers import EXAMPLE, edit

WEIGHTS = EXAMPLE / "model.safetensors"
SHA256 = hashlib.sha256(WEIGHTS.read_bytes()).hexdigest()
MD5 = hashlib.md5(WEIGHTS.read_bytes()).hexdigest()
WEIGHTS_ENTRY = 'digests = ["md5"]\n'


def expect(spec: Path, table: str, *, keep_md5: bool = True) -> None:
    edit(spec, WEIGHTS_ENTRY, (WEIGHTS_ENTRY if keep_md5 else "") + f"expect = {{ {table} }}\n")


def flip(hex_digits: str) -> str:
    """The same digits with the last one changed: a near miss."""
    return hex_digits[:-1] + ("0" if hex_digits[-1] != "0" else "1")


@pytest.mark.parametrize(
    "table",
    [
        f'sha256 = "{SHA256[:6]}"',
        f'sha256 = "{SHA256}"',
        f'md5 = "{MD5[:12]}"',
        f'md5 = "{MD5}"',
        f'sha256 = "{SHA256[:16]}", md5 = "{MD5[:16]}"',
    ],
    ids=["sha256-prefix", "sha256-full", "md5-prefix", "md5-full", "both"],
)
def test_matching_digests_pass(example: Path, tmp_path: Path, table: str) -> None:
    expect(example, table)
    assert check_problems(example, tmp_path / "stage") == []


def test_sha256_prefix_mismatch(example: Path, tmp_path: Path) -> None:
    expect(example, f'sha256 = "{flip(SHA256[:12])}"')
    assert check_problems(example, tmp_path / "stage") == [
        f"model.safetensors: sha256 is {SHA256}, the spec expects {flip(SHA256[:12])}…; the file is not the one the "
        "spec names"
    ]


def test_full_sha256_mismatch_has_no_ellipsis(example: Path, tmp_path: Path) -> None:
    expect(example, f'sha256 = "{flip(SHA256)}"')
    assert check_problems(example, tmp_path / "stage") == [
        f"model.safetensors: sha256 is {SHA256}, the spec expects {flip(SHA256)}; the file is not the one the spec "
        "names"
    ]


def test_md5_prefix_mismatch(example: Path, tmp_path: Path) -> None:
    expect(example, 'md5 = "4a4fa6163e3f"')  # the real drafter's md5; the example ships a stand-in
    assert check_problems(example, tmp_path / "stage") == [
        f"model.safetensors: md5 is {MD5}, the spec expects 4a4fa6163e3f…; the file is not the one the spec names"
    ]


def test_md5_expected_without_md5_digests(example: Path, tmp_path: Path) -> None:
    expect(example, f'md5 = "{MD5[:12]}"', keep_md5=False)
    assert check_problems(example, tmp_path / "stage") == [
        "model.safetensors: expect.md5 is set but md5 was not computed; add 'md5' to digests"
    ]


def test_expected_digest_on_a_glob_applies_to_each_match(example: Path, tmp_path: Path) -> None:
    edit(
        example,
        'source = "glm53-v*.json"\nrole = "bench"\n',
        'source = "glm53-v*.json"\nrole = "bench"\nexpect = { sha256 = "000000" }\n',
    )
    problems = check_problems(example, tmp_path / "stage")
    assert len(problems) == len(list(EXAMPLE.glob("glm53-v*.json"))) == 8
    assert all(p.startswith("glm53-v") and "the spec expects 000000…" in p for p in problems)
