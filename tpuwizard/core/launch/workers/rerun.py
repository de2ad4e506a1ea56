"""Running the script again on the same node before teardown (the wizard's "Run again" and
"Edit and rerun").

After each run of the script the launch emits :class:`ScriptDone` and, when the front end asked
for reruns and time remains before the node's deadline, waits for its answer on a
:class:`Reruns` channel: run again (the script file is read again, so an edit is picked up), or
go on to teardown. A stop (Delete now, Keep, a signal) ends the wait at once.

Before each rerun, who holds the TPU is listed on every worker, as before a run on a kept node
(held_chip.py's ``check_chip``): what an earlier run left holding it is ended; another's refuses
the rerun (its ScriptDone says so, and the launch waits again) unless the answer was to run
anyway.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import Protocol

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.diagnose.remote import remote_diagnosis
from tpuwizard.core.errors import BadInput, RemoteError, ScriptFailed
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.workers.add_packages import install_packages
from tpuwizard.core.launch.workers.held_chip import ChipHeld
from tpuwizard.core.remote.transports import Transport

# A rerun is offered only while at least this much time is left before the deadline.
MIN_SECONDS_LEFT = 120.0


class Reruns:
    """The front end's answers: True to run the script again (with packages to add to the
    running node first, as ``run --with`` adds them; ``even_if_held``: even though a process
    tpuwizard did not start holds the TPU), False to go on to teardown.

    While it waits for an answer, the node's transport is here too, so the front end can open a
    shell on a worker (the node stays up: it is waiting for the answer).
    """

    def __init__(self) -> None:
        self._answers: queue.Queue[tuple[bool, tuple[PackageSpec, ...], bool]] = queue.Queue()
        self.packages: tuple[PackageSpec, ...] = ()  # the last answer's, for the next run
        self.even_if_held = False  # ... and whether it runs although the TPU is held
        self.transport: Transport | None = None  # set while a ScriptDone waits for an answer
        self.folder: str | None = None  # where the script ran, under the worker's home
        self.env: dict[str, str] = {}  # the script's environment, for the shell's too
        self.workers = 0

    def shell_command(self, worker: int) -> tuple[list[str], str | None, dict[str, str] | None]:
        """(argv, cwd, env) of an interactive shell on ``worker``, while an answer is awaited."""
        from tpuwizard.core.remote.interactive import interactive_command

        transport = self.transport
        if transport is None:
            raise BadInput("A shell opens between runs of the script, while the node waits.")
        if not 0 <= worker < self.workers:
            raise BadInput(f"The worker must be 0-{self.workers - 1}.")
        if self.folder is None:
            return interactive_command(transport, worker, env=self.env)
        return interactive_command(transport, worker, self.folder, self.env)

    def answer(
        self, again: bool, packages: tuple[PackageSpec, ...] = (), even_if_held: bool = False
    ) -> None:
        self._answers.put((again, packages, even_if_held))

    def wait(self, cancel: CancelToken) -> bool:
        while True:
            cancel.check()
            try:
                again, self.packages, self.even_if_held = self._answers.get(timeout=0.1)
                return again
            except queue.Empty:
                continue


class _ScriptLaunch(Protocol):
    cancel: CancelToken
    emit: Callable[[ev.Event], None]
    script_exit_code: int | None

    @property
    def script_folder(self) -> str: ...

    @property
    def script_environment(self) -> dict[str, str]: ...

    def run_script(self, transport: Transport) -> None: ...

    def check_chip(self, transport: Transport, even_if_held: bool) -> None: ...


def run_script_with_reruns(
    launch: _ScriptLaunch, transport: Transport, reruns: Reruns | None, deadline: float | None
) -> None:
    """Run the script; while the front end asks and time remains, run it again.

    Raises the last run's failure (a script that exited non-zero) once the user moves on.
    """
    packages: tuple[PackageSpec, ...] = ()  # to add to the node before the next run
    even_if_held = False  # the next run goes on although the TPU is held
    failure: RemoteError | None = None  # the last run's, raised once the user moves on
    code, runs = 0, 0
    while True:
        runs += 1
        why, package = None, None
        not_installed: tuple[str, ...] = ()
        held = None if runs == 1 else chip_refusal(launch, transport, even_if_held)
        if held is None and packages:
            why = install_packages(
                transport, packages, f"packages-rerun-{runs}", launch.emit, launch.cancel
            )
        if held is not None:
            pass  # nothing was touched: the last run's result stands, and the node waits again
        elif why is not None:
            # The script did not run; the last run's result stands. Said in ScriptDone, not as
            # the launch's failure: the user corrects the names and runs again, or moves on.
            not_installed = tuple(p.text for p in packages)
        else:
            failure, launch.script_exit_code = None, None
            try:
                launch.run_script(transport)
            except RemoteError as err:
                if reruns is None or launch.script_exit_code is None:
                    raise  # no reruns, or not the script's own exit: the launch's usual failure
                failure = err
                # Why it failed, said now, while the node is there to add a package to.
                why = remote_diagnosis(err, str(err))
                package = err.package if isinstance(err, ScriptFailed) else None
            code = launch.script_exit_code or 0
        left = None if deadline is None else deadline - time.time()
        can_rerun = reruns is not None and (left is None or left >= MIN_SECONDS_LEFT)
        seconds_left = None if left is None else left
        launch.emit(
            ev.ScriptDone(code, can_rerun, seconds_left, why, package, not_installed, runs, held)
        )
        if reruns is not None and can_rerun and transport is not None:
            reruns.transport, reruns.workers = transport, transport.workers
            reruns.folder = launch.script_folder  # a shell starts where the script ran
            reruns.env = launch.script_environment  # ... with what the script had
        try:
            again = can_rerun and reruns is not None and reruns.wait(launch.cancel)
        except Cancelled:
            if failure is not None or launch.cancel.keep or code:
                raise  # a failed run stays the news; a Keep is the ending's to carry out
            # Delete now after a run that succeeded: no failure, the deletion was asked for.
            launch.emit(ev.DeletingOnRequest(launch.cancel.reason))
            return
        finally:
            if reruns is not None:
                reruns.transport = None  # the node may be going: no shells from here on
        if not again:
            if failure is not None:
                raise failure
            return
        packages = reruns.packages if reruns is not None else ()
        even_if_held = reruns.even_if_held if reruns is not None else False


def chip_refusal(
    launch: _ScriptLaunch, transport: Transport, even_if_held: bool
) -> ev.ChipHeldRefusal | None:
    """Before a rerun: the chip checked on every worker (an earlier run's holder ended, said as
    its event); the refusal when another's holds it and the answer was not to run anyway."""
    try:
        launch.check_chip(transport, even_if_held)
    except ChipHeld as held:
        return held.refusal()
    return None
