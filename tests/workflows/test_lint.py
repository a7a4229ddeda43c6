"""Both workflows pass actionlint and zizmor, and each linter really fails on a broken copy of them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import edit
from tests.workflows.linters import WORKFLOWS, actionlint, describe, zizmor

OURS = sorted(WORKFLOWS.glob("*.yml"))


def test_both_workflows_are_there() -> None:
    assert {p.name for p in OURS} >= {"ci.yml", "release.yml"}


def test_actionlint_passes(actionlint_findings: list[dict[str, Any]]) -> None:
    findings = [f for f in actionlint_findings if Path(f["file"]) in OURS]
    assert not findings, describe(findings)


def test_zizmor_passes() -> None:
    findings = zizmor(*OURS)
    assert not findings, describe(findings)


# Each mutation breaks the real release workflow in one way a linter must catch.
CHECKOUT = "actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0"
MUTATIONS = {
    "unknown-key": ("        id: build\n", "        id: build\n        timeout: 5\n"),
    "bad-expression": ("${{ github.ref_name }} # the tag", "${{ github.ref_nam }} # the tag"),
    "untrusted-input": (
        'hf-release build "$RELEASE_VERSION"',
        'hf-release build "${{ github.event.head_commit.message }}"',
    ),
    "template-injection": ('hf-release build "$RELEASE_VERSION"', 'hf-release build "${{ github.ref_name }}"'),
    "unpinned-action": (CHECKOUT, "actions/checkout@v5"),
    "persisted-credentials": ("        with:\n          persist-credentials: false\n", ""),
    "excessive-permissions": (  # the publish job's block, its attestations line (issue 40) included
        "    permissions:\n      contents: read # check out the tagged commit\n      id-token: write # keyless "
        "Sigstore signing, the provenance attestation (and Hugging Face trusted publishing, if used)\n"
        "      attestations: write",
        "    permissions: write-all\n    # id-token: write, attestations: write",
    ),
}
CAUGHT_BY_ACTIONLINT = {"unknown-key": "syntax-check", "bad-expression": "expression", "untrusted-input": "expression"}
CAUGHT_BY_ZIZMOR = {
    "template-injection": "template-injection",
    "untrusted-input": "template-injection",
    "unpinned-action": "unpinned-uses",
    "persisted-credentials": "artipacked",
    "excessive-permissions": "excessive-permissions",
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One broken copy of release.yml per mutation, each in its own repo-shaped folder."""
    root = tmp_path_factory.mktemp("broken")
    copies = {}
    for name, (old, new) in MUTATIONS.items():
        path = root / name / ".github" / "workflows" / "release.yml"
        path.parent.mkdir(parents=True)
        shutil.copy(WORKFLOWS / "release.yml", path)
        edit(path, old, new)
        copies[name] = path
    return copies


@pytest.fixture(scope="module")
def actionlint_findings(broken: dict[str, Path]) -> list[dict[str, Any]]:
    """One actionlint run (it takes seconds to start) over our workflows and the broken copies."""
    return actionlint(*OURS, *(broken[name] for name in CAUGHT_BY_ACTIONLINT))


def test_actionlint_fails_on_broken_workflows(
    broken: dict[str, Path], actionlint_findings: list[dict[str, Any]]
) -> None:
    findings = actionlint_findings
    for name, kind in CAUGHT_BY_ACTIONLINT.items():
        mine = [f for f in findings if Path(f["file"]) == broken[name]]
        assert any(f["kind"] == kind for f in mine), f"actionlint missed {name}:\n{describe(findings)}"


@pytest.mark.parametrize("name", sorted(CAUGHT_BY_ZIZMOR))
def test_zizmor_fails_on_broken_workflows(broken: dict[str, Path], name: str) -> None:
    findings = zizmor(broken[name])
    assert any(f["ident"] == CAUGHT_BY_ZIZMOR[name] for f in findings), f"zizmor missed {name}:\n{describe(findings)}"
