"""Constants and helpers shared by the reliability tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.hf_api import RepoFile

from tests.helpers import REPO, Run, cli  # noqa: F401  (test_secrets.py imports the runner from here)

_TOKEN_FILES = Path(tempfile.mkdtemp(prefix="hf-release-tokens-"))


def token_file(token: str) -> Path:
    """A file holding `token` (mode 600), for --token-file: tests put no token on a command line either."""
    path = _TOKEN_FILES / f"{token[:11]}-{len(token)}-{abs(hash(token))}"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(token + "\n")
    return path


def token_args(token: str) -> tuple[str, str]:
    return ("--token-file", str(token_file(token)))


# What the suite survived, printed at the end of the run (see conftest.pytest_terminal_summary).
TALLY: Counter[str] = Counter()

Tree = dict[str, tuple[int, str, str | None]]


def tree(api: HfApi, revision: str) -> Tree:
    """path -> (size, git blob id, LFS sha256) at a revision: equal trees hold exactly the same bytes."""
    return {
        e.path: (e.size, e.blob_id, e.lfs.sha256 if e.lfs else None)
        for e in api.list_repo_tree(REPO, revision=revision, recursive=True)
        if isinstance(e, RepoFile)
    }


def main_and_tags(api: HfApi) -> tuple[str | None, dict[str, str]]:
    refs = api.list_repo_refs(REPO)
    main = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    return main, {t.name: t.target_commit for t in refs.tags}


def flip_byte(path: Path, offset: int | None = None) -> None:
    """Change one byte (same size), breaking any hard link first so the build's source is untouched."""
    data = bytearray(path.read_bytes())
    i = len(data) // 2 if offset is None else offset
    data[i] ^= 0x01
    path.unlink()
    path.write_bytes(bytes(data))


def card_of_another_release(dist: Path) -> bytes:
    """The staged card as hf-release would have generated it for another release digest."""
    from release.card.mark import MARK

    text = (dist / "README.md").read_text("utf-8")
    match = MARK.search(text)
    assert match is not None
    return (text[: match.start(1)] + "0" * len(match.group(1)) + text[match.end(1) :]).encode()


def seed_previous_release(api: HfApi, dist: Path) -> str:
    """main holds an earlier release (a generated card, other results, a stale file) tagged v4."""
    api.create_repo(REPO)
    info = api.create_commit(
        REPO,
        [
            CommitOperationAdd("README.md", card_of_another_release(dist)),
            CommitOperationAdd("config.json", (dist / "config.json").read_bytes()),
            CommitOperationAdd("results.tsv", b"commit\tbpw\tstatus\tdescription\n"),
            CommitOperationAdd("old-v4-notes.txt", b"stale\n"),
            # what makes it hf-release's: its release.json lists its files (push deletes only those unasked)
            CommitOperationAdd(
                "release.json",
                json.dumps(
                    {
                        "version": "v4",
                        "files": [
                            {"path_in_repo": p} for p in ("README.md", "config.json", "results.tsv", "old-v4-notes.txt")
                        ],
                    }
                ).encode(),
            ),
        ],
        commit_message="Release v4",
    )
    api.create_tag(REPO, tag="v4", revision=info.oid)
    return info.oid
