"""The card's Markdown pieces: the one place a number becomes text, and the tables and lines the
renderer prints and the lint reads back. Pure: no I/O, no knowledge of any evidence format."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

# The widest code line a card writes where it can wrap: an estimate of what a code box on a model page shows without
# scrolling (not measured on the Hub). Longer commands are continued on the next line (bash `\`, Python's parentheses).
CODE_WIDTH = 88

DASH = "—"  # a cell with no value (e.g. a cell the previous version did not measure)


class Md(str):
    """Markdown written by hf-release itself: the template prints it as is (no template-syntax escaping)."""


# --- formatting: the one place a number becomes text ---------------------------------------------

_TEMPLATE_OPEN = re.compile(r"\{(?=[{%#])")


def esc(text: str) -> str:
    """Data → Markdown that cannot be mistaken for template syntax: `{{` prints as `{{`, via `&#123;{`."""
    return _TEMPLATE_OPEN.sub("&#123;", text)


def cell(text: str) -> str:
    """Text from data (a ledger description, a tag) for a table cell or a line: one line, template
    syntax, HTML and pipes escaped, so it shows as written and cannot break the table."""
    flat = " ".join(str(text).split()).replace("<", "&lt;").replace(">", "&gt;")
    return esc(flat).replace("|", "\\|")


def code(text: str) -> str:
    """An inline code span holding `text` exactly (fence longer than any backtick run inside)."""
    text = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_cell(text: str) -> str:
    return code(text).replace("|", "\\|")


def link(label: str, path_in_repo: str) -> str:
    """A relative link to a file of the release."""
    return f"[{cell(label)}]({quote(path_in_repo, safe='/._-~')})"


def number(value: float | int) -> str:
    """A number as stated in the spec or the ledger: shortest round-trip text (0.57, 47.9, 115.0)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def tps(value: float) -> str:
    return f"{value:.1f}"


def seconds(value: float) -> str:
    return f"{value:.2f}"


def millis(value_s: float) -> str:
    return f"{value_s * 1000:.1f}"


def accept_length(value: float) -> str:
    return f"{value:.2f}"


def accept_rate(value: float) -> str:
    """A rate recorded as a fraction (0–1; llm-inference-bench) or as a percentage (> 1) → percent."""
    fraction = value if value <= 1 else value / 100
    return f"{fraction * 100:.1f}%"


def delta_pct(new: float, old: float) -> str:
    if old == 0:
        return DASH
    return f"{(new - old) / old * 100:+.1f}%"


def span(values: Sequence[float], fmt: Callable[[float], str]) -> str:
    """min–max of values as the card prints it; one value when both ends print the same."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


# --- tables and lines ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A Markdown table the card prints and the lint reads back cell by cell."""

    name: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: frozenset[int] = frozenset()  # right-aligned (numeric) columns
    key_columns: int = 2  # how many leading cells name a row in lint messages

    def markdown(self) -> Md:
        rule = ["---:" if i in self.right else "---" for i in range(len(self.header))]
        lines = [self.header, tuple(rule), *self.rows]
        return Md("\n".join("| " + " | ".join(row) + " |" for row in lines))

    def parsed(self) -> list[list[str]]:
        """The header and rows as markdown-it-py returns a table's cells (escaped pipes unescaped)."""
        return [[c.replace("\\|", "|") for c in row] for row in (self.header, *self.rows)]


@dataclass(frozen=True)
class Line:
    """A computed sentence, printed as a paragraph `**label:** text`."""

    label: str
    text: str

    @property
    def prefix(self) -> str:
        return f"**{self.label}:**"

    def markdown(self) -> Md:
        return Md(f"{self.prefix} {self.text}")


@dataclass(frozen=True)
class Claim:
    """A computed claim of the honest note: what was measured (`teacher-forced top-1`), the finding in words
    (`improved teacher-forced top-1`; `joiner` links it after another finding: "but", "and"), and the figures
    that back it (`0.57 → 0.64, reported by the authors, …`). Lint finds the finding and the figures in the note."""

    measure: str
    finding: str
    figures: str
    joiner: str = ""

    @property
    def clause(self) -> str:
        """The finding with its figures, as one clause: `but did not show a served acceptance gain (…)`."""
        return " ".join(filter(None, (self.joiner, self.finding))) + f" ({self.figures})"

    @property
    def phrases(self) -> list[str]:
        return [self.finding, self.figures]


@dataclass
class Expected:
    """What one section must show: these tables in this order, these lines, these phrases."""

    tables: list[Table] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)


# --- what a public card may not show -----------------------------------------------------------------

LOCAL_PATH = re.compile(
    r"(?<![\w.~%-])(?:/(?:home|mnt|root|tmp|Users|media|scratch|data|workspace|nfs|lustre|gpfs|private|var|opt|srv|net)/"
    r"|~/|file://|[A-Za-z]:\\)"
)
LOCAL_PATH_SHOWN = "<local path>"


def public_value(value: str) -> str:
    """A launcher value fit for a public card: a local filesystem path is replaced, never printed."""
    return LOCAL_PATH_SHOWN if LOCAL_PATH.search(value) else value
