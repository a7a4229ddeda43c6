"""Read the serving facts of a bash launcher through a real bash grammar, without running anything.

Interface:

    read_launcher_text(path) -> str                  size-checked read (refuses oversized files unread)
    read_launcher(text, base_dir=None) -> LauncherFacts
    LauncherFacts.serves   the vLLM servers the launcher starts, over all its paths, in order (ServeCall: line,
                           form, model, flags in command-line order, env); `--config serve.yaml` is read
                           from base_dir
    LauncherFacts.starts   the nodes started, in launch order (Start: line, role "worker"/"head", rank)
    LauncherFacts.env      exported variables (on the head's path)
    LauncherError          one line, naming the line of the launcher where reading stopped

Forms understood: `vllm serve MODEL --flags`, `docker run … vllm/vllm-openai:TAG MODEL --flags` (the
image's entrypoint is `vllm serve`), `python -m vllm.entrypoints.openai.api_server --model M --flags`, each
behind `exec`, `nohup`, `env K=V`, in `ssh HOST "…"` or `bash -c "…"`, with flags also from
`--config serve.yaml` (the command line wins). The script itself is read by release/evidence/bash.py
(tree-sitter-bash and a bounded walk that runs nothing); this module only recognises the vLLM servers
among the commands it would run and the nodes they start: a server's rank is its `--node-rank` (0 when
absent), a worker when it has `--headless`; `ssh HOST "… worker R …"` starts worker R.

A launcher run once per node with its rank (`NODE_RANK="${1:?usage}"`, then `case "$NODE_RANK" in 0) …`)
has one path per rank: each path starts one node, and the launch order is then the documented one,
workers by rank, then the head. A launcher that starts several nodes itself (`ssh` to the workers, then
the head) gives its own order. A server whose rank stays unknown is left out where another path gives
that server a rank (the "no branch matched" path); a multi-node launcher whose ranks are all unknown
cannot be read: a LauncherError names its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from release.evidence.bash import MAX_BYTES, ScriptPath, walk_paths
from release.evidence.bash import ScriptError as LauncherError

MAX_CONFIG_BYTES = 64 * 1024  # a --config YAML

API_SERVER = "vllm.entrypoints.openai.api_server"
VLLM_IMAGE = re.compile(r"^(?:[\w.:-]+/)*vllm-openai(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$")
ASSIGNMENT_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
DOCKER_VALUE_OPTIONS = frozenset(
    {
        "-e",
        "--env",
        "-v",
        "--volume",
        "-p",
        "--publish",
        "--name",
        "--gpus",
        "--network",
        "--ipc",
        "--shm-size",
        "-w",
        "--workdir",
        "--entrypoint",
        "-u",
        "--user",
        "--env-file",
        "--runtime",
        "--device",
        "--ulimit",
        "--mount",
        "--label",
        "-l",
        "--hostname",
        "-h",
    }
)

__all__ = ["LauncherError", "LauncherFacts", "ServeCall", "Start", "read_launcher", "read_launcher_text"]


@dataclass(frozen=True)
class Start:
    """One node started by the launcher, in launch order."""

    line: int
    role: str  # "worker" or "head"
    rank: str


@dataclass(frozen=True)
class ServeCall:
    """One vLLM OpenAI-compatible server the launcher starts."""

    line: int
    form: str  # "vllm serve" | "docker vllm/vllm-openai" | "python -m vllm.entrypoints.openai.api_server"
    model: str | None  # the positional model or --model
    flags: dict[str, str | bool]  # every other flag, command-line order; a bare flag is True
    env: dict[str, str] = field(default_factory=dict)  # set for this command only (K=V prefix, env, docker -e)


@dataclass(frozen=True)
class LauncherFacts:
    serves: tuple[ServeCall, ...]
    starts: tuple[Start, ...]
    env: dict[str, str]


def read_launcher_text(path: Path) -> str:
    """The launcher's text; an oversized file is refused before it is read or parsed."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise LauncherError(
            f"is {size:,} bytes; a launcher above {MAX_BYTES:,} bytes is not read — ship the launch script itself"
        )
    return path.read_text("utf-8", errors="replace")


def read_launcher(text: str, base_dir: Path | None = None) -> LauncherFacts:
    """The serving facts of a launcher's text (see the module docstring); never executes anything."""
    paths = [(path, *_read_path(path, base_dir)) for path in walk_paths(text)]
    serves: list[ServeCall] = []
    for _, path_serves, _ in paths:
        serves.extend(s for s in path_serves if s not in serves)
    ranked_lines = {s.line for s in serves if _rank(s) is not None}
    serves = [s for s in serves if _rank(s) is not None or s.line not in ranked_lines]
    orchestrated = next((starts for _, _, starts in paths if len(starts) > 1), None)
    if orchestrated is not None:
        starts = orchestrated
    else:  # one node per path: workers by rank, then the head
        starts = []
        for start in (s for _, _, path_starts in paths for s in path_starts):
            if (start.role, start.rank) not in {(s.role, s.rank) for s in starts}:
                starts.append(start)
        starts.sort(key=lambda s: (s.role == "head", int(s.rank)))
    unknown = next((s for s in serves if _rank(s) is None), None)
    if not starts and unknown is not None:
        raise LauncherError(
            f"line {unknown.line}: --node-rank {unknown.flags['--node-rank']} is only known at run time, so the nodes "
            'cannot be told apart; give each rank its own `case` branch (`case "$NODE_RANK" in 0) … ;; 1) …`) or a '
            "literal rank"
        )
    head_path = next(
        (path for path, _, path_starts in paths if any(s.role == "head" for s in path_starts)), paths[0][0]
    )
    return LauncherFacts(tuple(serves), tuple(starts), head_path.env)


def _read_path(path: ScriptPath, base_dir: Path | None) -> tuple[list[ServeCall], list[Start]]:
    """The servers one path through the launcher starts, and the nodes, in its order."""
    serves: list[ServeCall] = []
    starts: list[Start] = []
    for command in path.commands:
        serve = _serve_call(command.words, command.line, command.env, base_dir)
        if serve is not None:
            serves.append(serve)
            rank = _rank(serve)
            if rank is not None:
                role = "worker" if "--headless" in serve.flags else "head"
                starts.append(Start(command.call_line, role, rank))
        elif command.host is not None:
            # the launcher re-running itself on a node: `ssh HOST "… SCRIPT worker R …"`
            rank = next(
                (b for a, b in zip(command.words, command.words[1:], strict=False) if a == "worker" and b.isdigit()),
                None,
            )
            if rank is not None:
                starts.append(Start(command.call_line, "worker", rank))
    return serves, starts


def _rank(serve: ServeCall) -> str | None:
    """A server's node rank (0 without --node-rank), or None while only known at run time."""
    rank = serve.flags.get("--node-rank", "0")
    return rank if isinstance(rank, str) and rank.isdigit() else None


# --- the vLLM command line ------------------------------------------------------------------------


def _serve_call(words: list[str], line: int, prefix: dict[str, str], base_dir: Path | None) -> ServeCall | None:
    """The vLLM server a command starts, in any of the three forms, or None."""
    for index, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        env = {**prefix, **_env_words(words[:index])}
        if base == "vllm" and words[index + 1 : index + 2] == ["serve"]:
            model, args = _positional_model(words[index + 2 :])
            return _make(line, "vllm serve", model, args, env, base_dir)
        if base.startswith("python") and words[index + 1 : index + 3] == ["-m", API_SERVER]:
            return _make(line, f"python -m {API_SERVER}", None, words[index + 3 :], env, base_dir)
        if base in ("docker", "podman") and "run" in words[index + 1 : index + 2]:
            return _docker(words[index + 2 :], line, env, base_dir)
    return None


def _env_words(words: list[str]) -> dict[str, str]:
    return {m.group(1): m.group(2) for w in words if (m := ASSIGNMENT_WORD.match(w))}


def _positional_model(args: list[str]) -> tuple[str | None, list[str]]:
    if args and not args[0].startswith("-"):
        return args[0], args[1:]
    return None, args


def _docker(args: list[str], line: int, env: dict[str, str], base_dir: Path | None) -> ServeCall | None:
    index = 0
    while index < len(args):
        word = args[index]
        if VLLM_IMAGE.match(word):
            rest = args[index + 1 :]
            if rest[:2] == ["vllm", "serve"]:
                rest = rest[2:]
            model, flags = _positional_model(rest)
            return _make(line, "docker vllm/vllm-openai", model, flags, env, base_dir)
        name, eq, value = word.partition("=")
        if name in ("-e", "--env"):
            assignment = value if eq else (args[index + 1] if index + 1 < len(args) else "")
            env.update(_env_words([assignment]))
        if not word.startswith("-"):
            return None  # another image
        index += 2 if not eq and name in DOCKER_VALUE_OPTIONS else 1
    return None


def _make(
    line: int, form: str, model: str | None, args: list[str], env: dict[str, str], base_dir: Path | None
) -> ServeCall:
    flags: dict[str, str | bool] = {}
    for name, value in _flags(args):
        if name == "--config" and isinstance(value, str):
            for key, item in _config_flags(value, line, base_dir):
                flags.setdefault(key, item)  # the command line wins over the file
            continue
        flags[name] = value
    model_flag = flags.pop("--model", None)
    if isinstance(model_flag, str):
        model = model_flag
    return ServeCall(line, form, model, flags, env)


def _flags(args: list[str]) -> Iterator[tuple[str, str | bool]]:
    index = 0
    while index < len(args):
        token = args[index]
        if token.startswith("-") and not _is_number(token):
            name, eq, value = token.partition("=")
            if eq:
                yield name, value
            elif index + 1 < len(args) and (not args[index + 1].startswith("-") or _is_number(args[index + 1])):
                yield name, args[index + 1]
                index += 1
            else:
                yield name, True
        index += 1


def _is_number(text: str) -> bool:
    return re.fullmatch(r"-?\d+(?:\.\d+)?", text) is not None


def _config_flags(name: str, line: int, base_dir: Path | None) -> list[tuple[str, str | bool]]:
    """`--config serve.yaml`: vLLM's YAML of flag names (dashes or underscores) to values."""
    import yaml

    from release.util import yamlio

    path = (base_dir / name) if base_dir is not None and not Path(name).is_absolute() else Path(name)
    if base_dir is None or not path.is_file():
        raise LauncherError(
            f"line {line}: --config {name}: no such file next to the launcher; ship the YAML in the release"
        )
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise LauncherError(f"line {line}: --config {name} is above {MAX_CONFIG_BYTES:,} bytes; it is not read")
    text = path.read_text("utf-8", errors="replace")
    try:
        data = yamlio.load(text, aliases=False)
    except yamlio.Aliased:
        raise LauncherError(f"line {line}: --config {name} uses YAML aliases; write the values out") from None
    except yaml.YAMLError as exc:
        raise LauncherError(f"line {line}: --config {name} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise LauncherError(f"line {line}: --config {name} is not a YAML mapping of flag names to values")
    out: list[tuple[str, str | bool]] = []
    for key, value in data.items():
        flag = "--" + str(key).replace("_", "-")
        if value is True:
            out.append((flag, True))
        elif value is False or value is None:
            continue
        elif isinstance(value, dict):
            out.append((flag, json.dumps(value, separators=(",", ":"))))
        elif isinstance(value, list):
            out.append((flag, " ".join(str(v) for v in value)))
        else:
            out.append((flag, str(value)))
    return out
