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
HEADING_TAGS = frozenset(f"h{n}" for n in range(1, 7))
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
        html = read_html(tokens)
        found = [
            *(
                f"has the heading {h!r}, which hf-release generates; use another heading"
                for h in _headings(tokens, html.headings)
            ),
            *html.problems(),
            *_number_problems([*_tables(tokens), *html.tables], measured),
        ]
        problems += [Problem(where, message) for message in found[:MAX_PER_FIELD]]
    return problems


def shown_text(inline: Any) -> str:
    """The words a reader sees of an inline token: its text and code, not its marks, link targets or raw HTML
    ("[Verify](#x) this release <!-- -->" reads "Verify this release"; markdown-it has decoded the entities)."""
    out = []
    for child in inline.children or ():
        if child.type in ("text", "code_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return " ".join("".join(out).split())


# --- headings ----------------------------------------------------------------------------------------


def generated_heading(text: str) -> bool:
    name = " ".join(MARKUP.sub("", text).split()).casefold()
    return name in GENERATED or name.startswith(CHANGES.casefold() + " since ")


def _headings(tokens: list[Any], html_headings: list[tuple[str, str]]) -> Iterator[str]:
    for index, tok in enumerate(tokens):
        if tok.type == "heading_open" and generated_heading(shown_text(tokens[index + 1])):
            yield f"{tok.markup if tok.markup.startswith('#') else '#' * int(tok.tag[1])} {tokens[index + 1].content}"
    # <h2>Verify this release</h2> is a section heading on the Hub as much as "## Verify this release" is
    yield from (f"<{tag}>{text}</{tag}>" for tag, text in html_headings if generated_heading(text))


# --- raw HTML ----------------------------------------------------------------------------------------


class _Html(HTMLParser):
    """The raw HTML of a text, fed in order with the Markdown text between it: the open non-void tags (balance),
    the text of each <h1>…<h6> and the rows of each <table> (their cells' text, Markdown between tags included)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.stray: list[str] = []
        self.comment = False  # an unclosed `<!--` was found
        self.headings: list[tuple[str, str]] = []
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._heading: list[str] | None = None
        self._building: list[tuple[str, list[list[str]]]] = []  # tables open, innermost last
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._before = ""  # the last words outside a table: a table's "reported by the authors" may be there

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HEADING_TAGS:
            self._heading = []
        elif tag == "table":
            self._building.append((self._before, []))
        elif tag == "tr" and self._building:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "br":
            self.text(" ")
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        self._close_part(tag)
        if tag not in self.open:
            self.stray.append(f"</{tag}> closes no open <{tag}>")
            return
        while self.open:  # a tag closed over others leaves those unclosed
            last = self.open.pop()
            if last == tag:
                return
            self.stray.append(f"<{last}> is not closed before </{tag}>")

    def _close_part(self, tag: str) -> None:
        if tag in HEADING_TAGS and self._heading is not None:
            self.headings.append((tag, " ".join("".join(self._heading).split())))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._building:
            self._building[-1][1].append(self._row)
            self._row = None
        elif tag == "table" and self._building:
            self.tables.append(self._building.pop())
            self._before = ""

    def handle_data(self, data: str) -> None:
        self.text(data)

    def text(self, data: str) -> None:
        """Words of the text, from the HTML or from the Markdown between its tags."""
        if self._heading is not None:
            self._heading.append(data)
        if self._cell is not None:
            self._cell.append(data)
        elif not self._building and data.strip():
            self._before = data

    def problems(self) -> list[str]:
        out = (
            ["has an unclosed HTML comment '<!--' (no '-->'): it hides the rest of the card on the Hub"]
            if self.comment
            else []
        )
        out += [f"has unbalanced HTML: {s}" for s in self.stray]
        out += [
            f"has unbalanced HTML: <{tag}> is never closed; on the Hub it swallows every later section — close it"
            for tag in self.open
        ]
        return out


def _feed(parser: _Html, tokens: Iterable[Any]) -> None:
    for tok in tokens:
        if tok.type in ("html_block", "html_inline"):
            bare = re.sub(r"<!--.*?-->", "", tok.content, flags=re.DOTALL)
            if "<!--" in bare:
                parser.comment = True
                bare = bare.split("<!--", 1)[0]
            parser.feed(bare)
        elif tok.type in ("text", "code_inline", "code_block", "fence"):
            parser.text(tok.content)  # words, never parsed as HTML (code is not HTML)
        elif tok.type in ("softbreak", "hardbreak"):
            parser.text(" ")
        if tok.children:
            _feed(parser, tok.children)


def read_html(tokens: list[Any]) -> _Html:
    """The raw HTML among markdown-it's html_block and html_inline tokens, read in order (code is not HTML)."""
    parser = _Html()
    _feed(parser, tokens)
    parser.close()
    return parser


def html_problems(tokens: list[Any]) -> list[str]:
    """Unbalanced raw HTML among markdown-it's html_block and html_inline tokens: an unclosed comment, a non-void
    tag never closed, a closing tag that closes nothing (code blocks and code spans are not HTML)."""
    return read_html(tokens).problems()


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
    """(the paragraph just before it, its rows with the header first) of each Markdown table; a cell is the text
    a reader sees (`<b>0.9116</b>` is 0.9116)."""
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
            row.append(shown_text(tok))
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


def _number_problems(tables: list[tuple[str, list[list[str]]]], measured: list[Measured]) -> list[str]:
    """Each number of a table (Markdown or HTML) under a metric the evidence measured that differs from it, or that
    no task of the evidence backs and no "reported by the authors" marks."""
    metrics = {m.metric for m in measured}
    out = []
    for before, rows in tables:
        if not rows or not metrics:
            continue
        header, marked_table = rows[0], bool(REPORTED.search(before) or REPORTED.search(" ".join(rows[0])))
        for row in rows[1:]:
            words = " ".join(c for c in row if _shown(c) is None)
            line = " | ".join(row)
            marked = marked_table or bool(REPORTED.search(line))
            for column, cell in enumerate(row):
                shown = _shown(cell)
                if shown is None:
                    continue
                above = header[column] if column < len(header) else ""
                named = [m for m in metrics if _names(f"{words} {above}", m)]
                if not named:
                    continue  # a number of no metric the evidence measured (a size, a hyperparameter)
                tied = [m for m in measured if m.metric in named and _names(words, m.task)]
                # A task named by the column's header ("| Model | hellaswag |"): its rows may be other models', so
                # a table marked "reported by the authors" is the authors'; unmarked, the number is this release's.
                by_header = [m for m in measured if m.metric in named and _names(above, m.task)]
                if not tied and by_header and not marked:
                    tied = by_header
                if not tied:
                    if not marked:
                        out.append(
                            f"table row {line!r}: {cell!r} gives {' or '.join(sorted(named))} for no task the "
                            "evidence measured it on; name the task of the release's lm-eval results, or mark the "
                            "table 'reported by the authors' (its header, the row, or the line just before it)"
                        )
                    continue
                if not any(_agrees(shown, m.value) for m in tied):
                    first = tied[0]
                    other = "" if tied is not by_header else " (or mark the table 'reported by the authors')"
                    out.append(
                        f"table row {line!r}: the prose gives {first.task} {first.metric} {cell!r}, the evidence "
                        f"gives {first.value:g} ({first.path}); write the evidence's value or remove it{other}"
                    )
    return out
