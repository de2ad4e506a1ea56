"""The events of a run of the script on a kept node (``run``, each run of ``watch``): part of
the one vocabulary in ``events.py``, which names them all."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.launch.events.base import Event


@dataclass(frozen=True)
class RunStarted(Event):
    """A run of your script on a kept node began (``run``, each run of ``watch``); it holds the
    node's run lock until its ``Finished``."""

    run_id: str
    node: str
    workers: int
    run_dir: str


@dataclass(frozen=True)
class WaitingForNode(Event):
    """``run --wait``: another command is running on the kept node; this run starts after it."""

    node: str
    detail: str


@dataclass(frozen=True)
class FolderSynced(Event):
    """What changed in the script's folder was copied to every worker of the kept node."""

    changed: list[str]  # as worker 0 needed them (each worker gets what it lacks)
    deleted: list[str]
    bytes_sent: int
    workers: int
    seconds: float  # the slowest worker's
    ways: list[str]  # "rsync", or "tar: <why not rsync>", each way used once


@dataclass(frozen=True)
class FolderProgress(Event):
    """A copy of the script's folder to a worker, on its way (a tar of 10 MB or more, said at
    each tenth of it): how many of its bytes are sent."""

    worker: int
    sent: int
    total: int
    workers: int


@dataclass(frozen=True)
class HeartbeatMissed(Event):
    """A heartbeat to the kept node's watchdog was not sent; the run goes on (the next one may
    land before the idle deadline)."""

    node: str
    detail: str
