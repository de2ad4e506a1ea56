"""Cloud Quotas' answers on disk: each quota id's limit where a launch landed, with when it was
read, per project (one file for Google's and one for the practice sandbox's, as the prices'). Every
live read of the quota check writes it; it is read back only where a live read fails (Cloud Quotas
unreachable, refused, a quota project missing), to say beside that UNKNOWN what the last read
found and when. A cached limit never passes or fails a launch, nor chooses its backend: a limit
raised or lowered since is what the next live read finds, and that decides.

Plain code, no dataclasses or typing at run time: an answer from this file comes in a fresh
process in well under 50 ms (benchmarks/quota_cache.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tpuwizard.core import untrusted

TYPE_CHECKING = False  # typing itself is not imported at run time (a fresh process's answer)
if TYPE_CHECKING:
    from typing import Any

_VERSION = 1
MAX_CACHE_BYTES = 1 * untrusted.MIB  # a few hundred bytes per quota read; more is not ours


def cache_file(folder: Path, practice: bool) -> Path:
    return folder / ("quotas-practice.json" if practice else "quotas-google.json")


class QuotaBook:
    """``entries``: "project|quota id|scope" -> [limit (-1: none), unit, when read]."""

    def __init__(self, entries: dict[str, list[Any]] | None = None) -> None:
        self.entries = entries if entries is not None else {}

    def limit(self, project: str, quota_id: str, scope: str) -> tuple[int, str, float] | None:
        """(limit, unit, when read) as last read for ``quota_id`` in ``scope``; None if never."""
        found = self.entries.get(f"{project}|{quota_id}|{scope}")
        if found is None:
            return None
        limit, unit, read_at = found
        return int(limit), str(unit), float(read_at)

    def put(self, project: str, quota_id: str, scope: str, limit: int, unit: str) -> None:
        self.entries[f"{project}|{quota_id}|{scope}"] = [limit, unit, time.time()]


def load(path: Path) -> QuotaBook:
    """The answers saved at ``path``; none when there is no file, or it is torn, not ours, or
    not sane: read as untrusted input (core/untrusted.py: a regular file, bounded), each
    limit a whole number of -1 or more and each read time not in the future."""
    try:
        saved = untrusted.read_json(path, MAX_CACHE_BYTES, max_depth=None)  # shape checked below
        if saved.get("version") != _VERSION:
            return QuotaBook()
        entries = saved["entries"]
        for key, value in entries.items():  # "a|b|c" -> [number, text, number]: else not ours
            if key.count("|") != 2 or len(value) != 3 or not isinstance(value[0], int):
                return QuotaBook()
            if isinstance(value[0], bool) or value[0] < -1 or not isinstance(value[1], str):
                return QuotaBook()
            if not untrusted.sane_time(value[2]):
                return QuotaBook()
        return QuotaBook(entries)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return QuotaBook()


def save(path: Path, book: QuotaBook) -> None:
    """Write ``book`` whole or not at all (a temporary file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps({"version": _VERSION, "entries": book.entries}), "utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def last_read_words(book: QuotaBook, project: str, ids: tuple[str, ...], scopes: list[str]) -> str:
    """What the last reads of ``ids`` in ``scopes`` found, with when: for beside an UNKNOWN
    (empty when none was read here before)."""
    said = []
    for quota_id in ids:
        for scope in scopes:
            found = book.limit(project, quota_id, scope)
            if found is not None:
                limit, _, read_at = found
                amount = "unlimited" if limit == -1 else f"limit {limit}"
                when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(read_at))
                said.append(f"{quota_id} {amount} in {scope} (read {when})")
    if not said:
        return ""
    return "; the last read found " + "; ".join(said) + ", which may have changed since"
