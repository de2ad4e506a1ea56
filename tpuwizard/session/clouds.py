"""The session's clouds: one per backend (the TPU API, Compute Engine), each made on first use.

A launch talks to the one its plan names; ``status``, teardown and the leftover check survey
every backend, since a resource of this user's may be on either. Each record in the ledger says
which backend made it, and only that backend's cloud is asked about it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.backends import BACKENDS, COMPUTE, TPU_API

CLOSE_WAIT_S = 10.0  # at most, for a cloud opening as the session closes (a sandbox starts in ~1 s)

if TYPE_CHECKING:
    from tpuwizard.core.cloud.protocol import Cloud
    from tpuwizard.core.launch.records.ledger import Ledger


class CloudBook:
    """The clouds of one session, opened lazily by ``open(backend)``; thread-safe (the wizard's
    heartbeats and zone survey open them from threads)."""

    def __init__(self, open_cloud: Callable[[str], Cloud]) -> None:
        self._open = open_cloud
        self._clouds: dict[str, Cloud] = {}
        self._lock = threading.Lock()
        self._opening: dict[str, threading.Lock] = {}  # per backend: held while it opens
        self._given = False  # a test (or a caller) gave the clouds: survey only those
        self._closed = False  # the session ended: a thread still running opens no cloud

    def get(self, backend: str = TPU_API) -> Cloud:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}")
        with self._lock:
            opening = self._opening.setdefault(backend, threading.Lock())
        # One backend's opening (Compute Engine's library takes seconds to import) never
        # holds up another's: each has its own lock, and one book-wide for the dict alone.
        with opening:
            with self._lock:
                if backend in self._clouds:
                    return self._clouds[backend]
                if self._given:
                    raise LookupError(f"no {backend} cloud was given to this session")
                if self._closed:
                    raise LookupError(f"the session has ended: no {backend} cloud opens now")
                book = self._clouds
            cloud = self._open(backend)
            with self._lock:
                book[backend] = cloud  # into the book it was asked of: forget() made a new one
            return cloud

    def use(self, *clouds: Cloud) -> None:
        """Talk to these clouds (one per backend) and survey no other."""
        with self._lock:
            self._clouds = {c.backend: c for c in clouds}
            self._given = True

    def forget(self) -> None:
        """Mode or project changed: the next call opens new clouds."""
        with self._lock:
            self._clouds = {}
            self._given = False

    def close(self) -> None:
        """The session ended: the clouds opened stay, and none opens after (in practice, a
        thread left running, a price read or a heartbeat, would start a sandbox no one ends,
        and point this process's environment at it)."""
        with self._lock:
            self._closed = True
            opening = list(self._opening.values())
        for lock in opening:  # one opening now ends first (its sandbox is then handed over)
            if lock.acquire(timeout=CLOSE_WAIT_S):
                lock.release()

    @property
    def opened(self) -> bool:
        return bool(self._clouds)

    def surveyed(self) -> tuple[str, ...]:
        """The backends ``status`` and the leftover check list: both, or those given."""
        return tuple(b for b in BACKENDS if b in self._clouds) if self._given else BACKENDS


def worth_surveying(
    backends: tuple[str, ...], ledger: Ledger, project: str | None
) -> tuple[str, ...]:
    """``backends`` less Compute Engine when the ledger holds no record of it in ``project``,
    open or gone, and no line it cannot read: tpuwizard records before every create, so nothing
    of this install's can be there, and the survey makes no Compute Engine call at all."""
    if COMPUTE not in backends:
        return backends
    entries = ledger.entries()
    if ledger.unreadable or any(
        e.resource.backend == COMPUTE and e.resource.project == project for e in entries
    ):
        return backends
    return tuple(b for b in backends if b != COMPUTE)


def backend_title(backend: str) -> str:
    """The words for a backend in tables and messages."""
    titles: dict[str, str] = {TPU_API: "TPU API", COMPUTE: "Compute Engine"}
    return titles.get(backend, backend)
