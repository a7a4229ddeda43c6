"""Pure readers and calculators over release evidence: no I/O beyond what a function names, no Context.

- `bash`: the commands a bash script would run, read through the tree-sitter-bash grammar, never executed.
- `launcher`: the serving facts of a launcher (vLLM server flags, env, launch order), from `bash`.
- `stats`: Welch's t-test and an equivalence verdict on recheck values ("tied" / "different" / "inconclusive").
- `lm_eval`: lm-evaluation-harness `results_*.json` → typed rows.
- `bench_metrics`: the llm-inference-bench cell fields read as metrics (release.json, model-index), defined once.
- `model_index`: rows and bench cells → huggingface_hub `EvalResult`s for `ModelCardData(eval_results=…)`.
"""
