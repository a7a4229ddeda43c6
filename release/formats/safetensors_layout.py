"""What the safetensors format fixes: element sizes by dtype, the dtypes config.json names, and the largest
header the library reads."""

# Byte widths of the safetensors dtypes whose elements are whole bytes; the sub-byte
# F4/F6 formats cannot be laid out by a simple numel * width rule, so they are refused.
DTYPE_BYTES: dict[str, int] = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
    "F8_E4M3FNUZ": 1,
    "F8_E5M2FNUZ": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
    "C64": 8,
}

# config.json's `dtype` (or `torch_dtype`) → the safetensors dtype its floating-point tensors are stored in.
CONFIG_DTYPES: dict[str, str] = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}

# safetensors refuses headers above this size.
MAX_HEADER_BYTES = 100_000_000
