"""The kinds registry: one detection for init and build, a kind's modules loaded only for its releases,
nothing outside release/kinds/ naming a kind, no import cycle through the kinds or the card, and a kind added as one
folder, one registration and one template (the test-only kind, tests/kinds/toy/)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

import pytest

from release.init.detect import detect_kind as detect_folder_kind
from release.init.detect import scan
from release.kinds import REGISTRY, Detection, Registered, Role, detect_kind, kind_named, names
from tests.helpers import ROOT

RELEASE = ROOT / "release"
DRAFTER_MODULES = "release.kinds.dflash2"  # the drafter kind's own modules: dflash2_drafter, dflash2_inventory
# The test-only kind's one registry line (tests/kinds/toy/: its KIND, its reader, its template)
TOY = Registered(
    "toy", lambda: import_module("tests.kinds.toy").KIND, Detection(files=("*.toy",)), (Role("toy-data", ("*.toy",)),)
)


@contextmanager
def registered(kind: Registered) -> Iterator[Registered]:
    """The kind in REGISTRY (first, as the most specific) for the block's duration."""
    REGISTRY.insert(0, kind)
    try:
        yield kind
    finally:
        REGISTRY.remove(kind)


@pytest.fixture
def toy() -> Iterator[Registered]:
    with registered(TOY):
        yield TOY


@pytest.mark.parametrize(
    ("config", "kind", "why"),
    [
        ({"dflash_config": {}}, "dflash2-drafter", "config.json has dflash_config"),
        (
            {"architectures": ["DFlash2DraftModel"]},
            "dflash2-drafter",
            "config.json's architectures name DFlash2DraftModel",
        ),
        ({"architectures": ["LlamaForCausalLM"]}, "transformers", "config.json of a transformers model"),
        (["not", "an", "object"], "transformers", "config.json of a transformers model"),
    ],
)
def test_init_and_build_detect_a_kind_alike(tmp_path: Path, config: object, kind: str, why: str) -> None:
    """init reads the folder's config.json, build the staged one: both ask the registry's one rule."""
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert detect_kind(config)[0].name == kind  # what build's select-kind step asks
    found, reason = detect_folder_kind(scan(tmp_path))
    assert (found.name, reason) == (kind, why)
    assert detect_kind(None)[1] == "no config.json" and detect_folder_kind([])[1] == "no config.json"


def test_a_kind_is_looked_up_by_the_names_the_spec_schema_allows() -> None:
    from release.spec import spec_schema

    names = spec_schema()["properties"]["release"]["properties"]["kind"]["enum"]
    assert [kind_named(name).name for name in names] == names
    assert kind_named("no-such-kind") is None and kind_named(["unhashable"]) is None


def test_nothing_outside_release_kinds_names_the_drafter() -> None:
    """`grep -rilE 'dflash|drafter' release/ --include=*.py` lists only files under release/kinds/."""
    naming = sorted(
        str(p.relative_to(ROOT))
        for p in RELEASE.rglob("*.py")
        if RELEASE / "kinds" not in p.parents and re.search(r"dflash|drafter", p.read_text("utf-8"), re.IGNORECASE)
    )
    assert naming == []


def kind_naming(package: Path, kinds: Iterable[str]) -> list[str]:
    """Where a module of the package outside its kinds/ folder names a kind in its code: a string literal equal to a
    kind's name (`kinds`) or naming a kind's own folder (release.kinds.<folder>, as import_module takes it), or an
    import of a kind's folder. The kinds' API (release.kinds, .kind, .registry) is the core's to import."""
    own = package / "kinds"
    folders = {f"{package.name}.kinds.{p.parent.name}" for p in own.glob("*/__init__.py")}

    def of_a_kind(module: str) -> bool:
        return any(module == f or module.startswith(f + ".") for f in folders)

    found = []
    for path in sorted(package.rglob("*.py")):
        if own in path.parents:
            continue
        where = path.relative_to(package.parent).with_suffix("")
        here = where.parts if path.name == "__init__.py" else where.parts[:-1]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            imported: list[str] = []
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in kinds or of_a_kind(node.value):
                    found.append(f"{where.as_posix()}.py:{node.lineno} names {node.value!r}")
            elif isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*here[: len(here) - node.level + 1], *([node.module] if node.module else [])])
                base = base if node.level else node.module or ""
                imported = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            if (kind_module := next((m for m in imported if of_a_kind(m)), None)) is not None:
                found.append(f"{where.as_posix()}.py:{node.lineno} imports {kind_module}")
    return found


def test_no_module_outside_release_kinds_names_a_kind() -> None:
    """No string literal equal to a registered kind's name, no import of a kind's own folder (release.kinds.<kind>):
    the core reaches a kind only through the registry (shared readers are named for a format, e.g.
    formats/transformers_config.py, and the speculative-decoding card part two kinds share is card/speculative/)."""
    assert kind_naming(RELEASE, names()) == []


def test_a_module_naming_a_kind_is_caught(tmp_path: Path) -> None:
    for name, text in {
        "release/__init__.py": "",
        "release/kinds/__init__.py": "from release.kinds.registry import names\n",
        "release/kinds/gguf/__init__.py": 'KIND = "gguf"\n',
        "release/card/__init__.py": "",
        "release/card/literal.py": 'if kind.name == "gguf":\n    pass\n',
        "release/card/folder.py": "from release.kinds.gguf import KIND\n",
        "release/card/relative.py": "from ..kinds import gguf\n",
        "release/card/loaded.py": 'import_module("release.kinds.gguf.reader")\n',
        "release/card/api.py": 'from release.kinds import kind_named\nWORDS = "a gguf file"\n',
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert kind_naming(tmp_path / "release", ["gguf"]) == [
        "release/card/folder.py:1 imports release.kinds.gguf",
        "release/card/literal.py:1 names 'gguf'",
        "release/card/loaded.py:1 names 'release.kinds.gguf.reader'",
        "release/card/relative.py:1 imports release.kinds.gguf",
    ]


CHILD = """
import sys
from pathlib import Path

from release.builder import build
from release.spec import load_spec
from tests.kinds.helpers import make_release

root = Path(sys.argv[1])
build(load_spec(make_release(root / "artifacts" / "v1")), root / "dist")
print("\\n".join(sorted(sys.modules)))
"""


def test_building_a_transformers_release_imports_no_module_of_the_drafter(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
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


# --- kinds detected from the files a release holds; roles and the spec schema from the registry ---------


@pytest.mark.parametrize(
    ("files", "config", "kind", "why"),
    [
        (
            ["adapter_config.json", "adapter_model.safetensors"],
            None,
            "peft-adapter",
            "the release holds adapter_config.json",
        ),
        (
            ["sub/adapter_config.json", "config.json"],
            {"dflash_config": {}},
            "peft-adapter",
            "the release holds sub/adapter_config.json",
        ),
        (
            ["m-Q4_K_M.gguf", "config.json"],
            {"architectures": ["LlamaForCausalLM"]},
            "gguf",
            "the release holds m-Q4_K_M.gguf",
        ),
        (
            ["config.json", "model.safetensors"],
            {"dflash_config": {}},
            "dflash2-drafter",
            "config.json has dflash_config",
        ),
        (
            ["config.json", "model.safetensors"],
            {"architectures": ["LlamaForCausalLM"]},
            "transformers",
            "config.json of a transformers model",
        ),
    ],
)
def test_the_files_show_the_kind_before_config_json(
    tmp_path: Path, files: list[str], config: object, kind: str, why: str
) -> None:
    """The most specific first: a file only one kind has, then config.json; init (the folder) and build (the paths)
    alike."""
    assert detect_kind(config, files)[0].name == kind and detect_kind(config, files)[1] == why  # build's select-kind
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(
            json.dumps(config) if name.endswith("config.json") and config is not None else "{}"
        )
    found, reason = detect_folder_kind(scan(tmp_path), tmp_path)
    assert (found.name, reason) == (kind, why)


def test_init_gives_the_kinds_roles_by_file_name(tmp_path: Path) -> None:
    for name in ("adapter_config.json", "adapter_model.safetensors", "x-F16.gguf"):
        (tmp_path / name).write_bytes(b"{}")
    assert {d.path.name: d.role for d in scan(tmp_path)} == {
        "adapter_config.json": "adapter-config",
        "adapter_model.safetensors": "adapter-weights",
        "x-F16.gguf": "gguf",
    }


def test_the_spec_schema_lists_the_registry_kinds_and_roles_and_the_file_no_copy_of_them() -> None:
    """The schema's `kind` and `role` enums are generated from the registry at load (release/spec/__init__.py); the
    shipped file carries no copy of them, so adding a kind never edits it."""
    from release.kinds import kind_roles, names
    from release.spec import spec_schema

    shipped = json.loads((RELEASE / "schemas" / "spec.schema.json").read_text("utf-8"))
    assert "enum" not in shipped["properties"]["release"]["properties"]["kind"]
    assert "enum" not in shipped["properties"]["files"]["items"]["properties"]["role"]
    core, owned = shipped["$defs"]["core_role"]["enum"], [r.name for r in kind_roles()]
    assert not set(core) & set(owned)  # the core roles name no kind's role
    generated = spec_schema()
    assert generated["properties"]["release"]["properties"]["kind"]["enum"] == names()
    roles = generated["properties"]["files"]["items"]["properties"]["role"]["enum"]
    assert roles == [*core, *owned]
    assert {
        "adapter-config",
        "adapter-weights",
        "gguf",
        "pipeline-index",
        "component",
        "sentence-transformers-module",
    } <= set(roles) and owned == roles[-len(owned) :]


def test_adding_a_kind_is_its_folder_template_and_registration(tmp_path: Path) -> None:
    """A test-only kind (tests/kinds/toy/): registered, it is detected by init and build, its role is allowed by the
    spec schema, its files are checked and carded — nothing else in release/ changes."""
    from release.builder import build
    from release.errors import CheckFailed
    from release.init import init_from_files
    from release.spec import load_spec
    from tests.kinds.helpers import apache_license

    files = tmp_path / "artifacts" / "incoming"
    files.mkdir(parents=True)
    (files / "answer.toy").write_text('{"answer": 42}')
    (files / "LICENSE").write_text(apache_license())
    with registered(TOY):
        result = init_from_files(tmp_path, "v1", files, "test-org/toy")
        text = result.spec.read_text("utf-8")
        assert result.kind == "toy" and 'role = "toy-data"' in text
        card = (build(load_spec(result.spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
        assert (
            "library_name: toy" in card
            and "| Toy files | 1 |" in card
            and 'toy run test-org/toy --revision="v1"' in card
        )
        (files / "answer.toy").write_text('{"answer": 41}')
        with pytest.raises(CheckFailed) as failed:
            build(load_spec(result.spec), tmp_path / "dist2")
        assert [f"{p.file}: {p.message}" for p in failed.value.problems] == [
            "answer.toy: answer is 41; a toy's answer is 42, so write it again"
        ]
    text = result.spec.read_text("utf-8").replace('# kind = "toy"', 'kind = "toy"')
    result.spec.write_text(text)
    with pytest.raises(Exception, match="toy"):  # unregistered, the generated schema no longer allows it
        load_spec(result.spec)


def test_a_kind_folder_is_detected_read_and_carded_with_init_detect_and_the_card_untouched(
    tmp_path: Path, toy: Registered, capsys: pytest.CaptureFixture[str]
) -> None:
    """`init --files`, then build, on a folder of toy files: the toy kind's folder (its KIND, its reader), its template
    and its one registry line (TOY) are all it takes; no file of release/ or templates/ names it."""
    from release.builder import build
    from release.spec import load_spec
    from tests.helpers import cli
    from tests.kinds.helpers import apache_license

    files = tmp_path / "incoming"
    (files / "more").mkdir(parents=True)
    (files / "answer.toy").write_text('{"answer": 42}')
    (files / "more" / "again.toy").write_text('{"answer": 42}')
    (files / "LICENSE").write_text(apache_license())
    run = cli(capsys, "init", "v1", "--files", files, "--repo-id", "test-org/toy", "--root", tmp_path)
    assert run.code == 0, run.err
    spec = tmp_path / "artifacts" / "v1" / "release.toml"
    text = spec.read_text("utf-8")
    assert '# kind = "toy"  # detected: the release holds answer.toy; uncomment to fix it' in text
    assert text.count('role = "toy-data" # toy file name') == 2
    card = (build(load_spec(spec), tmp_path / "dist").dist / "README.md").read_text("utf-8")
    assert "| Toy files | 2 |" in card and "| Answers | 42 |" in card  # tests/kinds/toy/reader.py's facts
    assert "library_name: toy" in card and 'toy run test-org/toy --revision="v1"' in card
    assert "The toy files:" in card  # its template, tests/kinds/toy/toy.md.j2
    assert kind_naming(RELEASE, [toy.name, *(role.name for role in toy.roles)]) == []
    assert [
        p
        for p in [*RELEASE.rglob("*.py"), *(ROOT / "templates").rglob("*.j2")]
        if re.search(r"\btoy\b", p.read_text("utf-8"), re.IGNORECASE)
    ] == []
