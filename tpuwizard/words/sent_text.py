"""What of the script's folder leaves this computer, in words: the same for a TPU route's copy to
its workers, Kaggle's kernel and Colab's upload (core/remote/sent_files.py decides it)."""

from __future__ import annotations

from tpuwizard.core.remote.sent_files import IGNORE_FILE, LARGE_FOLDER_BYTES, FolderSent

NAMED_AT_MOST = 8  # secrets named one by one; past these, how many more


def size_words(size: int) -> str:
    """Bytes as a person reads them, in decimal units: ``812 bytes``, ``4.2 kB``, ``312 MB``."""
    if size < 1000:
        return "1 byte" if size == 1 else f"{size} bytes"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{size} bytes"  # not reached: every size of 1000 or more has a unit above


def sent_words(sent: FolderSent) -> str:
    """``3 files, 312 MB`` (``more than 512 MB`` where the walk stopped at the limit)."""
    files = f"{sent.files} file" if sent.files == 1 else f"{sent.files} files"
    size = size_words(sent.size)
    return f"more than {size}" if sent.over else f"{files}, {size}"


def folder_sentence(sent: FolderSent, where: str) -> str:
    """The plan line's sentence: what is sent and where (``to each worker``)."""
    large = (
        f" That is over {size_words(LARGE_FOLDER_BYTES)}: the copy takes a while; a "
        f"{IGNORE_FILE} file in the folder leaves data out."
        if sent.large
        else ""
    )
    return f"Your script's folder: {sent_words(sent)} sent {where}.{large}"


def left_out_lines(sent: FolderSent) -> list[str]:
    """The secrets left out, by name, and how many entries ``.tpuwizardignore`` named; nothing
    when neither."""
    lines = []
    if sent.secrets:
        named = ", ".join(sent.secrets[:NAMED_AT_MOST])
        more = len(sent.secrets) - NAMED_AT_MOST
        named += f" and {more} more" if more > 0 else ""
        lines.append(f"  Never sent (keys, credentials, .env files): {named}.")
    if sent.ignored:
        entries = "1 entry" if sent.ignored == 1 else f"{sent.ignored} entries"
        lines.append(f"  Left out by {IGNORE_FILE}: {entries}.")
    return lines


def folder_lines(sent: FolderSent | None, where: str) -> list[str]:
    """The folder's sentence and what was left out, or nothing when no folder goes."""
    return [] if sent is None else [folder_sentence(sent, where), *left_out_lines(sent)]
