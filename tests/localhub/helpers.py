"""Constants shared by the local Hub's own tests (fixtures live in conftest.py; its tokens in tests/helpers.py)."""

import hashlib
import secrets
from pathlib import Path

MiB = 1024 * 1024
CHUNK = 2 * MiB  # small multipart parts keep the multipart tests fast


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def temp_files(root: Path) -> list[Path]:
    """Files in the local Hub's work folders under `root`, besides their ownership marks."""
    from release.localhub.fs import WORK_MARK, WORK_PREFIX

    return [p for p in root.glob(f"{WORK_PREFIX}*/**/*") if p.is_file() and p.name != WORK_MARK]


# Accounts of the session-wide Hub (tests/localhub/conftest.py `shared_hub`): alice belongs to org acme, bob to none.
ALICE_TOKEN = "hf_alice_" + secrets.token_hex(12)
BOB_TOKEN = "hf_bob_" + secrets.token_hex(12)
