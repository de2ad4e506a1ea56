"""When this computer last sent each kept node a heartbeat, for the countdown in its Kept line.

Apart from :mod:`~tpuwizard.core.launch.kept.iterate` (the run machinery that sends the beats), so
that every command's Kept line reads it without importing transports, jobs and the launch.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from tpuwizard.core import untrusted

MAX_BOOK_BYTES = 1 * untrusted.MIB  # a name and a time per kept node


class HeartbeatBook:
    """When this computer last sent each kept node a heartbeat (for ``status``'s countdown)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, float]:
        """Each node's last beat. Untrusted input (core/untrusted.py): a FIFO or a device in its
        place reads as none; a time that is no number, or is in the future (it would hold a
        countdown, and every later beat, for ever), is dropped."""
        try:
            data = untrusted.read_json(self.path, MAX_BOOK_BYTES, max_depth=2)
            ceiling = time.time() + untrusted.CLOCK_SKEW_S
            return {
                str(k): float(v) for k, v in data.items() if untrusted.number(v) and v <= ceiling
            }
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def record(self, name: str, at: float) -> None:
        """Remember the beat; a disk that refuses (full, read-only) costs the countdown only:
        the beat itself reached the node."""
        data = self.read()
        data[name] = max(at, data.get(name, 0.0))
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(data, sort_keys=True))
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
