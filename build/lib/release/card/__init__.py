"""The model card: rendered from the spec's [card] and the evidence, linted in build and verify.

Public API:
    render_card(spec, dist, *, template=None, write=True) -> CardResult   # `hf-release card`
    card_diff(old_text, new_text, *, old_label, new_label, context) -> str # `--diff FILE`
    generated_mark(text) -> str | None     # the release digest a generated card quotes
    hand_edited(text) -> bool | None       # None: no mark; True: changed since hf-release wrote it
    lint_staged(dist, manifest) -> list[Problem]                           # `verify`
    DrawChartEarly, RenderCard, LintCard   # build steps
"""

from .lint import LintCard, lint_staged, lint_text
from .render import CardResult, DrawChartEarly, RenderCard, card_diff, generated_mark, hand_edited, render_card

__all__ = [
    "CardResult",
    "LintCard",
    "RenderCard",
    "card_diff",
    "generated_mark",
    "hand_edited",
    "lint_staged",
    "lint_text",
    "render_card",
    "DrawChartEarly",
]
