"""The model card: rendered from the spec's [card] and the evidence, linted in build and verify.

Modules, each one responsibility (data flows text → facts → render/lint → steps/staged); import the
one you need: this package module imports none of them, so `push` loads only mark.py.
    text.py         Markdown pieces and number formatting (pure)
    headings.py     the section headings
    evidence.py     what the card is computed from; the record of which file plays which part
    facts.py        what the card states, derived from the evidence (pure); what only a kind's cards
                    show comes from its card part (release/kinds/, e.g. speculative.py)
    serving.py      the serving flags and launch order, from the launcher (pure)
    results.py      the lm-eval results table and the front matter's model-index (pure)
    verify_commands.py  the "Verify this release" commands (pure)
    mark.py         the generated mark (what `push` reads to detect a hand-edited card)
    render.py       front matter + sandboxed template → card text
    lint.py         the rules a card's text must pass
    steps.py        build steps: DrawChartEarly, RenderCard, LintCard
    staged.py       a staged release's card: lint_staged (`verify`), render_card and card_diff (`hf-release card`)
"""
