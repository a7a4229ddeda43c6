"""Plain helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "artifacts" / "v5"


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a file, failing loudly if `old` is not there (so a test cannot silently test nothing)."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


# What an install of hf-release reads from the checkout (pyproject maps templates/ into the package).
PACKAGE_SOURCES = ("pyproject.toml", "README.md", "release", "templates")


def copy_sources(dest: Path, names: tuple[str, ...] = PACKAGE_SOURCES) -> Path:
    """Copy parts of the checkout (never build in the checkout itself: setuptools writes build/ there)."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.exists():
            shutil.copy2(source, dest / name)
    return dest


def fresh_venv(path: Path) -> Path:
    """A new venv (made with --system-site-packages) that sees this venv's installed dependencies
    through a .pth line — but not hf-release itself, whose editable hook is a .pth the new venv
    does not process. So installing needs no registry; returns the venv's bin folder."""
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)], check=True)
    purelib = Path(subprocess.run([str(path / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    (purelib / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin"


def copy_as_version(spec: Path, version: str) -> Path:
    """The example's folder copied as another version, its version-bearing card text edited by hand
    (title, revision to pin, current bench label); returns the new spec."""
    import shutil

    folder = spec.parent.with_name(version)
    shutil.copytree(spec.parent, folder)
    new = folder / "release.toml"
    edit(new, 'version = "v5"', f'version = "{version}"')
    edit(new, "Champion Drafter (v5)", f"Champion Drafter ({version})")
    edit(new, "Pin the revision: `v5`", f"Pin the revision: `{version}`")
    edit(new, 'label = "v5"', f'label = "{version}"')
    return new
