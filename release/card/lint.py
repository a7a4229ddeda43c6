"""Card lint: the rules a model card must pass in `build` (card/steps.py LintCard) and again in `verify`
(card/staged.py lint_staged).

`lint_text` recomputes every table and computed line with the functions the renderer used
(release/card/facts.py) from the evidence it is given, parses the card back with markdown-it-py and
compares cell by cell, so a number edited by hand is reported with the section and both values.

Rules: YAML front matter valid for the Hub (known license id; `other` with license_name and a
license_link that resolves; no null values; a valid base_model_relation); the generated mark quotes
this release's digest and the text is unchanged since it was written; every required section is
present and non-empty; every relative link and image names a file of the release; no template
syntax outside code; raw HTML balanced (no unclosed `<!--` or `<details>`); no generated section twice; no local
filesystem path anywhere; the numbers match the evidence.
"""

from __future__ import annotations

import copy
import difflib
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from release.card.evidence import Evidence, EvidenceMap
from release.card.facts import Facts, derive
from release.card.headings import ALWAYS, USAGE, VERIFY
from release.card.licenses import BASE_MODEL_RELATIONS, HUB_LICENSES
from release.card.mark import generated_mark, hand_edited
from release.card.prose import generated_heading, html_problems
from release.card.results import model_index, model_index_problems
from release.card.text import LOCAL_PATH, Expected, Table
from release.card.verify_commands import download_commands, joined
from release.errors import Problem
from release.spec import repo_id_refusal
from release.staged.names import CARD_NAME, MANIFEST_NAME

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
TEMPLATE_SYNTAX = re.compile(r"\{\{|\{%|\{#")
HTML_URL = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
RAW_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
ONLY_COMMENTS = re.compile(r"\s*(?:<!--.*?-->\s*)*", re.DOTALL)
MAX_CELL_PROBLEMS = 25
# huggingface_hub.repocard's REGEX_YAML_BLOCK, the Hub library's own reading of where the front matter is:
# copied, since importing that module loads the whole Hub client (hf_api, file_download: ~0.3 s) for one regex
YAML_BLOCK = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")


# --- the lint ----------------------------------------------------------------------------------------


@dataclass
class Section:
    name: str
    tokens: list[Any] = field(default_factory=list)


def lint_text(
    text: str,
    *,
    release_files: set[str],
    release_digest: str | None = None,
    version: str | None = None,
    evidence: Evidence | None = None,
    emap: EvidenceMap | None = None,
    label: str = CARD_NAME,
    repo_id: str | None = None,
    facts: Facts | None = None,
) -> list[Problem]:
    """Every problem of a card's text; `evidence` (with `emap`, the manifest's record of which file
    plays which part) enables the number checks, and with `repo_id` and `version` the `model-index` check.
    `facts` are the ones the card was rendered from (build has them), else derived from `emap` and `evidence`."""
    from markdown_it import MarkdownIt

    problems: list[Problem] = []

    def problem(message: str) -> None:
        problems.append(Problem(label, message))

    match = YAML_BLOCK.search(text)
    front: Any = None  # the front matter's YAML, parsed once
    if not match or text[: match.start()].strip():
        problem("has no YAML front matter (--- … ---) at the top; the Hub needs it for license and base_model")
        body, body_offset = text, 0
    else:
        front = _load_yaml(match.group(2))
        for message in _front_matter_problems(match.group(2), front, release_files):
            problem(message)
        body, body_offset = text[match.end() :], text[: match.end()].count("\n")

    digest = generated_mark(text)
    if digest is None:
        problem("has no hf-release generated mark (<!-- hf-release: generated card; release_digest=… -->)")
    else:
        if release_digest is not None and digest != release_digest:
            problem(
                f"quotes release_digest {digest[:12]}…, this release's is {release_digest[:12]}…; re-render the card"
            )
        if hand_edited(text):
            problem(
                "was edited by hand after hf-release generated it (its text no longer matches the mark's body_sha256)"
            )

    for number, line in enumerate(text.splitlines(), start=1):
        for hit in LOCAL_PATH.finditer(line):
            problem(
                f"line {number}: local filesystem path {_excerpt(line, hit.start())!r}; a public card must not name "
                "this node's disk"
            )

    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(body)
    problems_from = _template_leftovers(body, tokens, body_offset)
    for message in problems_from:
        problem(message)
    # An unclosed `<!--` (or `<details>`) swallows every later section on the Hub: the prose is checked for it
    # before rendering (card/prose.py, naming the spec's key); here for the card as a whole (a custom template).
    for message in html_problems(tokens):
        problem(message)

    sections, titled = _sections(tokens)
    # A second "## Verify this release" (a card built before the prose was checked, an edited template) would be
    # read as the section itself, its commands unchecked: each section hf-release generates appears once.
    h2 = [
        tokens[i + 1].content.strip() for i, tok in enumerate(tokens) if tok.type == "heading_open" and tok.tag == "h2"
    ]
    for name in dict.fromkeys(n for n in h2 if h2.count(n) > 1 and generated_heading(n)):
        problem(
            f"the section '## {name}' appears {h2.count(name)} times; hf-release generates it once — remove the other"
        )
    if not titled:
        problem("has no title (a '# …' heading)")
    for name in emap.sections if emap else ALWAYS:
        if name not in sections:
            problem(f"the required section '## {name}' is missing")
        elif not _meaningful(sections[name].tokens):
            problem(f"the section '## {name}' is empty")

    for url, where in [*_urls(tokens), *_raw_link_targets(body, tokens)]:
        why = _link_problem(url, release_files)
        if why:
            problem(f"{where} {url!r} {why}")

    if version is not None and repo_id is not None and VERIFY in sections:
        shown = joined("\n".join(tok.content for tok in sections[VERIFY].tokens if tok.type in ("fence", "code_block")))
        for command in download_commands(repo_id, version):
            if command not in shown:
                problem(f"section '{VERIFY}' does not give the command {command!r} in a code block")

    if version is not None and USAGE in sections:
        shown = "\n".join(tok.content for tok in sections[USAGE].tokens if tok.type in ("fence", "code_block"))
        pins = emap.kind.usage_pins if emap else ('revision="{version}"',)
        for phrase in (pin.format(version=version) for pin in pins):
            if phrase not in shown:
                problem(f"section '{USAGE}' does not pin this version: no code block has {phrase}")

    if evidence is not None:
        if emap is None:
            problems.append(
                Problem(
                    MANIFEST_NAME,
                    "has no readable `card` record; the card's numbers cannot be checked — rebuild the release",
                )
            )
        else:
            if facts is None:
                facts, derive_problems = derive(emap, evidence)
                problems.extend(derive_problems)
            for section_name, expected in facts.expected().items():
                if section_name in sections:
                    problems.extend(_compare(label, sections[section_name], expected))
            if repo_id is not None and version is not None and isinstance(front, dict):
                problems.extend(model_index_problems(front, model_index(emap, evidence, repo_id, version), label))
    return list(dict.fromkeys(problems))


# --- front matter ------------------------------------------------------------------------------------


def front_matter_problems(raw: str, release_files: set[str]) -> list[str]:
    return _front_matter_problems(raw, _load_yaml(raw), release_files)


class _YamlRefused:
    """What the YAML reader raised for the front matter (its message is the problem reported)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _load_yaml(raw: str) -> Any:
    """The front matter's YAML (yamlio: safe, depth-bounded), or _YamlRefused with the parser's error."""
    import yaml

    from release.util import yamlio

    try:
        return yamlio.load(raw)
    except yaml.YAMLError as exc:
        return _YamlRefused(exc)


def _front_matter_problems(raw: str, data: Any, release_files: set[str]) -> list[str]:
    out: list[str] = []
    if TEMPLATE_SYNTAX.search(raw):
        out.append("front matter contains template syntax ({{, {% or {#)")
    if isinstance(data, _YamlRefused):
        return [*out, f"front matter is not valid YAML: {data.error}"]
    if not isinstance(data, dict):
        return [*out, "front matter is not a YAML mapping"]
    for path in _nulls(data):
        out.append(f"front matter {path} is null; the Hub rejects null values — give a value or remove the key")

    lic = data.get("license")
    if lic is None and "license" not in data:
        out.append("front matter has no license")
    elif isinstance(lic, str):
        if lic not in HUB_LICENSES:
            near = difflib.get_close_matches(lic, sorted(HUB_LICENSES), n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            out.append(
                f"front matter license {lic!r} is not a Hub license id{hint}; "
                "use one or 'other' with license_name and license_link"
            )
        if lic == "other":
            name, link = data.get("license_name"), data.get("license_link")
            if not isinstance(name, str) or not name:
                out.append("front matter license 'other' needs license_name")
            if not isinstance(link, str) or not link:
                out.append(
                    "front matter license 'other' needs license_link (a file of the release such as LICENSE, or an "
                    "https URL)"
                )
            else:
                why = _link_problem(link, release_files, external_ok=("https",))
                if why:
                    out.append(f"front matter license_link {link!r} {why}")
    elif lic is not None:
        out.append(f"front matter license must be one license id (a string), not {type(lic).__name__}")

    bases = data.get("base_model")
    base_list = [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []
    if bases is not None and not base_list:
        out.append("front matter base_model must be a Hub model id or a list of them")
    for base in base_list:
        if not isinstance(base, str) or repo_id_refusal(base):
            out.append(f"front matter base_model {base!r} is not a Hub model id (namespace/name)")
    relation = data.get("base_model_relation")
    if relation is not None:
        if relation not in BASE_MODEL_RELATIONS:
            out.append(f"front matter base_model_relation {relation!r} is not one of {', '.join(BASE_MODEL_RELATIONS)}")
        if not base_list:
            out.append("front matter base_model_relation needs base_model")
        if relation == "merge" and len(base_list) < 2:
            out.append(
                "front matter base_model_relation 'merge' means several models merged; "
                "it needs two or more base_model ids"
            )
    for key in ("library_name", "pipeline_tag"):
        if key in data and data[key] is not None and not (isinstance(data[key], str) and data[key]):
            out.append(f"front matter {key} must be a non-empty string")
    tags = data.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) and t for t in tags)):
        out.append("front matter tags must be a list of strings")
    datasets = data.get("datasets")
    for ds in [datasets] if isinstance(datasets, str) else datasets if isinstance(datasets, list) else []:
        if isinstance(ds, str) and repo_id_refusal(ds):
            out.append(f"front matter datasets entry {ds!r} is not a Hub dataset id")
    try:
        from huggingface_hub.repocard_data import ModelCardData

        ModelCardData(**copy.deepcopy(data))  # the mapping is checked for model-index next: not handed over
    except Exception as exc:  # noqa: BLE001 - the Hub library's own verdict, whatever it raises
        out.append(f"front matter is rejected by huggingface_hub's ModelCardData: {exc}")
    return out


def _nulls(value: Any, path: str = "") -> Iterable[str]:
    if value is None:
        yield path or "(top level)"
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _nulls(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nulls(v, f"{path}[{i}]")


# --- structure, links, leftovers --------------------------------------------------------------------


def _sections(tokens: list[Any]) -> tuple[dict[str, Section], bool]:
    """The H2 sections by heading text (each up to the next H1 or H2), and whether there is an H1."""
    sections: dict[str, Section] = {}
    current: Section | None = None
    titled = False
    skip = 0
    for index, tok in enumerate(tokens):
        if skip:
            skip -= 1
            continue
        if tok.type == "heading_open" and tok.tag in ("h1", "h2"):
            name = tokens[index + 1].content.strip()
            skip = 2  # the heading's inline and heading_close
            if tok.tag == "h1":
                titled = titled or bool(name)
                current = None
            else:
                current = sections.setdefault(name, Section(name))
            continue
        if current is not None:
            current.tokens.append(tok)
    return sections, titled


def _meaningful(tokens: list[Any]) -> bool:
    for tok in tokens:
        if tok.type == "html_block" and ONLY_COMMENTS.fullmatch(tok.content):
            continue
        if tok.type == "inline" and tok.content.strip():
            return True
        if tok.type in ("fence", "code_block", "html_block", "hr") and tok.content.strip():
            return True
    return False


def _children(tokens: list[Any]) -> Iterable[Any]:
    for tok in tokens:
        yield tok
        if tok.children:
            yield from _children(tok.children)


def _urls(tokens: list[Any]) -> Iterable[tuple[str, str]]:
    for tok in _children(tokens):
        if tok.type == "link_open":
            yield str(tok.attrs.get("href", "")), "link"
        elif tok.type == "image":
            yield str(tok.attrs.get("src", "")), "image"
        elif tok.type in ("html_block", "html_inline"):
            content = re.sub(r"<!--.*?-->", "", tok.content, flags=re.DOTALL)
            for url in HTML_URL.findall(content):
                yield url, "HTML link"


def _link_problem(
    url: str, release_files: set[str], external_ok: tuple[str, ...] = ("http", "https", "mailto")
) -> str | None:
    """Why a link target does not resolve, or None."""
    url = url.strip()
    if not url:
        return "is empty"
    if url.startswith("#"):
        return None
    scheme = SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() in external_ok:
            return None
        return f"uses the {scheme.group(1)}: scheme; link to a file of the release or an https URL"
    if url.startswith("//"):
        return None if "https" in external_ok else "is not an https URL"
    path = unquote(url.split("#", 1)[0].split("?", 1)[0])
    if path.startswith("/"):
        return "is an absolute path; link relative to the repo root"
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return "points outside the repo"
    if normal not in release_files:
        return "does not resolve to a file of the release"
    return None


def _prose_lines(body: str, tokens: list[Any]) -> Iterable[tuple[int, str]]:
    """(index, line) of the body outside code blocks, with inline code spans removed."""
    code_lines: set[int] = set()
    for tok in tokens:
        if tok.type in ("fence", "code_block") and tok.map:
            code_lines.update(range(tok.map[0], tok.map[1]))
    for index, line in enumerate(body.splitlines()):
        if index not in code_lines:
            yield index, INLINE_CODE.sub("", line)


def _template_leftovers(body: str, tokens: list[Any], offset: int) -> list[str]:
    """Template syntax outside code blocks and code spans (spec data is printed escaped, never raw)."""
    out = []
    for index, bare in _prose_lines(body, tokens):
        hit = TEMPLATE_SYNTAX.search(bare)
        if hit:
            out.append(
                f"line {index + 1 + offset}: leftover template syntax {_excerpt(bare, hit.start())!r} outside code"
            )
    return out


def _raw_link_targets(body: str, tokens: list[Any]) -> Iterable[tuple[str, str]]:
    """Link targets written `](…)` in the prose, including those markdown-it refuses to link (file:, javascript:)."""
    for _, bare in _prose_lines(body, tokens):
        for url in RAW_LINK.findall(bare):
            yield url, "link"


def _excerpt(line: str, at: int, width: int = 30) -> str:
    return line[max(0, at - 5) : at + width].strip()


# --- numbers -----------------------------------------------------------------------------------------


def _tables(tokens: list[Any]) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    rows: list[list[str]] | None = None
    row: list[str] | None = None
    for tok in tokens:
        if tok.type == "table_open":
            rows = []
        elif tok.type == "table_close" and rows is not None:
            tables.append(rows)
            rows = None
        elif rows is not None and tok.type == "tr_open":
            row = []
        elif rows is not None and tok.type == "tr_close" and row is not None:
            rows.append(row)
            row = None
        elif row is not None and tok.type == "inline":
            row.append(tok.content.strip())
    return tables


def _paragraphs(tokens: list[Any]) -> list[str]:
    out = []
    for index, tok in enumerate(tokens):
        if tok.type == "inline" and index and tokens[index - 1].type == "paragraph_open":
            out.append(" ".join(tok.content.split()))
    return out


def _compare(label: str, section: Section, expected: Expected) -> list[Problem]:
    problems: list[Problem] = []
    name = section.name
    found = _tables(section.tokens)
    for index, table in enumerate(expected.tables):
        if index >= len(found):
            problems.append(
                Problem(
                    label,
                    f"section '{name}': the table '{table.name}' is missing; "
                    f"the evidence gives {len(table.rows)} row(s)",
                )
            )
            continue
        problems.extend(_compare_table(label, name, table, found[index]))
    if expected.tables and len(found) > len(expected.tables):
        problems.append(
            Problem(
                label,
                f"section '{name}' has {len(found)} tables; hf-release computes {len(expected.tables)} from the "
                "evidence",
            )
        )

    paragraphs = _paragraphs(section.tokens)
    for line in expected.lines:
        want = " ".join(line.markdown().split())
        shown = next((p for p in paragraphs if p.startswith(line.prefix)), None)
        if shown is None:
            problems.append(
                Problem(label, f"section '{name}': the line {line.prefix} is missing; the evidence gives {want!r}")
            )
        elif shown != want:
            problems.append(
                Problem(
                    label,
                    f"section '{name}', line {line.prefix}: the card shows {shown!r}, the evidence gives {want!r}",
                )
            )

    text = " ".join(" ".join(p.split()) for p in paragraphs)
    for phrase in expected.phrases:
        if " ".join(phrase.split()) not in text:
            # The claim's figures as the card shows them: the served A/B up to its verdict, or the proxy's pair.
            pattern = r"\([^()]*?\bvs\b[^();]*[;)]" if " vs " in phrase else r"\([^()]*?→[^(),]*[,)]"
            claim = re.search(pattern, text)
            problems.append(
                Problem(
                    label,
                    f"section '{name}': a computed claim does not match the evidence: the card shows "
                    f"{claim.group(0) if claim else 'no such claim'!r}, the evidence gives {phrase!r}",
                )
            )
    return problems


def _compare_table(label: str, section: str, table: Table, shown: list[list[str]]) -> list[Problem]:
    want = table.parsed()
    where = f"section '{section}', table '{table.name}'"
    problems = []
    if shown[:1] != want[:1]:
        problems.append(
            Problem(
                label,
                f"{where}: the header is {' | '.join(shown[0]) if shown else '(none)'!r}, hf-release writes "
                f"{' | '.join(want[0])!r}",
            )
        )
        return problems
    if len(shown) != len(want):
        problems.append(
            Problem(label, f"{where}: the card has {len(shown) - 1} row(s), the evidence gives {len(want) - 1}")
        )
    header = want[0]
    for r, (row_shown, row_want) in enumerate(zip(shown[1:], want[1:], strict=False), start=1):
        key = " / ".join(row_want[: table.key_columns])
        for c, column in enumerate(header):
            got = row_shown[c] if c < len(row_shown) else "(no cell)"
            if got != row_want[c]:
                problems.append(
                    Problem(
                        label,
                        f"{where}, row {r} ({key}), column '{column}': the card shows {got!r}, the evidence gives "
                        f"{row_want[c]!r}",
                    )
                )
                if len(problems) >= MAX_CELL_PROBLEMS:
                    problems.append(Problem(label, f"{where}: more differences not listed"))
                    return problems
    return problems
