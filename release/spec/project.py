"""Where a project lives and where hf-release's own files are, for an installed tool run from any folder.

The project root is found the way git finds `.git`: the nearest folder, from the current one upward,
that holds `artifacts/`. The default card templates ship inside the package as `release.templates`
(the wheel maps the repo's top-level `templates/` folder there).
"""

from __future__ import annotations

from pathlib import Path

from release.errors import InputError

ARTIFACTS = "artifacts"
DIST = "dist"
_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"  # a source checkout run without install


def find_root(start: Path, given: Path | None = None) -> Path | None:
    """`--root` when given, else the nearest folder from `start` upward holding `artifacts/`, else None."""
    if given is not None:
        if not given.is_dir():
            raise InputError("--root is not a folder; pass the folder holding artifacts/", file=str(given))
        return given.resolve()
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ARTIFACTS).is_dir():
            return folder
    return None


def project_root(given: Path | None = None, *, start: Path | None = None) -> Path:
    """The project root; with no `artifacts/` anywhere upward, the current folder (where init creates it)."""
    here = start if start is not None else Path.cwd()
    return find_root(here, given) or here.resolve()


def default_templates() -> Path:
    """The folder of the card templates shipped with hf-release, as a path Jinja can load from."""
    from importlib import resources  # only build and card render a card: every other command skips this import

    try:
        folder = resources.files("release.templates")
    except ModuleNotFoundError:  # running from a source checkout that was never installed
        return _SOURCE_TEMPLATES
    return Path(str(folder.joinpath("modelcard.md.j2"))).parent
