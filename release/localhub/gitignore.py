"""Which paths a repo's `.gitignore` drops from a commit (the Hub answers `shouldIgnore` in preupload).

Matching is git's own wildmatch rules, through `pathspec` rather than by hand.
"""

from __future__ import annotations

from collections.abc import Iterable

import pathspec

MAX_GITIGNORE = 1024 * 1024  # bytes of .gitignore read; a longer one is refused


def ignored_paths(gitignore: str | None, paths: Iterable[str]) -> set[str]:
    """The paths the `.gitignore` content ignores (none without one); `.gitignore` itself never is."""
    if not gitignore:
        return set()
    spec = pathspec.GitIgnoreSpec.from_lines(gitignore.splitlines())
    return {path for path in paths if path != ".gitignore" and spec.match_file(path)}
