"""Check the serving launcher: size, `bash -n`, then the vLLM invocations it makes.

The card quotes serving flags from here, never retyped. Reading the launcher — a bash grammar and a
bounded walk that resolves variables, loops, functions and `case` — is release/evidence/launcher.py;
this module checks what it reads.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from release.checks.common import run_per_file
from release.checks.config import the_config
from release.errors import CheckFailed, Problem
from release.evidence.launcher import LauncherError, ServeCall, Start, read_launcher, read_launcher_text
from release.pipeline import Context, StepResult
from release.util.jsonio import parse

__all__ = ["CheckLauncher", "Launcher", "Start", "load_launcher"]

PER_NODE_FLAGS = frozenset({"--node-rank", "--headless"})
FlagValue = str | bool


@dataclass(frozen=True)
class Launcher:
    serve_line: int
    flags: dict[
        str, FlagValue
    ]  # the `vllm serve` flags every node shares, in the launcher's order: what the card quotes
    spec_config: dict[str, Any] | None  # the parsed --speculative-config, when the launcher gives one
    starts: tuple[Start, ...]
    env: dict[str, str] = field(default_factory=dict)
    model: str | None = None  # the served (target) model, as the launcher names it
    # flags whose value differs between ranks: flag → ((ranks, value or None when not given), …), by rank
    per_rank: dict[str, tuple[tuple[tuple[str, ...], FlagValue | None], ...]] = field(default_factory=dict)
    flag_order: tuple[str, ...] = ()  # shared and per-rank flags together, in the launcher's order

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


def load_launcher(path: Path, label: str) -> Launcher:
    try:
        text = read_launcher_text(path)  # refuses an oversized file before bash or the grammar sees it
        problems = bash_syntax_problems(path, label)
        if problems:
            raise CheckFailed(problems)
        facts = read_launcher(text, base_dir=path.parent)
    except LauncherError as exc:
        raise CheckFailed(Problem(label, str(exc))) from None
    starts, env = list(facts.starts), facts.env
    if not facts.serves:
        raise CheckFailed(Problem(label, "runs no `vllm serve`; expected the vLLM launch command"))
    heads = [s for s in starts if s.role == "head"]
    main = next((s for s in facts.serves if heads and _node(s.flags) == ("head", heads[0].rank)), facts.serves[0])
    serve_line = main.line
    first = facts.serves[0]
    for other in facts.serves[1:]:
        if other.flags.get("--speculative-config") != first.flags.get("--speculative-config"):
            where = "between ranks" if other.line == first.line else f"from line {first.line}"
            problems.append(Problem(label, f"line {other.line}: --speculative-config differs {where}"))
            break
    flags, per_rank, order = _shared_and_per_rank(facts.serves)
    if len(heads) > 1:
        problems.append(
            Problem(label, f"starts {len(heads)} heads (lines {', '.join(str(h.line) for h in heads)}); expected one")
        )
    if heads and starts[-1] is not heads[-1]:
        problems.append(
            Problem(
                label, f"line {heads[-1].line}: the head starts before a worker; start workers first, the head last"
            )
        )
    raw = main.flags.get("--speculative-config")
    spec_config: dict[str, Any] | None = None
    if raw is not None:  # whether a kind needs one, and what it must say, is the kind's rule
        try:
            spec_config = parse(str(raw))
            if not isinstance(spec_config, dict):
                raise ValueError("not a JSON object")
        except (ValueError, RecursionError) as exc:
            problems.append(
                Problem(label, f"line {serve_line}: --speculative-config is not a JSON object ({exc}): {raw}")
            )
    if problems:
        raise CheckFailed(problems)
    return Launcher(serve_line, flags, spec_config, tuple(starts), env, main.model, per_rank, order)


def _node(flags: dict[str, FlagValue]) -> tuple[str, str]:
    rank = flags.get("--node-rank", "0")
    return ("worker" if "--headless" in flags else "head", str(rank))


def _shared_and_per_rank(
    serves: Sequence[ServeCall],
) -> tuple[dict[str, FlagValue], dict[str, tuple[tuple[tuple[str, ...], FlagValue | None], ...]], tuple[str, ...]]:
    """The flags every rank's server gives alike (rank and --headless aside), and per rank the ones that differ."""
    by_rank: dict[str, dict[str, FlagValue]] = {}
    for serve in serves:
        by_rank.setdefault(str(serve.flags.get("--node-rank", "0")), serve.flags)
    order = tuple(dict.fromkeys(k for f in by_rank.values() for k in f if k not in PER_NODE_FLAGS))
    ranks = sorted(by_rank, key=lambda r: (not r.isdigit(), int(r) if r.isdigit() else 0, r))
    shared: dict[str, FlagValue] = {}
    per_rank: dict[str, tuple[tuple[tuple[str, ...], FlagValue | None], ...]] = {}
    for flag in order:
        values = [(rank, by_rank[rank].get(flag)) for rank in ranks]
        distinct = list(dict.fromkeys(value for _, value in values))
        if len(distinct) == 1 and distinct[0] is not None:
            shared[flag] = distinct[0]
        else:
            per_rank[flag] = tuple((tuple(r for r, v in values if v == value), value) for value in distinct)
    return shared, per_rank, order


class CheckLauncher:
    name = "check-launcher"

    def run(self, ctx: Context) -> StepResult:
        result = run_per_file(ctx, "launcher", load_launcher)
        rules = ctx.selected_kind().launcher_problems  # the kind's own, e.g. what its --speculative-config must say
        if rules is not None:
            for label, launcher in ctx.parsed.of(Launcher).items():
                ctx.problems.extend(rules(launcher, the_config(ctx), label, ctx.spec.repo_id))
        return result
