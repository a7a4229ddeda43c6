"""No token in a release: a text file holding the user's own Hugging Face token, or a string shaped like one, is
refused before anything is hashed (a symlink or a copied notes file would publish it with the model).

Only text is read (weights and binary files are not: a token in them would be found by nothing short of a
scanner, and they are gigabytes), each file up to MAX_SCAN_BYTES. The token is never quoted: the problem names
the file and the line.
"""

from __future__ import annotations

import os
import re

from release.pipeline import Context, Done, StepResult

MAX_SCAN_BYTES = 32 * 1024 * 1024  # a tokenizer.json of a large vocabulary is ~30 MB; larger text is data, not notes
MAX_TOKEN_FILE = 4096
BINARY_SNIFF = 8192  # a NUL in a file's first bytes: binary, as git decides it
MIN_OWN_TOKEN = 8  # a shorter "token" (a test's, a typo) would match ordinary text
TOKEN_SHAPE = re.compile(rb"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}")
WEIGHT_ROLES = frozenset({"weights"})


def own_tokens() -> list[bytes]:
    """The tokens this machine would publish with: HF_TOKEN (and its older name), and the login cache's file."""
    found = [os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN")]
    try:
        from huggingface_hub import constants

        with open(constants.HF_TOKEN_PATH, "rb") as f:
            found.append(f.read(MAX_TOKEN_FILE).decode("utf-8", "replace"))
    except (OSError, ImportError):
        pass
    return [t.strip().encode() for t in found if t and len(t.strip()) >= MIN_OWN_TOKEN]


def token_line(data: bytes, own: list[bytes]) -> tuple[int, str] | None:
    """(line number, what was found) for the first token in `data`, else None; binary data (a NUL) is skipped."""
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    hits = [(data.find(t), "your own Hugging Face token") for t in own if t in data]
    shaped = TOKEN_SHAPE.search(data)
    if shaped is not None:
        hits.append((shaped.start(), "a string shaped like a Hugging Face token (hf_ and 30+ letters or digits)"))
    if not hits:
        return None
    at, what = min(hits)
    return data.count(b"\n", 0, at) + 1, what


class CheckNoToken:
    """A release file holding a token is refused, naming the file and the line, never the token."""

    name = "no-token"

    def run(self, ctx: Context) -> StepResult:
        own, read = own_tokens(), 0
        for f in ctx.files:
            # the size as staged: f.size is the hashing's, and the hashing runs beside this step
            size = f.stat.st_size if f.stat is not None else f.size
            if f.generated or f.role in WEIGHT_ROLES or size > MAX_SCAN_BYTES:
                continue
            try:
                with open(f.staged, "rb") as file:
                    data = file.read(BINARY_SNIFF)
                    if b"\0" in data:  # binary: not read further
                        continue
                    data += file.read(MAX_SCAN_BYTES + 1 - len(data))
            except OSError:
                continue  # collect and the role checks report a file that cannot be read
            read += 1
            found = token_line(data[:MAX_SCAN_BYTES], own)
            if found is not None:
                line, what = found
                ctx.problem(
                    f"{f.path_in_repo}:{line}",
                    f"holds {what}; publishing it would hand it to every reader: remove it from the file "
                    f"(source {f.source}), revoke it at https://huggingface.co/settings/tokens if it was real "
                    "and shared, then build again",
                )
        return Done(f"{read} text files read for tokens")
