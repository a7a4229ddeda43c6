"""Check the serving launcher: `bash -n`, then read the vLLM invocations it makes.

The card quotes serving flags from here, never retyped. Launchers assemble flags from shell
variables with defaults (`${VAR:-default}`) and start workers in loops, so the reader resolves
simple assignments and `for VAR in …` lists; anything it cannot resolve stays as written.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CheckFailed, Problem
from ..pipeline import Context, StepResult
from .common import run_per_file
from .config import the_config

ASSIGNMENT = re.compile(r"^\s*(?:export\s+|readonly\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
FOR_LOOP = re.compile(r"^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+?)\s*;?\s*(?:do)?\s*$")
PER_NODE_FLAGS = frozenset({"--node-rank", "--headless"})
EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Start:
    """One node started by the launcher, in launch order."""

    line: int
    role: str  # "worker" or "head"
    rank: str


@dataclass(frozen=True)
class Launcher:
    serve_line: int
    flags: dict[str, str | bool]  # the `vllm serve` flags, in the launcher's order: what the card quotes
    spec_config: dict[str, Any]
    starts: tuple[Start, ...]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def launch_order(self) -> list[str]:
        """e.g. ["worker 1", "worker 2", "worker 3", "head 0"]."""
        return [f"{s.role} {s.rank}" for s in self.starts]


def bash_syntax_problems(path: Path, label: str) -> list[Problem]:
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30, check=False)
    if result.returncode == 0:
        return []
    first = next((line for line in result.stderr.splitlines() if line.strip()), "syntax error")
    return [Problem(label, f"bash -n fails: {first.replace(str(path), label)}")]


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations; keep the number of each logical line's first physical line."""
    out, buf, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not buf:
            start = number
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1] + " "
            continue
        out.append((start, buf + raw))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def _expand(text: str, variables: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        if name in variables:
            return variables[name]
        if match.group(2) is not None:
            return match.group(3)
        return match.group(0)

    return EXPANSION.sub(replace, text)


def _words(text: str, variables: dict[str, str]) -> list[str]:
    """Shell words with variables expanded the way bash does: not inside '…', as one word inside "…",
    and split into several words when unquoted (so "$CFG" keeps its JSON, $EXTRA_ARGS adds flags)."""
    lexer = shlex.shlex(text, posix=False)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words: list[str] = []
    try:
        for token in lexer:
            if len(token) >= 2 and token[0] == token[-1] == "'":
                words.append(token[1:-1])
            elif len(token) >= 2 and token[0] == token[-1] == '"':
                words.append(_expand(token[1:-1], variables))
            else:
                words.extend(_split(_expand(token, variables)))
    except ValueError:  # an unbalanced quote: bash -n has already passed, so keep what is readable
        return _split(_expand(text, variables))
    return words


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _serve_tokens(tokens: list[str]) -> list[str] | None:
    """The arguments after `vllm serve`, looking inside quoted remote commands (ssh host "…")."""
    for index, token in enumerate(tokens):
        if token == "vllm" and index + 1 < len(tokens) and tokens[index + 1] == "serve":
            return tokens[index + 2 :]
        if "vllm serve" in token:
            inner = _serve_tokens(_split(token))
            if inner is not None:
                return inner
    return None


def _flags(arguments: list[str]) -> dict[str, str | bool]:
    flags: dict[str, str | bool] = {}
    index = 0
    while index < len(arguments):
        token = arguments[index]
        if token in ("&", "&&", ";", "|", "||") or token.startswith((">", "2>")):
            break
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            if eq:
                flags[name] = value
            elif index + 1 < len(arguments) and not arguments[index + 1].startswith("--") and arguments[index + 1] not in ("&", ";"):
                flags[name] = arguments[index + 1]
                index += 1
            else:
                flags[name] = True
        index += 1
    return flags


FUNCTION = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*\(\)\s*\{?\s*$")


def read_launcher(text: str) -> tuple[list[tuple[int, dict[str, str | bool]]], list[Start], dict[str, str]]:
    """The `vllm serve` invocations, the nodes started in order (loops unrolled), and exported variables.

    A start is a call of the function that runs `vllm serve` (rank = its first argument, a worker when
    it passes --headless), a direct `vllm serve` (rank = --node-rank), or an ssh line that starts a
    worker (rank = the loop value or the number after 'worker').
    """
    variables: dict[str, str] = {}
    env: dict[str, str] = {}
    serves: list[tuple[int, dict[str, str | bool]]] = []
    lines = _logical_lines(text)
    serve_function = None
    function = None
    for number, line in lines:
        match = FUNCTION.match(line)
        if match:
            function = match.group(1)
        elif function and line.strip() == "}":
            function = None
        elif re.search(r"\bvllm\s+serve\b", line):
            arguments = _serve_tokens(_words(line, variables))
            if arguments is not None:
                serves.append((number, _flags(arguments)))
                serve_function = serve_function or function
        if function is None and not match:
            assignment = ASSIGNMENT.match(line)
            if assignment:
                values = _words(assignment.group(2), variables)
                if len(values) <= 1:  # more words: a command run with a prefix assignment
                    variables[assignment.group(1)] = values[0] if values else ""
                    if line.strip().startswith("export"):
                        env[assignment.group(1)] = variables[assignment.group(1)]

    starts: list[Start] = []
    loops: list[tuple[str, list[str]]] = []
    function = None
    for number, line in lines:
        definition = FUNCTION.match(line)
        if definition:
            function = definition.group(1)
            continue
        if function:
            if line.strip() == "}":
                function = None
            continue
        loop = FOR_LOOP.match(line.strip())
        if loop:
            loops.append((loop.group(1), _split(_expand(loop.group(2), variables))))
            continue
        if loops and re.match(r"^\s*done\b", line):
            loops.pop()
            continue
        for scope in _loop_scopes(loops, variables):
            tokens = _words(line, scope)
            start = _start(number, tokens, serve_function)
            if start and "$" not in start.rank:
                starts.append(start)
    return serves, starts, env


def _loop_scopes(loops: list[tuple[str, list[str]]], variables: dict[str, str]) -> list[dict[str, str]]:
    scopes = [dict(variables)]
    for name, values in loops:
        scopes = [{**scope, name: value} for scope in scopes for value in values]
    return scopes


def _start(number: int, tokens: list[str], serve_function: str | None) -> Start | None:
    words = [t for t in tokens if t != "exec"]
    if "ssh" in words[:1] and any("worker" in t or "vllm serve" in t for t in words):
        command = " ".join(words[2:])
        rank = re.search(r"(?:worker|--node-rank)\s+(\S+)", command)
        return Start(number, "worker", rank.group(1).strip("'\"") if rank else "?")
    if serve_function and words[:1] == [serve_function] and len(words) > 1:
        return Start(number, "worker" if "--headless" in words else "head", words[1])
    arguments = _serve_tokens(words)
    if arguments is not None and serve_function is None:
        flags = _flags(arguments)
        rank = flags.get("--node-rank", "0")
        return Start(number, "worker" if "--headless" in flags else "head", str(rank))
    return None


def load_launcher(path: Path, label: str, repo_id: str) -> Launcher:
    problems = bash_syntax_problems(path, label)
    if problems:
        raise CheckFailed(problems)
    serves, starts, env = read_launcher(path.read_text("utf-8", errors="replace"))
    if not serves:
        raise CheckFailed(Problem(label, "runs no `vllm serve`; expected the vLLM launch command"))
    serve_line, node_flags = serves[0]
    # the flags every node shares: what the card quotes (rank and --headless differ per node)
    flags = {k: v for k, v in node_flags.items() if k not in PER_NODE_FLAGS}
    for line, other in serves[1:]:
        if other.get("--speculative-config") != flags.get("--speculative-config"):
            problems.append(Problem(label, f"line {line}: --speculative-config differs from line {serve_line}"))
    heads = [s for s in starts if s.role == "head"]
    if len(heads) > 1:
        problems.append(Problem(label, f"starts {len(heads)} heads (lines {', '.join(str(h.line) for h in heads)}); expected one"))
    if heads and starts[-1] is not heads[-1]:
        problems.append(Problem(label, f"line {heads[-1].line}: the head starts before a worker; start workers first, the head last"))
    raw = flags.get("--speculative-config")
    if not isinstance(raw, str):
        raise CheckFailed([*problems, Problem(label, f"line {serve_line}: `vllm serve` has no --speculative-config")])
    try:
        spec_config = json.loads(raw)
        if not isinstance(spec_config, dict):
            raise ValueError("not a JSON object")
    except (ValueError, RecursionError) as exc:
        raise CheckFailed([*problems, Problem(label, f"line {serve_line}: --speculative-config is not a JSON object ({exc}): {raw}")]) from None
    if spec_config.get("method") != "dflash":
        problems.append(Problem(label, f"--speculative-config method is {spec_config.get('method')!r}; expected 'dflash'"))
    if spec_config.get("model") != repo_id:
        problems.append(
            Problem(label, f"--speculative-config model is {spec_config.get('model')!r}; expected this release's repo {repo_id!r}")
        )
    k = spec_config.get("num_speculative_tokens")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        problems.append(Problem(label, f"--speculative-config num_speculative_tokens is {k!r}; expected a positive integer"))
    if problems:
        raise CheckFailed(problems)
    return Launcher(serve_line, flags, spec_config, tuple(starts), env)


class CheckLauncher:
    name = "check-launcher"

    def run(self, ctx: Context) -> StepResult:
        result = run_per_file(ctx, "launcher", "launcher", partial(load_launcher, repo_id=ctx.spec.repo_id))
        config = the_config(ctx)
        for label, launcher in ctx.evidence.get("launcher", {}).items():
            k = launcher.spec_config["num_speculative_tokens"]
            if config is not None and config["dflash_config"]["block_size"] - 1 != k:
                ctx.problems.append(
                    Problem(
                        label,
                        f"num_speculative_tokens {k} must be config.json's dflash_config.block_size − 1 "
                        f"= {config['dflash_config']['block_size'] - 1}",
                    )
                )
        return result
