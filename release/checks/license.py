"""Check that the LICENSE file is the license the spec declares.

Common SPDX licenses are recognised from the full text by `identify` (pre-commit's file identifier:
the choosealicense.com texts, exact match or under 5% edit distance; milliseconds, no scancode).
The Hub's model licenses it does not know (llama3.x, gemma, openrail, cc-by-nc…) are recognised by
their distinctive headings, kept as data in schemas/license-headings.json. `other` is not checked
here (it needs a name and a link, which the card checks).
"""

from __future__ import annotations

import re
from pathlib import Path

from release.errors import Problem
from release.pipeline import Context, Done, Skipped, StepResult
from release.util.schemas import load_schema

MAX_LICENSE_BYTES = 1_000_000


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9+]+", " ", text.lower()).strip()


def headings() -> dict[str, list[str]]:
    return load_schema("license-headings.json")["headings"]


def recognised(path: Path) -> str | None:
    """The Hub id of the license text in `path` (lower-case SPDX id), or None when `identify` knows none."""
    from identify.identify import license_id

    found = license_id(str(path))
    return found.lower() if found else None


def identify_license(path: Path) -> str | None:
    """The Hub license id a LICENSE file reads as: by its full text, else by a distinctive heading (for `init`)."""
    if path.stat().st_size > MAX_LICENSE_BYTES:
        return None
    found = recognised(path)
    if found is not None:
        return found
    squashed = _squash(path.read_text("utf-8", errors="replace"))
    return next((hub_id for hub_id, hs in headings().items() if any(_squash(h) in squashed for h in hs)), None)


def license_problem(path: Path, label: str, declared: str) -> Problem | None:
    if declared == "other":
        return None
    if path.stat().st_size > MAX_LICENSE_BYTES:
        return Problem(label, f"is over {MAX_LICENSE_BYTES:,} bytes; a LICENSE is a text of a few pages")
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        return Problem(label, "is not UTF-8 text; save the license as UTF-8")
    found = recognised(path)
    squashed = _squash(text)
    named = [h for h in headings().get(declared, []) if _squash(h) in squashed]
    if found is not None and found != declared:
        return Problem(
            label,
            f"is the {found} license text, but the spec declares license id {declared!r}; set card.license.id = "
            f"{found!r} or ship the right LICENSE",
        )
    if found == declared or named:
        return None
    if declared in headings() or found is None and _knows(declared):
        other = next((hub_id for hub_id, hs in headings().items() if any(_squash(h) in squashed for h in hs)), None)
        hint = f" (it reads as {other})" if other else ""
        return Problem(
            label,
            f"does not read as the {declared} license the spec declares{hint}; ship its text or correct "
            "card.license.id",
        )
    return None  # an id hf-release has no text or heading for: nothing to compare


def _knows(hub_id: str) -> bool:
    from identify.vendor.licenses import LICENSES

    return any(spdx.lower() == hub_id for spdx, _ in LICENSES)


class CheckLicense:
    name = "check-license"

    def run(self, ctx: Context) -> StepResult:
        files = ctx.by_role("license")
        declared = (ctx.spec.card.get("license") or {}).get("id")
        if not files or not declared:
            return Skipped("no LICENSE file or no declared license id")
        found = [p for p in (license_problem(f.staged, f.path_in_repo, declared) for f in files) if p]
        ctx.problems.extend(found)
        return Done(f"LICENSE checked against license id {declared!r}: {len(found)} problem(s)")
