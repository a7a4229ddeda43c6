"""Version names and their order.

A version is also the Hub tag and a folder name (artifacts/VERSION, dist/VERSION), so it must be a
valid git tag name (the rules of `git check-ref-format`), one path component (no `/`), and a tag the Hub
accepts: `v5`, `1.0.0` and `2026-11-30` alike.

The Hub accepts fewer tag names than git does. huggingface_hub checks none (`HfApi.create_tag` sends the name as given,
in the JSON body of `POST /api/{type}s/{repo}/tag/{revision}`; huggingface_hub 2.4 hf_api.py) and the Hub's
documentation states no rule for them; the Hub answered 400 to `v1#rc` and to names holding `;`, `$(…)`, a backtick,
`&`, `|`, `!`, `{}`, `<>` or `'` (issue 23's review, against huggingface.co), after the commit had landed on main. So a
version holds only the characters of the tags in huggingface_hub's documented examples (`v1.0`, `v1.1.a1`) and of git's
usual release tags — ASCII letters, digits, `.`, `_` and `-` — which never need quoting in a shell or a URL either.
Versions sort naturally, digits as numbers: v5 < v6 < v10, 1.2.0 < 1.10.0; the previous version of a release is the
greatest one sorting before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

MAX_LENGTH = 128
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\/]")
_HUB_TAG_CHARACTER = re.compile(r"[A-Za-z0-9._-]")
_DIGITS = re.compile(r"(\d+)")


def version_problem(version: str) -> str | None:
    """Why `version` cannot name a release (a git tag and a folder), or None when it can."""
    if not version:
        return "is empty"
    if len(version) > MAX_LENGTH:
        return f"is longer than {MAX_LENGTH} characters"
    bad = _FORBIDDEN.search(version)
    if bad:
        shown = repr(bad.group()) if bad.group().isprintable() and bad.group() != " " else f"U+{ord(bad.group()):04X}"
        return f"contains {shown}, which a git tag or a folder name cannot hold"
    odd = next((c for c in version if not _HUB_TAG_CHARACTER.fullmatch(c)), None)
    if odd is not None:
        shown = repr(odd) if odd.isprintable() else f"U+{ord(odd):04X}"
        return (
            f"contains {shown}: the Hub refuses it in a tag (hf-release's rule: ASCII letters, digits, "
            "'.', '_' and '-')"
        )
    if version.startswith((".", "-")):
        return "starts with '.' or '-'"
    if version.endswith((".", ".lock")):
        return "ends with '.' or '.lock', which git refuses in a tag"
    if ".." in version or "@{" in version or version == "@":
        return "contains '..' or '@{' (or is '@'), which git refuses in a tag"
    return None


def version_key(version: str) -> tuple[object, ...]:
    """Natural sort key: text compared as text, digit runs as numbers (v5 < v10, 1.2.0 < 1.10.0)."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(version)))


def sort_versions(versions: Iterable[str]) -> list[str]:
    return sorted(versions, key=version_key)


def previous_version(version: str, versions: Iterable[str]) -> str | None:
    """The greatest version sorting before `version`, or None when it is the first."""
    earlier = [v for v in versions if version_key(v) < version_key(version)]
    return max(earlier, key=version_key) if earlier else None


def versions_under(folder: Path, marker: str) -> list[str]:
    """The versions with a `marker` file (release.toml under artifacts/, release.json under dist/), in order."""
    if not folder.is_dir():
        return []
    return sort_versions(p.name for p in folder.iterdir() if (p / marker).is_file() and version_problem(p.name) is None)


# Where a card presents a version as the release itself: its title, a revision to pin or download.
_TITLE = re.compile(r"^#\s+(.*)$")
_REVISION = re.compile(r"""(?:["']?revision["']?\s*[=:]\s*["'`]|Pin the revision:\s*`)([^"'`\s]+)""")


def presented_versions(card: str, version: str, known: Iterable[str]) -> list[tuple[int, str]]:
    """(line, message) for each place the card presents another known version as this release: a version
    in the title, or a revision to pin/download that is not `version`. Prose about other versions
    ("the v4 evidence") is left alone: only the title and revisions claim to be this release."""
    others = [v for v in known if v != version]
    problems = []
    for number, line in enumerate(card.splitlines(), start=1):
        title = _TITLE.match(line)
        if title:
            named = [v for v in others if re.search(rf"(?<![\w.-]){re.escape(v)}(?![\w-]|\.\w)", title.group(1))]
            problems += [(number, f"the title names {v}, but this release is {version}") for v in named]
        problems += [
            (number, f"the revision to use is {found}, but this release is {version}")
            for found in _REVISION.findall(line)
            if found != version and found in others
        ]
    return problems
