"""A first release's card (issue 40): no "Changes" section (there was nothing before), the line "First release"
under the files instead; a later version keeps its "Changes since vN" section."""

from __future__ import annotations

from pathlib import Path

from release.verify import verify_staged


def test_a_first_release_has_no_changes_section_but_says_first_release(built: Path) -> None:
    card = (built / "README.md").read_text("utf-8")
    assert "\n## Changes" not in card
    files = card.split("\n## Files\n", 1)[1].split("\n## ", 1)[0]
    assert files.rstrip().endswith("**First release:** nothing to compare with")
    verify_staged(built)
