"""Pure, kind-agnostic readers and checks for the files several kinds share; a reader only one kind uses is in that
kind's folder (release/kinds/<kind>/reader.py).

Every reader takes local paths (a staging folder's files, keyed by their path in the repo where a
format spans several files), reads only what it needs (headers, small JSON files), bounds every
input in size, count and depth, and returns a frozen dataclass of facts (None when the files cannot
be read at all) plus a list of `release.errors.Problem`s — one line each, naming the file, saying what
is wrong in the terms of the library that wrote it, and what to do. None of them raises on bad input.

- `common`: bounded JSON reads, file lookups in a release's files.
- `safetensors_header`: the one safetensors header reader (the safetensors library, and what it lets through),
  without reading tensor data; sharded weights with their index. Its `read_header` serves check-weights and
  verify, and raises CheckFailed as the checks' loaders do.
- `safetensors_layout`: what the safetensors format fixes: element sizes by dtype, the dtypes config.json names, the
  largest header the library reads.
- `transformers_config`: a transformers `config.json` read through the architecture's own names
  (`attribute_map`), the task and Auto class, layer counts from tensor names;
  `transformers_sizes`: its sizes through the model type's own names (both of the others need them);
  `transformers_weights`: MoE (experts, active parameters) and quantization (stored dtypes) from the headers.
"""
