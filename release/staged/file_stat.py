"""The part of a file's stat that hf-release vouches for: device, inode, size, mtime, ctime and link count.

Build keeps one per staged file from staging to the end (and the digest record compares with it), so it is a
plain tuple of six ints: an os.stat_result holds ~20 fields with their float times (~600 B a file, 30 MB at
50,000 files). The field names are os.stat_result's, so code that reads either reads both.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class FileStat(NamedTuple):
    st_dev: int
    st_ino: int
    st_size: int
    st_mtime_ns: int
    st_ctime_ns: int
    st_nlink: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStat:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_nlink)


Stat = os.stat_result | FileStat  # what the stat records compare: either reads the same six fields


def file_stat(path: str | os.PathLike[str]) -> FileStat:
    """The stat of `path` (its symlink's target) as FileStat."""
    return FileStat.of(os.stat(path))
