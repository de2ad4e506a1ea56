"""While the script runs, copy its checkpoints home every ``--checkpoint-every`` in a thread of
its own (the script's lines never wait for it), and once more when it ends; before it starts on
a new TPU, put the resume point back (core/remote/checkpoints.py does the copying)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.remote.checkpoints import CheckpointSet, CheckpointsHome, upload_set
from tpuwizard.core.remote.sync import WORK_DIR, WORK_PYTHON
from tpuwizard.core.remote.transports import Transport

# Loose files changed at this many passes in a row are said never to hold still: the script
# rewrites them more often than they are copied (--checkpoint-every), so none comes home.
RESTLESS_PASSES = 3


@dataclass
class ResumeSetup:
    """What the script's run needs from the chain: where it saves, how often it is copied,
    and (from the second attempt on) the set to resume from."""

    folder: str  # --checkpoints, relative to the script's folder on the worker
    home: CheckpointsHome
    every_s: float
    attempt: int = 1  # a first attempt resumes too when --resume-from gave it a set
    resume_from: CheckpointSet | None = None

    def env(self) -> dict[str, str]:
        """The script's own words for it: where to save and load, and whether to resume.
        The folder is relative to where the script runs (its folder's copy)."""
        env = {"TPUWIZARD_CHECKPOINTS": self.folder}
        if self.resuming:
            env["TPUWIZARD_RESUME"] = "1"
        return env

    @property
    def resuming(self) -> bool:
        """The script starts again (a later attempt), or from an earlier run's set."""
        return self.attempt > 1 or self.resume_from is not None

    def put_back(self, transport: Transport) -> None:
        """The resume point into the checkpoints folder of every worker."""
        if self.resume_from is not None:
            upload_set(transport, self.home, self.resume_from, f"{WORK_DIR}/{self.folder}")


class CheckpointCopier:
    """A copy pass every ``every_s`` while the script runs, and a last one when it ends."""

    def __init__(
        self, transport: Transport, setup: ResumeSetup, emit: Callable[[ev.Event], None]
    ) -> None:
        self.transport, self.setup, self.emit = transport, setup, emit
        self._stop = threading.Event()
        self._said_unusable = False
        self._restless = 0  # passes in a row that found loose files changed since the last
        self._thread = threading.Thread(
            target=self._loop, name="tpuwizard-checkpoints", daemon=True
        )

    def __enter__(self) -> CheckpointCopier:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.copy_once()  # what the script saved last; on a node that went, nothing

    def _loop(self) -> None:
        while not self._stop.wait(self.setup.every_s):
            self.copy_once()

    def copy_once(self) -> None:
        """One pass; a node that went away (or any failed pass) costs only this pass."""
        setup = self.setup
        try:
            result = setup.home.copy_pass(self.transport, WORK_DIR, WORK_PYTHON, setup.folder)
        except Exception:  # the node is going or gone: the chain hears of it from the script
            return
        self._restless = self._restless + 1 if result.restless_files else 0
        if not self._said_unusable:  # once: the script's author needs it only once
            if result.unusable_files:
                self._said_unusable = True
                self.emit(ev.CheckpointsUnusable(setup.folder, result.unusable_files))
            elif self._restless >= RESTLESS_PASSES:
                self._said_unusable = True
                self.emit(
                    ev.CheckpointsUnusable(
                        setup.folder, result.restless_files, self._restless, setup.every_s
                    )
                )
        for taken in result.taken:
            size = sum(int(f["size"]) for f in taken.files.values())
            path = str(setup.home.folder / taken.name)
            self.emit(
                ev.CheckpointCopied(
                    taken.name, taken.step, len(taken.files), size, path, taken.assumed
                )
            )


@contextlib.contextmanager
def resumed_run(
    transport: Transport, resume: ResumeSetup | None, emit: Callable[[ev.Event], None]
) -> Iterator[dict[str, str]]:
    """Around the script's run, once its folder is copied (a launch's and a kept node's
    alike): the resume point put back (:class:`Resumed` said), the checkpoints copied home
    while the block runs; yields the script's extra environment. Without ``resume``, nothing."""
    if resume is None:
        yield {}
        return
    resume.put_back(transport)
    if resume.resuming:
        chosen = resume.resume_from
        name, step = (chosen.name, chosen.step) if chosen is not None else (None, None)
        emit(ev.Resumed(resume.attempt, name, step))
    with CheckpointCopier(transport, resume, emit):
        yield resume.env()
