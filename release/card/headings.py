"""The card's section headings (H2)."""

# Which ones a card must have depends on its kind and its evidence
# (facts.sections()); the list is recorded in release.json and lint requires each, present and non-empty.
SUMMARY = "Summary"
MODEL = "Model"
EVALUATION = "Evaluation"
HONEST_NOTE = "Honest note"
SERVING = "Serving config"
BENCHMARK = "Benchmark"
LEDGER = "Ledger"
FILES = "Files"
USAGE = "How to use this version"
VERIFY = "Verify this release"
LINEAGE = "Lineage & credit"
LICENSE = "License"
CITATION = "Citation"
ALWAYS = (SUMMARY, FILES, USAGE, VERIFY, LICENSE)  # every card has these
# by the key a template names them with: `sections.summary`, …
BY_KEY = {
    "summary": SUMMARY, "model": MODEL, "honest_note": HONEST_NOTE, "serving": SERVING, "benchmark": BENCHMARK,
    "evaluation": EVALUATION, "ledger": LEDGER, "files": FILES, "usage": USAGE, "verify": VERIFY, "lineage": LINEAGE,
    "license": LICENSE, "citation": CITATION,
}
