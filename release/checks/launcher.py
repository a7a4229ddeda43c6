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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CheckFailed, Problem
from ..pipeline import Context, Done, Skipped, StepResult
from .config import the_config

ASSIGNMENT = re.compile(r"^\s*(?:export\s+|readonly\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
FOR_LOOP = re.compile(r"^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+?)\s*;?\s*(?:do)?\s*$")
EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Invocation:
    """One `vllm serve` the launcher runs."""

    line: int
    rank: str | None
    headless: bool
    flags: dict[str, str | bool]


@dataclass(frozen=True)
class Launcher:
    invocations: tuple[Invocation, ...]
    spec_config: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def head(self) -> Invocation:
        return next(i for i in self.invocations if not i.headless)

    @property
    def flags(self) -> dict[str, str | bool]:
        """The head's flags, in the launcher's order: what the card quotes."""
        return self.head.flags

    @property
    def launch_order(self) -> list[str]:
        return [i.rank or "?" for i in self.invocations]


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


def read_launcher(text: str) -> tuple[list[Invocation], dict[str, str]]:
    """Every `vllm serve` in launch order (loops unrolled), and the variables the script sets."""
    variables: dict[str, str] = {}
    env: dict[str, str] = {}
    loops: list[tuple[str, list[str], list[tuple[int, str]]]] = []
    invocations: list[Invocation] = []

    def serve(number: int, line: str, scope: dict[str, str]) -> None:
        arguments = _serve_tokens(_split(_expand(line, scope)))
        if arguments is None:
            return
        flags = _flags(arguments)
        rank = flags.get("--node-rank")
        invocations.append(Invocation(number, rank if isinstance(rank, str) else None, "--headless" in flags, flags))

    for number, line in _logical_lines(text):
        stripped = line.strip()
        loop = FOR_LOOP.match(stripped)
        if loop:
            loops.append((loop.group(1), _split(_expand(loop.group(2), variables)), []))
            continue
        if loops and re.match(r"^done\b", stripped):
            name, values, body = loops.pop()
            for value in values:
                for body_number, body_line in body:
                    serve(body_number, body_line, {**variables, name: value})
            continue
        if loops:
            loops[-1][2].append((number, line))
            continue
        assignment = ASSIGNMENT.match(line)
        if assignment:
            values = _split(_expand(assignment.group(2), variables))
            if len(values) <= 1:  # more words: a command run with a prefix assignment
                variables[assignment.group(1)] = values[0] if values else ""
                if stripped.startswith("export"):
                    env[assignment.group(1)] = variables[assignment.group(1)]
                continue
        serve(number, line, variables)
    return invocations, env


def load_launcher(path: Path, label: str, repo_id: str) -> Launcher:
    problems = bash_syntax_problems(path, label)
    if problems:
        raise CheckFailed(problems)
    invocations, env = read_launcher(path.read_text("utf-8", errors="replace"))
    heads = [i for i in invocations if not i.headless]
    if len(heads) != 1:
        raise CheckFailed(Problem(label, f"has {len(heads)} head `vllm serve` invocations (without --headless); expected exactly one"))
    head = heads[0]
    if invocations[-1] is not head:
        problems.append(Problem(label, f"line {head.line}: the head is started before a worker; start workers first, the head last"))
    raw = head.flags.get("--speculative-config")
    if not isinstance(raw, str):
        raise CheckFailed([*problems, Problem(label, f"line {head.line}: the head has no --speculative-config")])
    try:
        spec_config = json.loads(raw)
        if not isinstance(spec_config, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        raise CheckFailed([*problems, Problem(label, f"line {head.line}: --speculative-config is not a JSON object ({exc}): {raw}")]) from None
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
    return Launcher(tuple(invocations), spec_config, env)


class CheckLauncher:
    name = "check-launcher"

    def run(self, ctx: Context) -> StepResult:
        files = ctx.by_role("launcher")
        if not files:
            return Skipped("no launcher in this release")
        launchers = {}
        for f in files:
            try:
                launchers[f.path_in_repo] = load_launcher(f.staged, f.path_in_repo, ctx.spec.repo_id)
            except CheckFailed as exc:
                ctx.problems.extend(exc.problems)
        config = the_config(ctx)
        for label, launcher in launchers.items():
            k = launcher.spec_config["num_speculative_tokens"]
            if config is not None and config["dflash_config"]["block_size"] - 1 != k:
                ctx.problems.append(
                    Problem(
                        label,
                        f"num_speculative_tokens {k} must be config.json's dflash_config.block_size − 1 "
                        f"= {config['dflash_config']['block_size'] - 1}",
                    )
                )
        ctx.evidence["launcher"] = launchers
        return Done(f"{len(launchers)}/{len(files)} launchers valid")
