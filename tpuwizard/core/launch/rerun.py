"""Running the script again on the same node before teardown (the wizard's "Run again" and
"Edit and rerun").

After each run of the script the launch emits :class:`ScriptDone` and, when the front end asked
for reruns and time remains before the node's deadline, waits for its answer on a
:class:`Reruns` channel: run again (the script file is read again, so an edit is picked up), or
go on to teardown. A stop (Delete now, Keep, a signal) ends the wait at once.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import Protocol

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch import events as ev
from tpuwizard.core.remote.transports import Transport

# A rerun is offered only while at least this much time is left before the deadline.
MIN_SECONDS_LEFT = 120.0


class Reruns:
    """The front end's answers: True to run the script again, False to go on to teardown."""

    def __init__(self) -> None:
        self._answers: queue.Queue[bool] = queue.Queue()

    def answer(self, again: bool) -> None:
        self._answers.put(again)

    def wait(self, cancel: CancelToken) -> bool:
        while True:
            cancel.check()
            try:
                return self._answers.get(timeout=0.1)
            except queue.Empty:
                continue


class _ScriptLaunch(Protocol):
    cancel: CancelToken
    emit: Callable[[ev.Event], None]
    script_exit_code: int | None

    def run_script(self, transport: Transport) -> None: ...


def run_script_with_reruns(
    launch: _ScriptLaunch, transport: Transport, reruns: Reruns | None, deadline: float | None
) -> None:
    """Run the script; while the front end asks and time remains, run it again.

    Raises the last run's failure (a script that exited non-zero) once the user moves on.
    """
    while True:
        failure: RemoteError | None = None
        launch.script_exit_code = None
        try:
            launch.run_script(transport)
        except RemoteError as err:
            if reruns is None or launch.script_exit_code is None:
                raise  # no reruns, or not the script's own exit: the launch's usual failure
            failure = err
        left = None if deadline is None else deadline - time.time()
        can_rerun = reruns is not None and (left is None or left >= MIN_SECONDS_LEFT)
        launch.emit(
            ev.ScriptDone(launch.script_exit_code or 0, can_rerun, None if left is None else left)
        )
        if not can_rerun or reruns is None or not reruns.wait(launch.cancel):
            if failure is not None:
                raise failure
            return
