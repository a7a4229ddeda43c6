"""The card's "Verify this release" section: commands a reader runs to check what they downloaded.

`sha256sum -c SHA256SUMS` after `hf download REPO --revision vN` (and the same check on every CPU at once,
for releases whose files one core would take minutes to hash), and, when the spec says how the
release is signed ([card.signature]), the `model_signing verify` command for the OpenSSF model-signing
bundle `model.sig`, with the flags a Hub download needs (model_signing 1.x):

- `hf download --local-dir D` keeps its bookkeeping in `D/.cache/huggingface/`, which the signature does
  not cover: without `--ignore-paths D/.cache` verification fails on "Extra files found".
  (`.gitattributes`, which every Hub repo holds, is skipped by model_signing's default `--ignore-git-paths`.)
- a cache snapshot (`hf download` without --local-dir) is a folder of symlinks into the blob store:
  without `--allow_symlinks` verification refuses them.

The card is rendered before `model.sig` exists (the signature covers the card), so the signer is
declared in the spec, not read from the signature. tests/card/test_verify_commands.py runs exactly these
commands, parsed out of a built card, on a real `hf download` of a pushed release. Pure: no I/O.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from release.card.text import CODE_WIDTH, Md, code, esc
from release.staged.names import MANIFEST_NAME, SIGNATURE_NAME, SUMS_NAME

# model_signing 1.1.1 imports pyOpenSSL (`from OpenSSL import crypto`) without declaring it: a fresh
# `pip install model-signing` fails with "No module named 'OpenSSL'" on every verify.
INSTALL = "pip install 'model-signing==1.1.1' pyopenssl"
METHOD_WORDS = {"sigstore": "Sigstore keyless signing", "key": "a private key"}
PRINTED_METHOD = re.compile(r"^model_signing verify (\w+) ", re.MULTILINE)


def local_dir(repo_id: str, version: str) -> str:
    return f"{repo_id.rsplit('/', 1)[-1]}-{version}"


def download_commands(repo_id: str, version: str) -> tuple[str, str]:
    """The two commands every card prints (lint requires them in the section's code). Every word is quoted
    for the shell: pasting them runs nothing a repo id or a version could smuggle in (`v1$(touch x)`)."""
    repo, rev, folder = (shlex.quote(w) for w in (repo_id, version, local_dir(repo_id, version)))
    return (f"hf download {repo} --revision {rev} --local-dir {folder}", f"(cd {folder} && sha256sum -c {SUMS_NAME})")


def fast_check_command(repo_id: str, version: str) -> str:
    """`sha256sum -c` on every CPU at once (`nproc`: the CPUs this shell may use): xargs gives each line of
    SHA256SUMS to a `sha256sum -c` of its own, up to `nproc` at a time, the next file to the first one free; each
    prints its file's OK or FAILED, and xargs exits 123 if any failed, after all have run. One line at a time
    (xargs -d '\\n'), never split into words: a name with spaces or quotes is passed as it is written."""
    folder = shlex.quote(local_dir(repo_id, version))
    return (  # continued to fit the card's code box (CODE_WIDTH)
        f"(cd {folder} && \\\n"
        f"    xargs -d '\\n' -n 1 -P \"$(nproc)\" \\\n"
        f'    sh -c \'printf "%s\\n" "$1" | sha256sum -c\' sh < {SUMS_NAME})'
    )


def wrapped(command: str) -> str:
    """A one-line `hf download` command continued before each option when it is wider than CODE_WIDTH (lint reads
    continued lines back as one: `joined`)."""
    if len(command) <= CODE_WIDTH:
        return command
    return re.sub(r" (--[\w-]+)", r" \\\n    \1", command)


def joined(code_text: str) -> str:
    """Code as the shell reads it: each line continued with a backslash joined to the next."""
    return re.sub(r" *\\\n\s*", " ", code_text)


def _signing_flags(signature: dict[str, Any]) -> list[list[str]]:
    if signature["method"] == "sigstore":
        return [["--identity", signature["identity"]], ["--identity_provider", signature["issuer"]]]
    return [["--public_key", signature["public_key"]]]


def _model_signing(signature: dict[str, Any], folder: str, extra: list[str], *, quoted: bool = False) -> str:
    """`model_signing verify METHOD FOLDER --signature FOLDER/model.sig …`, one option per continued line;
    `quoted`: FOLDER is a shell variable."""

    def q(word: str) -> str:
        return f'"{word}"' if quoted and word.startswith("$") else shlex.quote(word)

    lines = [
        ["model_signing", "verify", signature["method"], folder],
        ["--signature", f"{folder}/{SIGNATURE_NAME}"],
        *_signing_flags(signature),
        extra,
    ]
    return " \\\n    ".join(" ".join(q(w) for w in words) for words in lines)


def _block(lines: list[str]) -> Md:
    return Md("```bash\n" + "\n".join(lines) + "\n```")


def attestation_commands(repo_id: str, version: str, repository: str) -> list[str]:
    """`gh attestation verify` for SHA256SUMS and release.json of the downloaded folder: the release workflow of
    `repository` attested both (every file's sha256 is in them); the same for a local and a CI build."""
    folder = local_dir(repo_id, version)
    return [
        f"gh attestation verify {shlex.quote(f'{folder}/{name}')} --repo {shlex.quote(repository)}"
        for name in (SUMS_NAME, MANIFEST_NAME)
    ]


def verify_section(
    repo_id: str, version: str, signature: dict[str, Any] | None, attestation: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The section's pieces for the template: `local_dir` and `snapshot` code blocks, `signer` line (or None),
    `attestation` code block (or None)."""
    folder = local_dir(repo_id, version)
    local = [wrapped(command) for command in download_commands(repo_id, version)]
    snapshot = [
        f"D=$(hf download {shlex.quote(repo_id)} --revision {shlex.quote(version)} --quiet)",
        f'(cd "$D" && sha256sum -c {SUMS_NAME})',
    ]
    signer = None
    if signature is not None:
        local.append(_model_signing(signature, folder, ["--ignore-paths", f"{folder}/.cache"]))
        snapshot.append(_model_signing(signature, "$D", ["--allow_symlinks"], quoted=True))
        if signature["method"] == "sigstore":
            who = f"identity {code(signature['identity'])}, issuer {code(signature['issuer'])}"
        else:
            where = f", published at <{esc(signature['public_key_url'])}>" if signature.get("public_key_url") else ""
            who = f"the holder of the private key paired with the public key {code(signature['public_key'])}{where}"
        signer = Md(
            f"**Signed ({METHOD_WORDS[signature['method']]}, OpenSSF model signing, `{SIGNATURE_NAME}`):** {who}"
        )
    return {
        "local_dir": _block(local),
        "snapshot": _block(snapshot),
        "signer": signer,
        "folder": Md(code(folder)),
        "signed": signature is not None,
        "install": _block([INSTALL]) if signature is not None else None,
        "fast": _block([fast_check_command(repo_id, version)]),
        "attestation": _block(attestation_commands(repo_id, version, attestation["repository"]))
        if attestation is not None
        else None,
        "attested_by": Md(code(attestation["repository"])) if attestation is not None else None,
    }


def printed_method(card_text: str) -> str | None:
    """The `model_signing verify METHOD` a card tells readers to run, or None (the card declares no signature)."""
    found = PRINTED_METHOD.search(card_text)
    return found.group(1) if found else None
