"""How tpuwizard knows an export's files again (core/handover): the line near their top and the
job file's name. The walk of what a launch sends (core/remote/sent_files.py) reads them too, and
leaves an export's folder out: an export is for an engine, not for the next launch."""

from __future__ import annotations

import os
import stat
from pathlib import Path

MARKER = "Written by tpuwizard export"
JOB_FILENAME = "tpuwizard_job.sh"
HEAD_BYTES = 4096
HEAD_LINES = 8


def marked_head(path: Path) -> str | None:
    """The first lines of the regular file at ``path`` (at most 4 KiB, never through a link, a
    FIFO or anything unreadable: None), when one of them carries :data:`MARKER`; else None."""
    head = file_head(path)
    if head is None:
        return None
    lines = head.splitlines()[:HEAD_LINES]
    return head if any(line.startswith(f"# {MARKER}") for line in lines) else None


def file_head(path: Path) -> str | None:
    """The first 4 KiB of the regular file at ``path`` as text; None for a link, a FIFO or
    anything unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def is_export_folder(folder: Path) -> bool:
    """Whether ``folder`` holds the job file an export wrote."""
    return marked_head(folder / JOB_FILENAME) is not None
