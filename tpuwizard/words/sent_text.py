"""What of the script's folder leaves this computer, in words: the same for a TPU route's copy to
its workers, Kaggle's kernel and Colab's upload (core/remote/sent_files.py decides it)."""

from __future__ import annotations

from tpuwizard.core.remote.sent_files import IGNORE_FILE, LARGE_FOLDER_BYTES, FolderSent

NAMED_AT_MOST = 8  # secrets named one by one; past these, how many more
UPLINK_BITS_PER_S = 20e6  # a laptop's upload, for "about how long" (the newcomer's report)


def size_words(size: int) -> str:
    """Bytes as a person reads them, in decimal units: ``812 bytes``, ``4.2 kB``, ``312 MB``."""
    if size < 1000:
        return "1 byte" if size == 1 else f"{size} bytes"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            value = size / scale
            shown = f"{value:.0f}" if value >= 100 else f"{value:.1f}".removesuffix(".0")
            return f"{shown} {unit}"
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
    return f"Your script's folder: {sent_words(sent)}, sent {where}.{large}"


def secret_names(sent: FolderSent) -> str:
    """The secrets left out, by name: the first few, then how many more."""
    named = ", ".join(sent.secrets[:NAMED_AT_MOST])
    more = len(sent.secrets) - NAMED_AT_MOST
    return named + (f" and {more} more" if more > 0 else "")


def left_out_lines(sent: FolderSent) -> list[str]:
    """The secrets left out, by name, and how many entries ``.tpuwizardignore`` named; nothing
    when neither."""
    lines = []
    if sent.secrets:
        lines.append(f"  Never sent (keys, credentials, .env files): {secret_names(sent)}.")
    if sent.ignored:
        entries = "1 entry" if sent.ignored == 1 else f"{sent.ignored} entries"
        lines.append(f"  Left out by {IGNORE_FILE}: {entries}.")
    return lines


def folder_lines(sent: FolderSent | None, where: str) -> list[str]:
    """The folder's sentence and what was left out, or nothing when no folder goes."""
    return [] if sent is None else [folder_sentence(sent, where), *left_out_lines(sent)]


def field_words(sent: FolderSent) -> str:
    """On the script field's border: ``3 files, 4.1 kB sent`` (and how many secrets stay)."""
    kept = len(sent.secrets)
    secrets = f"; {kept} secret{'s' if kept != 1 else ''} kept here" if kept else ""
    return f"{sent_words(sent)} sent{secrets}"


def secrets_note(sent: FolderSent) -> str:
    """A note naming the secrets that stay on this computer (empty when none)."""
    if not sent.secrets:
        return ""
    return (
        "Never sent from your script's folder (keys, credentials, .env files): "
        f"{secret_names(sent)}. "
        "They stay on this computer; the script cannot read them on the TPU."
    )


def large_question(sent: FolderSent) -> str:
    """The wizard's question on Create when the folder is over the large mark."""
    seconds = sent.size * 8 / UPLINK_BITS_PER_S
    takes = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
    return (
        f"[b]Your script's folder is {size_words(sent.size)}[/b] ({sent_words(sent)}). It is "
        "copied to each worker after the TPU is created, while it bills: at a laptop's 20 "
        f"Mbit/s that is about {takes}. Data the script does not "
        f"need can stay here: name it in a {IGNORE_FILE} file in the folder (.gitignore's "
        "patterns). Send it all?"
    )
