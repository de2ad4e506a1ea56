"""The Colab route through the session: practice or real, its ``colab`` program, its ledger, its
stops.

Real runs use Google's ``colab`` found on PATH. Practice (``--sandbox``, and the default where
neither that program nor its sign-in token is on this computer) runs the stand-in program
(tpuwizard/sandbox/colab/cli.py) in the same way, its runtimes under the state folder, so a
session it made outlives this process as a real one would (``status`` and ``teardown`` find it).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import tpuwizard
from tpuwizard.core import paths
from tpuwizard.core.colab.ledger import LEDGER_FILE
from tpuwizard.core.colab.program import ColabProgram
from tpuwizard.core.colab.run import ColabRun, run_session, stop_session
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.launch.events.launch_events import Event, Finished
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.session.run_outcome import write_free_outcome
from tpuwizard.session.signals import StopSignals, signal_name

POLL_ENV = "TPUWIZARD_COLAB_POLL"  # seconds between checks that the CLI still answers (30)
STOP_WORDS = "stopping: running colab stop on the session and checking that it is gone..."
TOKEN_FILE = Path("~/.config/colab-cli/token.json")  # where colab_cli's auth.py keeps it


class _StopAsked(BaseException):
    """Raised in the main thread by the first stop signal: the run's calls end where they are."""


def colab_ledger() -> KernelLedger:
    """The record of every Colab session tpuwizard asks for (the Kaggle ledger's format: its
    ``kernel`` is the session's name; ``intent`` before ``colab new``, ``pushed`` once made,
    ``deleted`` once ``colab sessions`` no longer lists it)."""
    return KernelLedger(paths.state_dir() / LEDGER_FILE)


def practice_home() -> Path:
    return paths.state_dir() / "colab-sandbox"


def practice_program() -> ColabProgram:
    """The stand-in, run as a program with this tpuwizard's code (never another install's)."""
    package_parent = str(Path(tpuwizard.__file__).resolve().parent.parent)
    python_path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    env = {"TPUWIZARD_COLAB_HOME": str(practice_home()), "PYTHONPATH": python_path}
    return ColabProgram([sys.executable, "-m", "tpuwizard.sandbox.colab.cli"], env)


def real_program() -> ColabProgram | None:
    """Google's ``colab`` on PATH; None where it is not installed."""
    found = shutil.which("colab")
    return ColabProgram([found]) if found else None


def colab_practice_why(sandbox: bool) -> str | None:
    """Why a Colab run is practice: asked for, or neither the colab CLI nor its sign-in token
    is on this computer; None: it is real."""
    if sandbox:
        return "practice was asked for (--sandbox)"
    if shutil.which("colab") is None and not TOKEN_FILE.expanduser().is_file():
        return f"Google's colab program is not installed here and there is no {TOKEN_FILE}"
    return None


def practice_for_colab(sandbox: bool) -> bool:
    """Practice when asked for, or where neither the colab CLI nor its token is here."""
    return colab_practice_why(sandbox) is not None


def program_for(practice: bool) -> ColabProgram | None:
    return practice_program() if practice else real_program()


class ColabRoute:
    """One run on Colab, as a front end drives it."""

    def __init__(self, run: ColabRun, program: ColabProgram) -> None:
        self.run, self.program = run, program
        self.ledger = colab_ledger()
        self.summary = RunSummary()  # what the run came to, folded as its events pass
        self.outcome_written = False

    def _poll_s(self) -> float:
        try:
            return max(0.05, float(os.environ.get(POLL_ENV) or 30.0))
        except ValueError:
            return 30.0

    def events(self) -> Generator[Event, None, None]:
        """The run's events, each folded into :attr:`summary`; at its end the run folder's
        outcome.json says what it came to (the TPU routes' record, in this route's facts)."""
        run = run_session(self.program, self.run, self.ledger, poll_s=self._poll_s())
        try:
            for event in run:
                self.summary.apply(event)
                if isinstance(event, Finished):
                    self.write_outcome(event.exit_code)
                yield event
        finally:
            run.close()  # a stop: its exec call, if one runs, ends here

    def write_outcome(self, exit_code: int, stopped_by: str | None = None) -> None:
        write_free_outcome(self.run.run_dir, self.summary, exit_code, stopped_by)
        self.outcome_written = True

    def stop_events(self) -> Iterator[Event]:
        """After a stop signal: ``colab stop`` on the session, waited for and verified."""
        yield from stop_session(self.program, self.run.session, self.run.run_id, self.ledger)

    def follow(self, show: Callable[[Event], None], announce: Callable[[str], None]) -> int:
        """Every event shown; a stop signal ends the call under way, then stops the session.
        Returns the exit code: the run's, or 128 + the first stop signal."""
        code = EXIT_CLOUD

        def stop(_signum: int) -> None:
            raise _StopAsked

        with StopSignals(announce, STOP_WORDS, stop) as signals:
            events = self.events()
            try:
                for event in events:
                    show(event)
                    if isinstance(event, Finished):
                        code = event.exit_code
            except _StopAsked:
                events.close()  # its exec call, if one runs, ends here
                for event in self.stop_events():
                    self.summary.apply(event)
                    show(event)
        if not self.outcome_written:  # stopped before its end: said as such
            self.write_outcome(signals.exit_code(code), signal_name(signals.first))
        return signals.exit_code(code)


def colab_route_for(
    script: Path,
    sandbox: bool,
    runs: Path,
    fetch: tuple[str, ...] = (),
    max_run_minutes: float | None = None,
) -> ColabRoute:
    """A run of ``script`` on a Colab TPU runtime (the stand-in in practice: asked for with
    ``sandbox``, or where neither the colab program nor its token is here), checked before any
    call: :class:`BadInput` for a missing script, a folder too large, or (real) no ``colab``
    program on PATH (how to install it, and the notebook instead)."""
    from tpuwizard.core.colab.diagnosis import INSTALL_WORDS
    from tpuwizard.core.colab.run import prepare_run
    from tpuwizard.core.errors import BadInput
    from tpuwizard.session.session import new_run

    why = colab_practice_why(sandbox)
    practice = why is not None
    run_id, run_dir = new_run(runs)
    run = prepare_run(script, (), fetch, max_run_minutes, run_id, run_dir, practice, why or "")
    program = program_for(practice)
    if program is None:
        raise BadInput(INSTALL_WORDS)
    return ColabRoute(run, program)
