"""The card's serving facts, from the release's vLLM launcher: its flags and its launch order. Pure: no I/O."""

from __future__ import annotations

from release.card.evidence import Evidence, EvidenceMap
from release.card.text import Line, Table, code_cell, public_value
from release.checks.launcher import Launcher
from release.errors import Problem


def serving_table(emap: EvidenceMap, evidence: Evidence, problems: list[Problem]) -> tuple[Table | None, Line | None]:
    if emap.launcher is None:
        return None, None
    launcher = evidence.launchers.get(emap.launcher)
    if launcher is None:
        problems.append(
            Problem(emap.launcher, "the card quotes this launcher but it is not a valid launcher of the release")
        )
        return None, None
    rows = []
    for flag in launcher.flag_order or tuple(launcher.flags):
        if flag in launcher.per_rank:  # differs between ranks: each rank's value, said as such
            shown = "; ".join(f"{_ranks(ranks)}: {_value(value)}" for ranks, value in launcher.per_rank[flag])
        else:
            shown = _value(launcher.flags[flag])
        rows.append((code_cell(flag), shown))
    table = Table("serving flags", ("Flag", "Value"), tuple(rows), key_columns=1)
    return table, Line("Launch order", launch_order(launcher))


def _value(value: str | bool | None) -> str:
    if value is None:
        return "not given"
    return "(set)" if value is True else code_cell(public_value(str(value)))


def _ranks(ranks: tuple[str, ...]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(ranks)


def launch_order(launcher: Launcher) -> str:
    """The launcher's start order in words, from `Launcher.launch_order` (e.g. ["worker 1", …, "head 0"])."""
    starts = [tuple(s.split(" ", 1)) if " " in s else (s, "?") for s in launcher.launch_order]
    workers = [rank for role, rank in starts if role == "worker"]
    heads = [rank for role, rank in starts if role == "head"]
    if not starts:
        return "not found in the launcher"
    if len(heads) == 1 and starts[-1][0] == "head" and workers and len(workers) == len(starts) - 1:
        noun = "rank" if len(workers) == 1 else "ranks"
        return f"workers first ({noun} {', '.join(workers)}), head last (rank {heads[0]})"
    if len(starts) == 1:
        return f"a single node ({starts[0][0]}, rank {starts[0][1]})"
    return "as the launcher starts them: " + " → ".join(f"{role} {rank}" for role, rank in starts)
