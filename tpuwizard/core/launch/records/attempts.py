"""What each create attempt found: zone, accelerator, route, outcome and when, kept beside the
ledger (practice and real apart, as theirs are) so that ``zones`` and the wizard's Zones step can
put the zones that recently had capacity first and say when each was last tried.

Advice, not safety: a history that cannot be written or read is skipped without a word, and
nothing here decides what is created or deleted. JSON lines, appended under a file lock; only
the newest ``KEEP`` lines are kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tpuwizard.core import untrusted
from tpuwizard.core.launch.records.ledger import Ledger

# Outcomes: the zone had capacity (READY), had none (a stockout, or a queue that ran out), the
# project's quota refused it, another error, or the attempt was cut short before it could tell
# (a fan-out request that lost the race, a stop).
READY, NO_CAPACITY, QUOTA, ERROR, CUT_SHORT = "ready", "no capacity", "quota", "error", "cut short"
OUTCOMES = (READY, NO_CAPACITY, QUOTA, ERROR, CUT_SHORT)
KEEP = 500  # lines kept: weeks of launches, a few tens of kilobytes
MAX_HISTORY_BYTES = 4 * untrusted.MIB  # trimmed to KEEP lines as it passes KEEP * 400 bytes
_TEXT_FIELDS = ("zone", "accelerator", "route", "backend", "outcome")
RECENT_S = 7 * 86400.0  # older attempts say nothing about capacity now


@dataclass(frozen=True)
class Attempt:
    zone: str
    accelerator: str
    route: str
    backend: str
    outcome: str
    at: float  # seconds since the epoch, when the attempt ended


class AttemptHistory:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def beside(cls, ledger: Ledger) -> AttemptHistory:
        """The history kept next to ``ledger``: practice attempts never order real zones."""
        return cls(ledger.path.with_name("attempts.jsonl"))

    def record(self, attempt: Attempt) -> None:
        """Append one attempt; a disk that refuses costs the advice, never the launch."""
        line = json.dumps(asdict(attempt), sort_keys=True).encode() + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size  # a torn last line (a crash): start a new one
            os.write(fd, line if not size or os.pread(fd, 1, size - 1) == b"\n" else b"\n" + line)
            if os.fstat(fd).st_size > KEEP * 400:  # trim now and then, not at every write
                self._trim(fd)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing releases the lock

    def _trim(self, fd: int) -> None:
        lines = os.pread(fd, os.fstat(fd).st_size, 0).split(b"\n")
        kept = b"\n".join([line for line in lines if line.strip()][-KEEP:]) + b"\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, kept, 0)

    def attempts(self, accelerator: str | None = None) -> list[Attempt]:
        """Every readable attempt (for ``accelerator``, when given), oldest first."""
        try:  # untrusted input: a FIFO or a device in its place is no history
            raw = untrusted.read_small(self.path, MAX_HISTORY_BYTES)
        except OSError:
            return []
        found = []
        for line in raw.split(b"\n"):
            try:
                data = untrusted.loads(line, max_depth=2)
                attempt = Attempt(**{k: data[k] for k in Attempt.__dataclass_fields__})
            except (ValueError, TypeError, KeyError):
                continue  # a torn or foreign line: advice lost, nothing else
            if not all(isinstance(getattr(attempt, k), str) for k in _TEXT_FIELDS):
                continue
            if not untrusted.sane_time(attempt.at):
                continue  # a time in the future would put its zone first for ever
            if accelerator is None or attempt.accelerator == accelerator:
                found.append(attempt)
        return found


def latest_by_zone(attempts: Iterable[Attempt], now: float | None = None) -> dict[str, Attempt]:
    """Each zone's most recent attempt of the last week."""
    since = (time.time() if now is None else now) - RECENT_S
    latest: dict[str, Attempt] = {}
    for a in attempts:
        if a.at >= since and (a.zone not in latest or a.at >= latest[a.zone].at):
            latest[a.zone] = a
    return latest


def order_zones(
    zones: Sequence[str], attempts: Iterable[Attempt], now: float | None = None
) -> list[str]:
    """``zones`` with those whose latest attempt got capacity first (the most recent first),
    then the untried and the cut short (in the given order), then those that last failed (the
    oldest failure first: it has had the longest to come free)."""
    latest = latest_by_zone(attempts, now)

    def rank(item: tuple[int, str]) -> tuple[int, float, int]:
        index, zone = item
        a = latest.get(zone)
        if a is not None and a.outcome == READY:
            return (0, -a.at, index)
        if a is None or a.outcome == CUT_SHORT:
            return (1, 0.0, index)
        return (2, a.at, index)

    return [zone for _, zone in sorted(enumerate(zones), key=rank)]


def last_tried_words(attempt: Attempt | None, now: float | None = None) -> str:
    """ "no capacity 12 min ago", "ready 3 h ago"; empty for a zone not tried lately."""
    if attempt is None:
        return ""
    ago = max(0.0, (time.time() if now is None else now) - attempt.at)
    if ago < 60:
        when = "just now"
    elif ago < 3600:
        when = f"{ago // 60:.0f} min ago"
    elif ago < 86400:
        when = f"{ago // 3600:.0f} h ago"
    else:
        when = f"{ago // 86400:.0f} d ago"
    return f"{attempt.outcome} {when}"
