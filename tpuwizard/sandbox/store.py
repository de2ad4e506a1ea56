"""The sandbox's state file: one JSON document under its home, shared by every sandbox serving it.

Every part of the sandbox's model (nodes, queued resources, operations, VMs) reads and changes
``StateStore.data`` and calls ``save``; none keeps a copy of the dict, because a reload (another
sandbox wrote the file) replaces it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tpuwizard.core.untrusted import MIB, NotASmallFile, read_json
from tpuwizard.sandbox.model import ApiError

# The state file is read within this bound (practice holds a few nodes and their operations,
# a few KiB each): a link to /dev/zero in its place grew a teardown to 24 GB (issue 56).
STATE_LIMIT_BYTES = 64 * MIB


class StateStore:
    """The nodes, queued resources and operations of one sandbox home, kept in ``state.json``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.home.mkdir(parents=True, exist_ok=True)
        self.file = home / "state.json"
        self.lock = threading.RLock()
        self.data: dict[str, Any] = {"nodes": {}, "queued": {}, "operations": {}, "counter": 0}
        self._seen: tuple[int, int, int] | None = None  # the state file as last read or written
        with contextlib.suppress(ApiError):  # a damaged file is said on every request instead
            self._reload()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One request or clock tick: this process's lock, then an exclusive lock on the state
        file shared with every other sandbox serving this home (two launches sharing one
        TPUWIZARD_HOME each run one), reading what another one wrote before changing it."""
        with self.lock:
            fd = os.open(self.home / "state.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._reload()
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.file.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _reload(self) -> None:
        seen = self._signature()
        if seen is not None and seen != self._seen:
            try:
                data = read_json(self.file, STATE_LIMIT_BYTES, max_depth=None)
                if not isinstance(data, dict) or not {"nodes", "queued"} <= data.keys():
                    raise ValueError("it does not hold the sandbox's nodes and queued resources")
            except FileNotFoundError:
                return  # moved aside since the stat: what was read last stays
            except NotASmallFile as err:  # a FIFO would hang the read, /dev/zero never end
                raise self._unreadable(err.why) from err
            except (OSError, ValueError) as err:
                raise self._unreadable(f"it is damaged ({err})") from err
            self.data = data
        self._seen = seen

    def _unreadable(self, why: str) -> ApiError:
        # Never "the request was bad" (the client would say Google rejected it), and never
        # written over: it is the only record of what the practice cloud holds.
        return ApiError(
            500,
            "INTERNAL",
            f"The practice sandbox cannot read its state file {self.file}: {why}. Stop the "
            "practice cloud, then move that file aside: the sandbox then starts empty (its "
            f"nodes are forgotten; their folders stay under {self.home / 'workers'}).",
        )

    def save(self) -> None:
        tmp = self.file.with_name(f"state.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.file)
        self._seen = self._signature()

    def serving_lock(self, how: int) -> int:
        """A descriptor on this home's serving lock: shared while a server serves it."""
        fd = os.open(self.home / "serving.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, how)
        except OSError:
            os.close(fd)
            raise
        return fd
