"""A release's own code (`trust_remote_code`), read statically: never imported, never run.

transformers loads custom code by the config's `auto_map` (`{"AutoModel": "modeling_x.XModel"}`, a tokenizer's
`[slow, fast]` pair; `"org/repo--modeling_x.XModel"` names another repo's code): the module file beside the config,
then the files it imports relatively (`from .configuration_x import XConfig`), then the class by name. Each step
that would fail in transformers fails here first, in its terms, from the files and `ast` alone.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from release.errors import Problem

MAX_CODE_BYTES = 4 * 1024 * 1024  # a modeling file is tens of kB; GLM's largest is ~100 kB
MAX_FILES = 200  # the code files one release's auto_map reaches, imports included
# the small JSON files whose auto_map transformers reads (config, tokenizer, processors)
AUTO_MAP_FILES = (
    "config.json",
    "tokenizer_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "video_preprocessor_config.json",
)
FIX = "ship the code files save_pretrained wrote beside config.json (register_for_auto_class), or fix auto_map"


@dataclass(frozen=True)
class AutoMapEntry:
    auto_class: str  # e.g. AutoModelForCausalLM
    module: str  # modeling_x (the file modeling_x.py beside the config)
    class_name: str


def auto_map_entries(config: Mapping[str, Any]) -> list[AutoMapEntry]:
    """The entries of a config's auto_map whose code is in this repo (another repo's, `org/repo--…`, is not)."""
    auto_map = config.get("auto_map")
    if not isinstance(auto_map, dict):
        return []
    out = []
    for auto, value in auto_map.items():
        for reference in value if isinstance(value, list) else [value]:
            if not isinstance(reference, str) or "--" in reference or reference.count(".") != 1:
                continue
            module, class_name = reference.split(".")
            out.append(AutoMapEntry(str(auto), module, class_name))
    return out


def relative_imports(tree: ast.Module) -> list[str]:
    """The modules a file imports relatively, as file names in its folder (`from .x import y` → x.py)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            if node.module:
                found.append(node.module.replace(".", "/") + ".py")
            else:
                found += [alias.name + ".py" for alias in node.names]
    return found


def top_level_names(tree: ast.Module) -> set[str]:
    """What a module defines at its top level (classes, functions, assignments, imports): what getattr finds."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def parse_code(path: Path, label: str) -> tuple[ast.Module | None, Problem | None]:
    try:
        if path.stat().st_size > MAX_CODE_BYTES:
            return None, Problem(label, f"is larger than {MAX_CODE_BYTES // (1024 * 1024)} MiB; not read")
        return ast.parse(path.read_bytes(), filename=label), None
    except SyntaxError as exc:
        return None, Problem(f"{label}:{exc.lineno}", f"is not valid Python ({exc.msg}); transformers cannot import it")
    except (OSError, ValueError) as exc:
        return None, Problem(label, f"cannot be read: {exc}")


def code_files_named(
    configs: Iterable[tuple[str, Mapping[str, Any]]], exists: Mapping[str, Path]
) -> tuple[dict[str, str], list[Problem]]:
    """From (config path in repo, its JSON) pairs: the code files their auto_map reaches (path in repo → why), and
    what transformers would refuse: a missing module file, a class the module does not define, a relative import of
    a file the release lacks, code that does not parse. `exists`: the release's files, path in repo → local path."""
    reached: dict[str, str] = {}
    problems: list[Problem] = []
    trees: dict[str, ast.Module | None] = {}

    def tree_of(path: str) -> ast.Module | None:
        if path not in trees:
            trees[path], problem = parse_code(exists[path], path)
            if problem is not None:
                problems.append(problem)
        return trees[path]

    pending: list[str] = []
    for config_path, config in configs:
        folder = posixpath.dirname(config_path)
        for entry in auto_map_entries(config):
            path = posixpath.join(folder, entry.module + ".py")
            if path not in exists:
                problems.append(
                    Problem(
                        config_path,
                        f"auto_map's {entry.auto_class} names {entry.module}.{entry.class_name}, but the release does "
                        f"not hold {path}; transformers: 'does not appear to have a file named {entry.module}.py'; "
                        + FIX,
                    )
                )
                continue
            reached.setdefault(path, f"{posixpath.basename(config_path)}'s auto_map names it")
            pending.append(path)
            tree = tree_of(path)
            if tree is not None and entry.class_name not in top_level_names(tree):
                problems.append(
                    Problem(
                        path,
                        f"defines no {entry.class_name}, which {posixpath.basename(config_path)}'s auto_map names for "
                        f"{entry.auto_class}; transformers: \"module '{entry.module}' has no attribute "
                        f"'{entry.class_name}'\"; {FIX}",
                    )
                )
    while pending and len(reached) <= MAX_FILES:
        path = pending.pop()
        tree = tree_of(path)
        if tree is None:
            continue
        folder = posixpath.dirname(path)
        for name in relative_imports(tree):
            imported = posixpath.normpath(posixpath.join(folder, name))
            if imported in reached:
                continue
            if imported not in exists:
                problems.append(
                    Problem(
                        path,
                        f"imports .{name.removesuffix('.py').replace('/', '.')} relatively, but the release does not "
                        f"hold {imported}; transformers: 'does not appear to have a file named {name}'; {FIX}",
                    )
                )
                continue
            reached[imported] = f"{posixpath.basename(path)} imports it"
            pending.append(imported)
    return reached, problems
