"""What one push carries from its preflight to its apply: the options, the Hub client, the release's files as
release.json has them (wanted), what the Hub holds (present), the plan, and every problem found on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from release.errors import Problem, ReleaseError
from release.hub.client import HubClient
from release.pipeline import StepResult
from release.publish.files import Expected
from release.publish.plan import Present, PushPlan
from release.publish.upload_meter import UploadMeter
from release.staged import StagedRelease
from release.staged.manifest import Manifest


@dataclass(frozen=True)
class PushOptions:
    endpoint: str | None = None
    token: str | None = field(default=None, repr=False)
    dry_run: bool = False
    force_tag: bool = False
    keep_extra: bool = False
    delete_extra: bool = False  # delete files on main that no earlier release.json listed (else refused)
    create_pr: bool = False
    private: bool | None = None
    overwrite_card: bool = False
    allow_older: bool = False  # let main go back to an older version than the one it holds
    allow_placeholder: bool = False  # publish a card that still holds init's placeholder (release/spec/placeholders.py)
    progress: bool = False
    message: str | None = None  # the author's words, before the generated list of changes
    # the version's spec (ROOT/artifacts/VERSION/release.toml): its sources are compared with the staging
    # (release/staged/sources.py); None: not compared (the Python API's push of a bare staging folder)
    spec: Path | None = None


@dataclass
class PushContext:
    staged: StagedRelease  # release.json and the bookkeeping files, read once
    options: PushOptions
    hub: HubClient
    wanted: dict[str, Expected]  # every path the release holds, as release.json says (files.release_paths)
    present: Present = field(default_factory=Present)  # what the Hub holds, as the remote-state step read it
    plan: PushPlan = field(init=False)  # set by the plan step, from `wanted` and `present` alone
    warnings: list[str] = field(default_factory=list)  # the Hub's recommendations this release crosses
    meter: UploadMeter = field(default_factory=UploadMeter)
    seen: dict[str, list[int]] = field(default_factory=dict)  # each staged file's stat when the preflight checked it
    refused: list[Problem] = field(default_factory=list)
    failed: list[ReleaseError] = field(default_factory=list)  # preflight problems that are not refusals
    log: list[tuple[str, StepResult]] = field(default_factory=list)

    @property
    def manifest(self) -> Manifest:
        return self.staged.manifest
