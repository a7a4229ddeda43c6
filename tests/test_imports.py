"""No import circle in release/: every import counted, those under TYPE_CHECKING and inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT


def module_graph(package: Path, *, type_checking: bool = True) -> dict[str, set[str]]:
    """Each module of the package → the modules of the package it imports (a name imported from a package
    counts as its submodule when there is one); `type_checking=False` leaves out the imports under TYPE_CHECKING."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        tree = ast.parse(path.read_text("utf-8"))
        typed = (
            set()
            if type_checking
            else {
                id(n)
                for block in ast.walk(tree)
                if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
                for n in ast.walk(block)
            }
        )
        for node in ast.walk(tree):
            if id(node) in typed:
                continue
            if isinstance(node, ast.ImportFrom):
                base = (
                    ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
                    if node.level
                    else node.module or ""
                )
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_walk_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_in_release() -> None:
    assert circles(module_graph(ROOT / "release")) == []


# What each room of release/ may import at run time: the layers, lowest first. A kind's own folder
# (release/kinds/<kind>/, and the helpers only kind folders use) is a plug-in above the card and the checks:
# the registry loads it by name, so the core imports the kinds' API (release.kinds, .kind, .registry) only.
# Imports under TYPE_CHECKING are left out here: they never run (the module graph above counts them).
KINDS_API = ("release.kinds", "release.kinds.kind", "release.kinds.registry")
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "util": {"errors"},
    "formats": {"errors", "util"},
    "evidence": {"errors", "util"},
    "kinds": {"errors"},
    "spec": {"errors", "util", "kinds"},
    "release": set(),  # the package's own __init__ (its version)
    "staged": {"errors", "util", "spec", "release"},
    "history": {"errors", "util", "evidence"},
    "hub": {"errors", "util", "staged"},
    "pipeline": {"errors", "spec", "staged", "history"},
    "checks": {"errors", "util", "formats", "evidence", "kinds", "spec", "staged", "pipeline"},
    "card": {"errors", "util", "formats", "evidence", "kinds", "spec", "staged", "history", "pipeline", "checks"},
    "kind plug-ins": {"errors", "util", "formats", "evidence", "kinds", "spec", "checks", "card"},
    "init": {"errors", "util", "formats", "evidence", "kinds", "spec", "staged", "checks"},
    "builder": {
        "errors",
        "util",
        "evidence",
        "kinds",
        "spec",
        "staged",
        "history",
        "hub",
        "pipeline",
        "checks",
        "card",
    },
    "publish": {"errors", "util", "spec", "staged", "history", "hub", "pipeline", "card"},
    "verify": {"errors", "util", "staged", "card"},
    "sign": {"errors", "hub", "staged", "card"},
    "attestation": {"errors", "util", "staged"},  # verify --provenance: a build-provenance bundle, offline
    "status": {"errors", "spec", "staged", "hub", "publish"},
    "localhub": {"util", "spec"},  # the rehearsal Hub: almost nothing of the rest
    "cli": {
        "errors",
        "util",
        "spec",
        "staged",
        "hub",
        "pipeline",
        "card",
        "init",
        "builder",
        "publish",
        "verify",
        "sign",
        "attestation",
        "status",
        "localhub",
        "release",
    },
    "api": {"cli", "errors", "hub", "release"},  # the Python API (hf_release): the commands' typed calls
    "__main__": {"cli"},
}


def room(module: str) -> str:
    """The room a module of release/ sits in: its top-level package or module, or the kind plug-ins."""
    if module.startswith("release.kinds.") and module not in KINDS_API:
        return "kind plug-ins"
    return module.split(".")[1] if "." in module else "release"


def runtime_graph(package: Path) -> dict[str, set[str]]:
    """module_graph without the imports only made under `if TYPE_CHECKING:`."""
    return module_graph(package, type_checking=False)


def test_each_room_imports_only_the_rooms_below_it() -> None:
    crossings = sorted(
        f"{module} imports {other} ({room(module)} → {room(other)})"
        for module, found in runtime_graph(ROOT / "release").items()
        for other in found
        if room(other) != room(module) and room(other) not in MAY_IMPORT.get(room(module), set())
    )
    assert crossings == []


def test_the_rooms_form_no_circle() -> None:
    assert circles({r: set(may) for r, may in MAY_IMPORT.items()}) == []
    rooms = {room(m) for m in module_graph(ROOT / "release")}
    assert rooms <= set(MAY_IMPORT), f"a room with no line in MAY_IMPORT: {sorted(rooms - set(MAY_IMPORT))}"


def test_a_crossing_is_caught(tmp_path: Path) -> None:
    """A card module importing a kind's own folder is a crossing; the same import under TYPE_CHECKING is not."""
    for name, text in {
        "release/__init__.py": "",
        "release/card/__init__.py": "",
        "release/kinds/__init__.py": "",
        "release/kinds/gguf/__init__.py": "",
        "release/card/a.py": "from release.kinds.gguf import KIND\n",
        "release/card/b.py": "if TYPE_CHECKING:\n    from release.kinds.gguf import KIND\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = runtime_graph(tmp_path / "release")
    assert graph["release.card.a"] == {"release.kinds.gguf"} and graph["release.card.b"] == set()
    assert room("release.kinds.gguf") == "kind plug-ins" and "kind plug-ins" not in MAY_IMPORT["card"]
