"""The events of a run on Colab (``launch --route colab``), beside the shared ones it also
emits (``ScriptLine``, ``ReceiptSaved``, ``FileFetched``, ``Failed``, ``Finished``)."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.launch.events.launch_events import Event
from tpuwizard.core.remote.sent_files import FolderSent

COLAB_FREE_TPU = "v5e1"  # Colab's own label for its free chip: what `colab new --tpu` takes
# Colab's labels (as `colab new --tpu` takes them and `colab sessions` lists them, in any case)
# beside the Cloud TPU type with the same chip: the name every route gives a chip.
CLOUD_TYPES = {"v5e1": "v5litepod-1"}


def cloud_type(label: str) -> str | None:
    """The Cloud TPU type of the chip Colab's ``label`` names; None for a label not known."""
    return CLOUD_TYPES.get(label.strip().lower())


@dataclass(frozen=True)
class ColabPlanned(Event):
    """What will be asked of Colab: the named session, its TPU, the script's limit."""

    run_id: str
    session: str
    tpu: str  # colab new --tpu: v5e1 (Colab's own label, said once beside the type)
    max_run_minutes: float
    expect: str  # the platform the receipt must show
    practice: bool
    run_dir: str
    # What of the script's folder goes with it (files, bytes, the secrets left out by name).
    folder: FolderSent | None = None
    practice_why: str = ""  # practice: why (the colab program is not installed ...)

    @property
    def accelerator(self) -> str:
        """The chip's name on every route: the Cloud TPU type (Colab's label where unknown)."""
        return cloud_type(self.tpu) or self.tpu


@dataclass(frozen=True)
class ColabSessionReady(Event):
    """Colab assigned the session's runtime (``colab sessions`` lists it at ``endpoint``)."""

    session: str
    endpoint: str
    hardware: str


@dataclass(frozen=True)
class ColabSessionStopped(Event):
    """``colab stop`` ran at the run's end (or after a stop signal), and ``verified`` says
    whether ``colab sessions`` then no longer listed the session."""

    session: str
    verified: bool
    detail: str = ""


@dataclass(frozen=True)
class ColabAccount(Event):
    """What the installed ``colab`` said of itself and of the account before the run: its
    version (``colab version``; "" where it did not say), the commands tpuwizard knows of that
    it lacks, and, where it has ``usage`` (0.8.0), the account's compute-unit balance, hourly
    rate and active assignments (every session of the account, not only tpuwizard's)."""

    version: str
    lacks: tuple[str, ...]
    balance: float | None = None
    rate_hourly: float | None = None
    assignments: int | None = None
    usage_problem: str = ""  # usage was there but failed: what it said
    practice: bool = False  # the practice stand-in answered (it plays a version), not Google's


@dataclass(frozen=True)
class ColabAssignmentsAfter(Event):
    """``colab usage``'s active assignments after the run's session was stopped, beside the
    count before it (the whole account's: another session started or stopped meanwhile moves
    it too, so ``colab sessions`` on the run's own name stays the check)."""

    before: int
    after: int | None
    problem: str = ""
