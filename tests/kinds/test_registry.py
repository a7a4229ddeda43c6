"""The kinds registry: one detection for init and build, a kind's modules loaded only for its releases,
nothing outside release/kinds/ naming the drafter, and no import cycle through the kinds or the card."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from release.detect import detect_kind as detect_folder_kind
from release.detect import scan
from release.kinds import detect_kind, kind_named
from tests.helpers import ROOT

RELEASE = ROOT / "release"
DRAFTER_MODULES = "release.kinds.dflash2"  # the drafter kind's own modules: dflash2_drafter, dflash2_inventory


@pytest.mark.parametrize(("config", "kind", "why"), [
    ({"dflash_config": {}}, "dflash2-drafter", "config.json has dflash_config"),
    ({"architectures": ["DFlash2DraftModel"]}, "dflash2-drafter", "config.json's architectures name DFlash2DraftModel"),
    ({"architectures": ["LlamaForCausalLM"]}, "transformers", "config.json of a transformers model"),
    (["not", "an", "object"], "transformers", "config.json of a transformers model"),
])
def test_init_and_build_detect_a_kind_alike(tmp_path: Path, config: object, kind: str, why: str) -> None:
    """init reads the folder's config.json, build the staged one: both ask the registry's one rule."""
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert detect_kind(config)[0].name == kind  # what build's select-kind step asks
    found, reason = detect_folder_kind(scan(tmp_path))
    assert (found.name, reason) == (kind, why)
    assert detect_kind(None)[1] == "no config.json" and detect_folder_kind([])[1] == "no config.json"


def test_a_kind_is_looked_up_by_the_names_the_spec_schema_allows() -> None:
    schema = json.loads((RELEASE / "schemas" / "spec.schema.json").read_text("utf-8"))
    names = schema["properties"]["release"]["properties"]["kind"]["enum"]
    assert [kind_named(name).name for name in names] == names
    assert kind_named("no-such-kind") is None and kind_named(["unhashable"]) is None


def test_nothing_outside_release_kinds_names_the_drafter() -> None:
    """`grep -rilE 'dflash|drafter' release/ --include=*.py` lists only files under release/kinds/."""
    naming = sorted(str(p.relative_to(ROOT)) for p in RELEASE.rglob("*.py")
                    if RELEASE / "kinds" not in p.parents and re.search(r"dflash|drafter", p.read_text("utf-8"), re.IGNORECASE))
    assert naming == []


CHILD = """
import sys
from pathlib import Path

from release.build import build
from release.spec import load_spec
from tests.kinds.helpers import make_release

root = Path(sys.argv[1])
build(load_spec(make_release(root / "artifacts" / "v1")), root / "dist")
print("\\n".join(sorted(sys.modules)))
"""


def test_building_a_transformers_release_imports_no_module_of_the_drafter(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert "release.kinds.transformers" in loaded and (tmp_path / "dist" / "v1" / "README.md").is_file()
    assert [m for m in loaded if m.startswith(DRAFTER_MODULES)] == []


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The release modules a file imports anywhere in it: at the top, under TYPE_CHECKING, inside functions."""
    package = _module(path) if path.name == "__init__.py" else _module(path).rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            found |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
    return found & modules


def test_no_import_cycle_runs_through_the_kinds_or_the_card() -> None:
    files = {_module(p): p for p in RELEASE.rglob("*.py")}
    graph = {module: _imports(path, set(files)) - {module} for module, path in files.items()}

    def cycle_from(start: str) -> list[str] | None:
        stack, seen = [(start, [start])], set()
        while stack:
            module, path = stack.pop()
            for target in sorted(graph[module]):
                if target == start:
                    return [*path, start]
                if target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
        return None

    watched = sorted(m for m in files if m.startswith(("release.kinds", "release.card")))
    assert [c for c in map(cycle_from, watched) if c] == []
