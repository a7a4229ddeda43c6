"""Pure, kind-agnostic readers and checks for the files each model library writes.

Every reader takes local paths (a staging folder's files, keyed by their path in the repo where a
format spans several files), reads only what it needs (headers, small JSON files), bounds every
input in size, count and depth, and returns a frozen dataclass of facts (None when the files cannot
be read at all) plus a list of `release.errors.Problem`s — one line each, naming the file, saying what
is wrong in the terms of the library that wrote it, and what to do. None of them raises on bad input.

- `common`: bounded JSON reads, file lookups in a release's files.
- `safetensors_header`: the one safetensors header reader (the safetensors library, and what it lets through),
  without reading tensor data; sharded weights with their index. Its `read_header` serves check-weights and
  verify, and raises CheckFailed as the checks' loaders do.
- `gguf`: GGUF header, metadata and tensor infos (llama.cpp's format), split files as a set.
- `peft_adapter`: `adapter_config.json` against `adapter_model.safetensors` (LoRA shapes and targets).
- `diffusers_pipeline`: `model_index.json` and its component folders.
- `sentence_transformers`: `modules.json` and its modules, in the 3.x and 6.x layouts.
- `timm_model`: timm's `config.json` against its `model.safetensors`.
- `transformers_config`: a transformers `config.json` read through the architecture's own names
  (`attribute_map`), the task and Auto class, layer counts from tensor names;
  `transformers_weights`: MoE (experts, active parameters) and quantization (stored dtypes) from the headers.
"""
