"""Build provenance (issue 40): the release workflow's publish job attests SHA256SUMS and release.json with
actions/attest-build-provenance (pinned, with the only attestations: write), and the card gives the
`gh attestation verify` commands when the spec declares [card.attestation] — the same for a local and a CI build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from release.card.verify_commands import attestation_commands
from tests.helpers import edit

RELEASE = Path(__file__).parents[2] / ".github" / "workflows" / "release.yml"
ATTEST = "actions/attest-build-provenance@a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32"  # v4.1.0


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return yaml.safe_load(RELEASE.read_text())


def test_the_publish_job_attests_sums_and_manifest_with_the_pinned_action(workflow: dict[str, Any]) -> None:
    publish = workflow["jobs"]["publish"]
    (step,) = [s for s in publish["steps"] if s.get("id") == "attest"]
    assert step["uses"] == ATTEST and "# v4.1.0" in RELEASE.read_text()
    assert step["with"]["subject-path"].splitlines() == [
        "${{ env.STAGING }}/${{ env.RELEASE_VERSION }}/SHA256SUMS",
        "${{ env.STAGING }}/${{ env.RELEASE_VERSION }}/release.json",
    ]
    assert "NEEDS_GITHUB" in step["env"]  # GitHub's service: the local run of the workflow skips it
    ids = [s.get("id") for s in publish["steps"]]
    assert ids.index("check-handover") < ids.index("attest") < ids.index("push")  # what is attested was checked


def test_only_the_publish_job_may_write_attestations_and_mint_a_token(workflow: dict[str, Any]) -> None:
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        granted = {k for k, v in job.get("permissions", {}).items() if v == "write"}
        assert granted == ({"id-token", "attestations"} if name == "publish" else set()), name


def test_the_card_gives_the_gh_attestation_commands_when_the_spec_declares_them(
    example: Path, build_example: Any
) -> None:
    plain = (build_example() / "README.md").read_text()
    assert "gh attestation" not in plain  # no declaration: no promise
    edit(example, "[card.license]", '[card.attestation]\nrepository = "spark-lab/releases"\n\n[card.license]')
    card = (build_example() / "README.md").read_text()
    section = card.split("\n## Verify this release\n", 1)[1].split("\n## ", 1)[0]
    folder = "GLM-5.3-Flash-DFlash2-TP4-Spark-v5"
    assert (
        "```bash\n"
        f"gh attestation verify {folder}/SHA256SUMS --repo spark-lab/releases\n"
        f"gh attestation verify {folder}/release.json --repo spark-lab/releases\n"
        "```"
    ) in section
    assert "`spark-lab/releases` attested the build provenance" in section


def test_the_commands_are_quoted_for_the_shell() -> None:
    assert attestation_commands("o/m", "v1$(x)", "a/b") == [
        "gh attestation verify 'm-v1$(x)/SHA256SUMS' --repo a/b",
        "gh attestation verify 'm-v1$(x)/release.json' --repo a/b",
    ]
