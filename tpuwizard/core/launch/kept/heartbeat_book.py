"""When this computer last sent each kept node a heartbeat, for the countdown in its Kept line.

Apart from :mod:`~tpuwizard.core.launch.kept.iterate` (the run machinery that sends the beats), so
that every command's Kept line reads it without importing transports, jobs and the launch.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path


class HeartbeatBook:
    """When this computer last sent each kept node a heartbeat (for ``status``'s countdown)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text())
            return {str(k): float(v) for k, v in data.items()}
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
