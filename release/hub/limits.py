"""The Hub's documented repository limits, checked before the first byte is hashed or sent (the build step
here; push's preflight step in publish/preflight.py).

From hub-docs `repositories-recommendations` and `storage-limits`: a file may not exceed 50 GB (hard; the
upload is refused), and the Hub recommends files < 20 GB, < 10k entries per folder, < 100k files per repo and
commits of < ~100 files. A hard limit is an error; a recommendation crossed is a warning that names the fix.
Private storage quotas depend on the account and are not visible to the client: not checked here.

Paths: the Hub documents no limit, but refused a 1,500-character path at commit, after every file had been
uploaded (issue 23's review, against huggingface.co); MAX_PATH_BYTES is our bound below that. And every
name must be writable where the release is downloaded: `hf download --local-dir D` first writes
`D/.cache/huggingface/download/<path>.<etag>.incomplete`, the etag a 64-hex sha256 for an LFS file
(huggingface_hub issue #2756), under the 255-byte name limit of ext4, APFS and NTFS, which leaves a
name 255 - 76 = 179 bytes.

A release stays one atomic version whatever its file count: huggingface_hub's create_commit uploads every
LFS file's content first (preupload, in batches of the LFS batch API) and then sends one commit that carries
only pointers for them, so `main` and the tag see one commit or none. The commit warning is about that single
commit's size (small files travel inside it), not a reason to split the release into several commits.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable

from release.errors import Problem
from release.staged.manifest import REGULAR_FILE_MAX_BYTES

logger = logging.getLogger(__name__)

GB = 1000**3  # the Hub's documents use decimal units
MAX_FILE_BYTES = 50 * GB
RECOMMENDED_FILE_BYTES = 20 * GB
RECOMMENDED_FOLDER_ENTRIES = 10_000
RECOMMENDED_REPO_FILES = 100_000
RECOMMENDED_COMMIT_FILES = 100
# huggingface_hub documents create_commit as "limited to 25k LFS files and a 1GB payload for regular files":
# which files go by LFS the Hub decides at preupload (the repo's .gitattributes, and every file of 10 MiB or
# more), so before that these are warnings about what the Hub may refuse, not refusals.
COMMIT_LFS_FILES = 25_000
COMMIT_REGULAR_BYTES = 1 * GB
MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255 - len(".") - 64 - len(".incomplete")


def path_refusal(path: str) -> str | None:
    """Why the Hub (or a download of the release) cannot take `path` for its length, or None."""
    if len(path) * 4 <= MAX_NAME_BYTES:  # four UTF-8 bytes a character at most: too short for either bound
        return None
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        return (
            f"is {size:,} bytes long; the Hub refuses long paths at commit (hf-release's bound: "
            f"{MAX_PATH_BYTES:,} bytes in UTF-8): give it a shorter path_in_repo"
        )
    name = max(path.split("/"), key=lambda part: len(part.encode("utf-8")))
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return (
            f"has a name of {len(name.encode('utf-8'))} bytes; `hf download --local-dir` cannot write names over "
            f"{MAX_NAME_BYTES} bytes (UTF-8) on common filesystems: give it a shorter path_in_repo"
        )
    return None


# What hf-release reads from a Hub (release/hub/transport.py bounds every exchange with these). Ours, not
# the Hub's: each is far above what a working Hub sends, so only a broken or hostile one meets it.
MAX_HUB_ANSWER_BYTES = 64 * 1024 * 1024  # an API answer (JSON): a tree page is ~0.3 MB, repo info of 100k files ~25 MB
HUB_ANSWER_SECONDS = 30.0  # an exchange's base allowance, and the longest wait for its first byte
HUB_MIN_BYTES_PER_SECOND = 64 * 1024  # plus one second per 64 KiB moved: a 5 GB upload may take 22 h, a drip fails
# release.json as read from a Hub (push's main-not-newer check, `build --since hub:V`): bounded before it is
# downloaded, by the size the Hub lists, and again as it is read; release.json of 100k files is ~40 MB.
MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def hub_limits(files: Iterable[tuple[str, int]], *, repo_id: str = "release") -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) for a release of (path_in_repo, size) files measured against the Hub's limits."""
    files = list(files)
    errors, warnings = size_limits(files)
    return errors, warnings + count_limits(files, repo_id=repo_id)


def size_limits(files: list[tuple[str, int]]) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings) for each file's size."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    errors += [Problem(path, why) for path, _ in files if (why := path_refusal(path))]
    for path, size in files:
        if size > MAX_FILE_BYTES:
            errors.append(
                Problem(
                    path,
                    f"is {size / GB:.1f} GB; the Hub refuses files over 50 GB: "
                    "shard it (e.g. safetensors shards of ≤ 5 GB)",
                )
            )
        elif size > RECOMMENDED_FILE_BYTES:
            warnings.append(
                Problem(
                    path,
                    f"is {size / GB:.1f} GB; the Hub recommends files under 20 GB: "
                    "shard it (e.g. safetensors shards of ≤ 5 GB)",
                )
            )
    return errors, warnings


def count_limits(files: list[tuple[str, int]], *, repo_id: str) -> list[Problem]:
    """Warnings for the counts the Hub recommends staying under: entries per folder, files per repo and per
    commit — of every file the commit carries (the card, its chart, release.json and SHA256SUMS included)."""
    warnings: list[Problem] = []
    children: dict[str, set[str]] = defaultdict(set)  # folder -> its direct entries (files and subfolders)
    for path, _ in files:
        parts = path.split("/")
        for depth in range(len(parts)):
            children["/".join(parts[:depth]) or "."].add(parts[depth])
    for folder, names in sorted(children.items()):
        if len(names) >= RECOMMENDED_FOLDER_ENTRIES:
            where = f"{repo_id}:{folder}/" if folder != "." else f"{repo_id} (top folder)"
            warnings.append(
                Problem(
                    where,
                    f"holds {len(names):,} entries; the Hub recommends fewer "
                    "than 10,000 per folder: spread the files over subfolders",
                )
            )
    if len(files) >= RECOMMENDED_REPO_FILES:
        warnings.append(
            Problem(
                repo_id,
                f"has {len(files):,} files; the Hub recommends fewer than 100,000 per repo: "
                "merge small files into fewer, larger ones (archives, parquet, shards)",
            )
        )
    elif len(files) > COMMIT_LFS_FILES:
        warnings.append(
            Problem(
                repo_id,
                f"is {len(files):,} files in one commit; huggingface_hub documents commits as "
                "limited to 25,000 LFS files: if more than that of these go by LFS (files of "
                "10 MiB or more and what the repo's .gitattributes sends there), the Hub may "
                "refuse the commit: merge small files into fewer, larger ones",
            )
        )
    elif len(files) > RECOMMENDED_COMMIT_FILES:
        warnings.append(
            Problem(
                repo_id,
                f"is {len(files):,} files in one commit; the Hub recommends commits of under "
                "~100 files. hf-release keeps the release one atomic commit (content uploaded "
                "first, the commit carries pointers); if it times out, pack small files "
                "into fewer, larger ones",
            )
        )
    inline = sum(size for _, size in files if size < REGULAR_FILE_MAX_BYTES)
    if inline > COMMIT_REGULAR_BYTES:
        warnings.append(
            Problem(
                repo_id,
                f"carries {inline / GB:.1f} GB of files under 10 MiB; huggingface_hub documents "
                "a 1 GB payload of regular (non-LFS) files per commit, and the Hub stores such "
                "a file inside the commit unless its .gitattributes sends it to LFS: merge "
                "small files into fewer, larger ones",
            )
        )
    return warnings


def warn(warnings: list[Problem]) -> None:
    """Warnings go to stderr (one line each) and never change the exit code."""
    for w in warnings:
        logger.warning("warning: %s: %s", w.file, w.message)
