"""The spec's own Markdown (the [card] text fields the author writes), checked before it is rendered into the card.

The card prints these fields as written, so what they could do to the card is refused here, naming the field:
- a heading the template generates ("## Verify this release", any level): a second, fake section a reader
  could take for hf-release's own (its commands are checked; the fake one's are not);
- raw HTML that is not balanced: an unclosed `<details>` or `<!--` hides every later section on the Hub;
- a number in a table that names a metric the evidence measured (an lm-eval task and metric) and differs
  from it; a number in a table that names a measured metric but cannot be tied to one value of the evidence
  (another task, another model) unless the table says "reported by the authors" (its header, its row or the
  paragraph just before it), as the honest note's proxy figures are shown.
Pure: markdown-it-py (the card lint's parser) and Python's html.parser, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from release.card.headings import CHANGES, ORDER
from release.errors import Problem
from release.evidence.lm_eval import LmEvalRun

# The headings the default templates write besides headings.py's (templates/_card.md.j2).
TEMPLATE_ONLY = ("Rechecks",)
GENERATED = frozenset(h.casefold() for h in (*ORDER, *TEMPLATE_ONLY))
VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr".split()
)  # HTML elements that have no closing tag
REPORTED = re.compile(r"reported by the authors", re.IGNORECASE)
NUMBER = re.compile(r"^[+\-−]?(\d+(?:\.\d*)?|\.\d+)(%?)(?![\w.])")
MARKUP = re.compile(r"[*`~]+")  # emphasis and code marks (not `_`: lm-eval names have it)
MAX_PER_FIELD = 10


def prose_fields(card: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(dotted key, Markdown) of each [card] text the author writes that the card prints as Markdown."""
    for key in ("summary", "what", "intended_use", "limitations", "training_data"):
        if isinstance(card.get(key), str):
            yield key, card[key]
    for section, key in (
        ("license", "text"),
        ("honest_note", "text"),
        ("serving", "text"),
        ("bench", "text"),
        ("usage", "text"),
        ("lineage", "intro"),
    ):
        value = card.get(section, {}).get(key)
        if isinstance(value, str):
            yield f"{section}.{key}", value
    for key in ("ops_notes", "original_work"):
        for index, item in enumerate(card.get(key, [])):
            if isinstance(item, str):
                yield f"{key}[{index}]", item
    for index, entry in enumerate(card.get("lineage", {}).get("entries", [])):
        if isinstance(entry.get("credit"), str):
            yield f"lineage.entries[{index}].credit", entry["credit"]


def prose_problems(card: dict[str, Any], evals: dict[str, LmEvalRun], spec_name: str) -> list[Problem]:
    """Every generated heading, unbalanced HTML and unchecked number in the spec's prose, one line each."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    measured = _measured(evals)
    problems: list[Problem] = []
    for key, text in prose_fields(card):
        where = f"{spec_name} card.{key}"
        tokens = md.parse(text)
        found = [
            *(f"has the heading {h!r}, which hf-release generates; use another heading" for h in _headings(tokens)),
            *html_problems(tokens),
            *_number_problems(tokens, measured),
        ]
        problems += [Problem(where, message) for message in found[:MAX_PER_FIELD]]
    return problems


# --- headings ----------------------------------------------------------------------------------------


def generated_heading(text: str) -> bool:
    name = " ".join(MARKUP.sub("", text).split()).casefold()
    return name in GENERATED or name.startswith(CHANGES.casefold() + " since ")


def _headings(tokens: list[Any]) -> Iterator[str]:
    for index, tok in enumerate(tokens):
        if tok.type == "heading_open" and generated_heading(tokens[index + 1].content):
            yield f"{tok.markup if tok.markup.startswith('#') else '#' * int(tok.tag[1])} {tokens[index + 1].content}"


# --- raw HTML ----------------------------------------------------------------------------------------


class _Balance(HTMLParser):
    """Tracks the open non-void tags across every piece of raw HTML fed to it, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.stray: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if tag not in self.open:
            self.stray.append(f"</{tag}> closes no open <{tag}>")
            return
        while self.open:  # a tag closed over others leaves those unclosed
            last = self.open.pop()
            if last == tag:
                return
            self.stray.append(f"<{last}> is not closed before </{tag}>")


def _raw_html(tokens: Iterable[Any]) -> Iterator[str]:
    for tok in tokens:
        if tok.type in ("html_block", "html_inline"):
            yield tok.content
        if tok.children:
            yield from _raw_html(tok.children)


def html_problems(tokens: list[Any]) -> list[str]:
    """Unbalanced raw HTML among markdown-it's html_block and html_inline tokens: an unclosed comment, a non-void
    tag never closed, a closing tag that closes nothing (code blocks and code spans are not HTML)."""
    parser = _Balance()
    out = []
    for html in _raw_html(tokens):
        bare = re.sub(r"<!--.*?-->", "", html, flags=re.DOTALL)
        if "<!--" in bare:
            out.append("has an unclosed HTML comment '<!--' (no '-->'): it hides the rest of the card on the Hub")
            bare = bare.split("<!--", 1)[0]
        parser.feed(bare)
    parser.close()
    out += [f"has unbalanced HTML: {s}" for s in parser.stray]
    out += [
        f"has unbalanced HTML: <{tag}> is never closed; on the Hub it swallows every later section — close it"
        for tag in parser.open
    ]
    return out


# --- numbers in tables -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    task: str
    metric: str  # without lm-eval's filter ("acc_norm")
    value: float
    path: str


def _measured(evals: dict[str, LmEvalRun]) -> list[Measured]:
    return [Measured(row.task, row.metric, row.value, path) for path, run in sorted(evals.items()) for row in run.rows]


def _names(text: str, name: str) -> bool:
    """`text` names `name` as a word of its own ("acc" is not named by "acc_norm")."""
    return re.search(rf"(?<![\w-]){re.escape(name.casefold())}(?![\w-])", text.casefold()) is not None


def _tables(tokens: list[Any]) -> Iterator[tuple[str, list[list[str]]]]:
    """(the paragraph just before it, its rows with the header first) of each table."""
    before = ""
    rows: list[list[str]] | None = None
    row: list[str] | None = None
    for index, tok in enumerate(tokens):
        if tok.type == "table_open":
            rows = []
        elif tok.type == "table_close" and rows is not None:
            yield before, rows
            rows = None
        elif rows is not None and tok.type == "tr_open":
            row = []
        elif rows is not None and tok.type == "tr_close" and row is not None:
            rows.append(row)
            row = None
        elif row is not None and tok.type == "inline":
            row.append(" ".join(MARKUP.sub("", tok.content).split()))
        elif rows is None and tok.type == "inline" and index and tokens[index - 1].type == "paragraph_open":
            before = tok.content
        elif rows is None and tok.type not in ("paragraph_close", "paragraph_open", "inline"):
            before = ""


def _shown(cell: str) -> tuple[float, int, bool] | None:
    """(value, decimals, percent) of a cell that starts with a number ("0.6016", "60.2%", "0.60 ± 0.01")."""
    match = NUMBER.match(cell.replace(",", ""))
    if match is None:
        return None
    digits = match.group(1)
    return float(digits), len(digits.split(".")[1]) if "." in digits else 0, bool(match.group(2))


def _agrees(shown: tuple[float, int, bool], value: float) -> bool:
    """The evidence's value, rounded to the decimals shown, as a fraction or (as lm-eval's readers often write
    it) in percent: "0.6016", "0.60", "60.16" and "60.2%" all agree with 0.6016."""
    number, decimals, percent = shown
    scales = (100.0,) if percent else (1.0, 100.0)
    return any(abs(round(value * scale, decimals) - number) < 10 ** -(decimals + 3) for scale in scales)


def _number_problems(tokens: list[Any], measured: list[Measured]) -> list[str]:
    metrics = {m.metric for m in measured}
    out = []
    for before, rows in _tables(tokens):
        if not rows or not metrics:
            continue
        header, marked_table = rows[0], bool(REPORTED.search(before) or REPORTED.search(" ".join(rows[0])))
        for row in rows[1:]:
            words = " ".join(c for c in row if _shown(c) is None)
            for column, cell in enumerate(row):
                shown = _shown(cell)
                if shown is None:
                    continue
                context = f"{words} {header[column] if column < len(header) else ''}"
                named = [m for m in metrics if _names(context, m)]
                if not named:
                    continue  # a number of no metric the evidence measured (a size, a hyperparameter)
                tied = [m for m in measured if m.metric in named and _names(words, m.task)]
                line = " | ".join(row)
                if not tied:
                    if not (marked_table or REPORTED.search(line)):
                        out.append(
                            f"table row {line!r}: {cell!r} gives {' or '.join(sorted(named))} for no task the "
                            "evidence measured it on; name the task of the release's lm-eval results, or mark the "
                            "table 'reported by the authors' (its header, the row, or the line just before it)"
                        )
                    continue
                if not any(_agrees(shown, m.value) for m in tied):
                    first = tied[0]
                    out.append(
                        f"table row {line!r}: the prose gives {first.task} {first.metric} {cell!r}, the evidence "
                        f"gives {first.value:g} ({first.path}); write the evidence's value or remove it"
                    )
    return out
