"""Remote verify's second download path: a Xet-backed file as hf_xet users get it, rebuilt from the CAS's
reconstruction (terms, xorb ranges) rather than read through the plain resolve. A Hub could serve different
bytes on either path, and neither hf_xet nor huggingface_hub checks what it rebuilt against the sha256: the
file is downloaded into a temporary folder, hashed and deleted, one file at a time (disk held: one file)."""

from __future__ import annotations

import hashlib
import importlib.util
import tempfile
from pathlib import Path

from huggingface_hub import constants, hf_hub_download

from release.hub.client import HubClient, remote_errors, with_retries

READ_CHUNK = 1 << 20


def xet_downloads_possible() -> bool:
    """hf_xet is importable and not switched off (HF_HUB_DISABLE_XET): what huggingface_hub downloads Xet files by."""
    return not constants.HF_HUB_DISABLE_XET and importlib.util.find_spec("hf_xet") is not None


def reconstructed_digests(hub: HubClient, repo_id: str, commit: str, expected: dict[str, int]) -> list[tuple[str, int]]:
    """Each file of `expected` (path -> size, every one Xet-backed on the Hub) as hf_xet rebuilds it at `commit`,
    in order: (sha256, size). huggingface_hub picks hf_xet because the resolve answers with `X-Xet-Hash`."""
    out = []
    with tempfile.TemporaryDirectory(prefix="hf-release-xet-") as folder:
        for path in expected:

            def fetch(path: str = path) -> str:
                return hf_hub_download(
                    repo_id, path, revision=commit, endpoint=hub.endpoint, token=hub.api.token, local_dir=folder
                )

            with remote_errors(repo_id, f"rebuilding {path} through Xet at {commit[:12]}"):
                got = Path(with_retries(fetch, f"rebuilding {path} through Xet"))
            out.append(_digest(got))
            got.unlink()
    return out


def _digest(path: Path) -> tuple[str, int]:
    sha256, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        while chunk := f.read(READ_CHUNK):
            sha256.update(chunk)
            size += len(chunk)
    return sha256.hexdigest(), size
