"""Pure readers and calculators over release evidence: no I/O beyond what a function names, no Context.

- `launcher`: the serving facts of a bash launcher (flags, env, launch order), read through a bash grammar.
- `stats`: Welch's t-test and an equivalence verdict on recheck values ("tied" / "different" / "inconclusive").
- `lm_eval`: lm-evaluation-harness `results_*.json` → typed rows.
- `model_index`: rows and bench cells → huggingface_hub `EvalResult`s for `ModelCardData(eval_results=…)`.
"""
