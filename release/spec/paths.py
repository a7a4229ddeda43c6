"""What may be a path in a Hub repo: shared by collect (the spec's paths) and the manifest (release.json's)."""

from __future__ import annotations

import unicodedata


def folded(path: str) -> str:
    """The key under which two paths name one file on a case-insensitive filesystem (Windows, macOS) that also
    ignores Unicode normalization (macOS): `Café.json` in NFC and in NFD, `README.md` and `readme.MD`."""
    if path.isascii():  # already NFC, and casefold() is lower() for ASCII: most paths, at C speed
        return path.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def folders_of(path: str) -> list[str]:
    """The folders `path` lies in, outermost first: 'a/b/c.json' → ['a', 'a/b']."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def check_path_in_repo(path: str) -> str | None:
    """Why `path` cannot be a path in a Hub repo, or None when it can.

    Control characters would forge lines in SHA256SUMS; invisible formatting characters (bidi overrides,
    zero-width marks) make a name display as another; the Hub refuses backslashes.
    """
    if _plain(path):
        return None
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "is absolute; give a path relative to the repo root"
    if "\\" in path:
        return "contains a backslash; use '/' between folders"
    odd = (
        None
        if path.isascii() and path.isprintable()
        else next((c for c in path if unicodedata.category(c) in ("Cc", "Cf", "Cs")), None)
    )
    if odd is not None:
        kind = "a control character" if unicodedata.category(odd) == "Cc" else "an invisible formatting character"
        return f"contains {kind} (U+{ord(odd):04X}); rename the file with visible characters only"
    parts = path.split("/")
    if any(p in ("..", ".") for p in parts) or not path:
        return "contains '..' or '.'; give a plain path inside the repo"
    if any(p == "" for p in path.rstrip("/").split("/")):
        return "contains an empty folder name ('//')"
    if path.endswith("/"):
        return "ends in '/'; name the file itself (a folder ending in '/' is for a glob source)"
    if any(p.casefold() == ".git" for p in parts):  # every part is a name here: no '', '.' or '..' left
        return "points into .git"
    return None


def _plain(path: str) -> bool:
    """The usual path, accepted in a few calls at C speed (once per file of a release): printable ASCII, no
    backslash, no drive, no part that is empty or starts with '.' (so no '.', '..' or '.git')."""
    return (
        path.isascii()
        and path.isprintable()
        and path[:1] not in ("", "/", ".")
        and path[1:2] != ":"
        and "\\" not in path
        and "//" not in path
        and "/." not in path
        and not path.endswith("/")
    )
