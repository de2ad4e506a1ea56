"""The Kaggle route through the session: practice or real, its client, its ledger, its stops.

Practice (``--sandbox``) starts the Kaggle stand-in in this process and points kaggle's own
client at it the way the client allows: ``KAGGLE_API_ENVIRONMENT=LOCALHOST`` and the stand-in as
the HTTP proxy, with the stand-in's token in place of any of the user's (a practice run never
reaches Kaggle). Real runs use the credentials kaggle 2.2.5 would find; where none are, the run
ends with that diagnosis before anything is asked of Kaggle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core import paths
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.kaggle import diagnosis
from tpuwizard.core.kaggle.credentials import NoCredentials, find_credentials
from tpuwizard.core.kaggle.ledger import LEDGER_FILE, KernelLedger
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Kernels
from tpuwizard.core.kaggle.run import KaggleRun, run_kernel, stop_kernel
from tpuwizard.core.launch.events.launch_events import Event, Failed, Finished
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.session.run_outcome import write_free_outcome
from tpuwizard.session.signals import StopSignals, signal_name

if TYPE_CHECKING:
    from tpuwizard.core.kaggle.records import KernelSeen
    from tpuwizard.core.launch.plan.packages import PackageSpec

KAGGLE_FAULTS_ENV = "TPUWIZARD_KAGGLE_FAULTS"  # practice: the stand-in's faults
POLL_ENV = "TPUWIZARD_KAGGLE_POLL"  # seconds between status reads (default 5)
TIMEOUT_ENV = "TPUWIZARD_KAGGLE_TIMEOUT"  # the longest wait for one answer (default 60 s)
STOP_WORDS = "stopping: asking Kaggle whether the kernel still runs..."


class _StopAsked(BaseException):
    """Raised in the main thread by the first stop signal: the run's calls end where they are.
    Not an ``Exception``: the client's ``except Exception`` around each call (client.py) would
    take a stop during the push for a lost answer, and the run would go on."""


def call_timeout_s() -> float:
    """The longest wait for one answer from Kaggle: ``TPUWIZARD_KAGGLE_TIMEOUT`` seconds, else
    the client's default (kaggle's own requests have no timeout)."""
    from tpuwizard.core.kaggle.client import CALL_TIMEOUT_S

    try:
        return max(0.1, float(os.environ.get(TIMEOUT_ENV) or CALL_TIMEOUT_S))
    except ValueError:
        return CALL_TIMEOUT_S


def kernel_ledger() -> KernelLedger:
    return KernelLedger(paths.state_dir() / LEDGER_FILE)


# What practice changes in this process's environment, put back when the run ends (the
# wizard goes on in the same process: its Google sandbox must not be reached through the proxy).
PRACTICE_ENV = (
    "KAGGLE_API_ENVIRONMENT",
    "KAGGLE_API_TOKEN",
    "KAGGLE_CONFIG_DIR",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "KAGGLE_USERNAME",
    "KAGGLE_KEY",
)


def practice_kernels_dir() -> Path:
    """Where the practice stand-in keeps each pushed version's folder (its session's files)."""
    return paths.state_dir() / "kaggle-sandbox" / "kernels"


def start_practice_kaggle(faults: str | None = None) -> Any:  # -> KaggleStandIn
    """The stand-in, with kaggle's client pointed at it until :func:`restore_environment`
    (kaggle keeps its endpoint, read when first imported, for the rest of this process)."""
    from tpuwizard.sandbox.kaggle.server import start_kaggle_stand_in

    home = paths.state_dir() / "kaggle-sandbox"
    server = start_kaggle_stand_in(
        practice_kernels_dir(), faults or os.environ.get(KAGGLE_FAULTS_ENV)
    )
    os.environ.update(
        KAGGLE_API_ENVIRONMENT="LOCALHOST",
        KAGGLE_API_TOKEN=server.token,
        KAGGLE_CONFIG_DIR=str(home / "config"),
        HTTP_PROXY=server.proxy,
        http_proxy=server.proxy,
    )
    for name in ("NO_PROXY", "no_proxy", "KAGGLE_USERNAME", "KAGGLE_KEY"):
        os.environ.pop(name, None)
    return server


def restore_environment(before: dict[str, str | None]) -> None:
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def kaggle_practice_why(sandbox: bool) -> str | None:
    """Why a Kaggle run is practice, decided for this route alone (Google's credentials play
    no part): asked for, or no Kaggle credentials found; None: it is real."""
    if sandbox:
        return "practice was asked for (--sandbox)"
    found = find_credentials()
    if isinstance(found, NoCredentials):
        return "no Kaggle credentials were found (" + "; ".join(found.looked_at) + ")"
    return None


def practice_for_kaggle(sandbox: bool) -> bool:
    """Practice or real: practice when asked for, or when no Kaggle credentials are found."""
    return kaggle_practice_why(sandbox) is not None


def kaggle_route_for(
    script: Path,
    sandbox: bool,
    runs: Path,
    fetch: tuple[str, ...] = (),
    max_run_minutes: float | None = None,
    packages: tuple[PackageSpec, ...] = (),
) -> KaggleRoute:
    """A run of ``script`` on Kaggle's TPU (the stand-in in practice: asked for with
    ``sandbox``, or without Kaggle credentials), checked before any call: :class:`BadInput`
    for a missing script, a bad package or a folder too large. ``packages``: installed at the
    kernel's start."""
    from tpuwizard.core.kaggle.kernel import machine_shape
    from tpuwizard.core.kaggle.run import prepare_run
    from tpuwizard.session.session import new_run

    why = kaggle_practice_why(sandbox)
    run_id, run_dir = new_run(runs)
    shape = machine_shape(None)
    run = prepare_run(
        script,
        (),
        fetch,
        max_run_minutes,
        shape,
        run_id,
        run_dir,
        why is not None,
        packages=packages,
        practice_why=why or "",
    )
    return KaggleRoute(why is not None, run)


class KaggleRoute:
    """One run on Kaggle, as a front end drives it."""

    def __init__(self, practice: bool, run: KaggleRun) -> None:
        self.practice, self.run = practice, run
        self.ledger = kernel_ledger()
        self.kernels: Kernels | None = None
        self.stand_in: Any = None
        self.env_before: dict[str, str | None] | None = None
        self.stand_in_user = ""
        self.summary = RunSummary()  # what the run came to, folded as its events pass
        self.outcome_written = False

    def left_running(self, state: str | None) -> KernelSeen | None:
        """The kernel this run pushed, while its session may still run (its ledger record not
        closed), as `status` would show it with Kaggle's ``state`` (the last one followed);
        None where nothing was pushed or its end is recorded."""
        from tpuwizard.core.kaggle.records import KernelRecord, KernelSeen

        kernels = self.kernels
        if kernels is None:
            return None
        ref = f"{kernels.username}/{self.run.spec.name}"
        for record in self.ledger.held():  # each with its earlier records' fields (pid, url)
            if (record["kernel"], record["run_id"]) == (ref, self.run.run_id):
                if record["op"] == "ended":
                    return None
                seen = KernelRecord.from_ledger(record)
                # practice: held by this command's stand-in, which ends it when it ends
                return KernelSeen(seen, state or "PUSHED", True, held_by_command=self.practice)
        return None

    def _poll_s(self) -> float:
        try:
            return max(0.05, float(os.environ.get(POLL_ENV) or 5.0))
        except ValueError:
            return 5.0

    def events(self) -> Iterator[Event]:
        """The run's events, each folded into :attr:`summary`; at its end the run folder's
        outcome.json says what it came to (the TPU routes' record, in this route's facts)."""
        for event in self._events():
            self.summary.apply(event)
            if isinstance(event, Finished):
                self.write_outcome(event.exit_code)
            yield event

    def write_outcome(self, exit_code: int, stopped_by: str | None = None) -> None:
        write_free_outcome(self.run.run_dir, self.summary, exit_code, stopped_by)
        self.outcome_written = True

    def _events(self) -> Iterator[Event]:
        folder = str(self.run.run_dir)
        if self.practice:
            self.env_before = {name: os.environ.get(name) for name in PRACTICE_ENV}
            self.stand_in = start_practice_kaggle()
            self.stand_in_user = str(self.stand_in.username)
        else:
            found = find_credentials()
            if isinstance(found, NoCredentials):
                yield Failed("sign-in", diagnosis.no_credentials(found))
                yield Finished(False, EXIT_CLOUD, folder, None)
                return
        try:
            from tpuwizard.core.kaggle.client import KaggleApiKernels

            self.kernels = KaggleApiKernels(call_timeout_s())
        except KaggleCallFailed as err:
            yield Failed(err.what, diagnosis.call_failed(err.what, err.detail, err.status))
            yield Finished(False, EXIT_CLOUD, folder, None)
            return
        yield from run_kernel(self.kernels, self.run, self.ledger, poll_s=self._poll_s())

    def stop_events(self) -> Iterator[Event]:
        if self.kernels is not None:
            yield from stop_kernel(self.kernels, self.run, self.ledger)

    def close(self) -> None:
        if self.stand_in is not None:
            self.stand_in.switch_off()
            self.stand_in = None
            # Its kernels' sessions ended with it; the kernel is gone with the stand-in once
            # its files show no process of its session left.
            from tpuwizard.sandbox.kaggle.sessions import session_on_disk

            ref = f"{self.stand_in_user}/{self.run.spec.name}"
            record = self.ledger.last_words().get((ref, self.run.run_id))
            open_record = record is not None and record["op"] != "deleted"
            if open_record and not session_on_disk(practice_kernels_dir(), ref).runs:
                why = "practice stand-in ended, and no process of its session runs"
                self.ledger.record("deleted", ref, self.run.run_id, why=why)
        if self.env_before is not None:
            restore_environment(self.env_before)
            self.env_before = None

    def follow(self, show: Callable[[Event], None], announce: Callable[[str], None]) -> int:
        """Every event shown; a stop signal ends the run's calls and asks about the kernel.
        Returns the exit code: the run's, or 128 + the first stop signal."""
        code = EXIT_CLOUD

        def stop(_signum: int) -> None:
            raise _StopAsked

        try:
            with StopSignals(announce, STOP_WORDS, stop) as signals:
                try:
                    for event in self.events():
                        show(event)
                        if isinstance(event, Finished):
                            code = event.exit_code
                except _StopAsked:
                    for event in self.stop_events():
                        self.summary.apply(event)
                        show(event)
            if not self.outcome_written:  # stopped before its end: said as such
                self.write_outcome(signals.exit_code(code), signal_name(signals.first))
            return signals.exit_code(code)
        finally:
            self.close()
