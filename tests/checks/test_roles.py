"""The release's shape: at most one config/launcher/ledger/license, and weights need a config."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.checks.helpers import check_problems
from tests.helpers import edit


def test_example_roles_pass(example: Path, tmp_path: Path) -> None:
    assert check_problems(example, tmp_path / "stage") == []


def test_two_licenses(example: Path, tmp_path: Path) -> None:
    shutil.copy(example.parent / "LICENSE", example.parent / "LICENSE-2")
    example.write_text(example.read_text() + '\n[[files]]\nsource = "LICENSE-2"\nrole = "license"\n')
    assert check_problems(example, tmp_path / "stage") == [
        "release.toml: 2 files have role 'license' (LICENSE, LICENSE-2); give one (the others take role 'extra')"
    ]


def test_weights_without_config(example: Path, tmp_path: Path) -> None:
    """The drafter kind's weights need config.json (without one, the kind must be declared: nothing to
    detect it from)."""
    edit(example, 'source = "config.json"\nrole = "config"', 'source = "config.json"\nrole = "extra"')
    edit(example, 'version = "v5"\n', 'version = "v5"\nkind = "dflash2-drafter"\n')
    problems = check_problems(example, tmp_path / "stage")
    assert (
        "release.toml: a dflash2-drafter release with weights needs a file with role 'config'; add config.json"
        in problems
    )
    assert len(problems) == 1  # the launcher's block-size cross check needs a config, so it is skipped


def test_a_kind_role_in_a_release_of_another_kind(example: Path, tmp_path: Path) -> None:
    """adapter-config is the peft-adapter kind's role (release/kinds/registry.py): a drafter release cannot use it."""
    (example.parent / "notes.json").write_text("{}")
    example.write_text(example.read_text() + '\n[[files]]\nsource = "notes.json"\nrole = "adapter-config"\n')
    assert check_problems(example, tmp_path / "stage") == [
        "release.toml: notes.json has role 'adapter-config', a role of the peft-adapter kind, but this release is of "
        "the "
        "dflash2-drafter kind; set [release] kind = \"peft-adapter\" or give the file role 'extra'"
    ]
