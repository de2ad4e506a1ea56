"""The events of a run on Kaggle (``launch --route kaggle``), beside the shared ones it also
emits (``ScriptLine``, ``ReceiptSaved``, ``FileFetched``, ``Failed``, ``Finished``)."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.launch.events.launch_events import Event
from tpuwizard.core.remote.sent_files import FolderSent


@dataclass(frozen=True)
class KernelPlanned(Event):
    """What will be pushed: the kernel, its shape, its deadline, the TPU quota left this week."""

    run_id: str
    kernel: str
    shape: str
    max_run_minutes: float
    expect: str  # the platform the receipt must show
    practice: bool
    run_dir: str
    quota_left_s: float | None  # None: Kaggle gave no TPU quota figure
    # What of the script's folder goes with it (files, bytes, the secrets left out by name).
    folder: FolderSent | None = None
    practice_why: str = ""  # practice: why ("no Kaggle credentials were found ...")


@dataclass(frozen=True)
class KernelPushed(Event):
    """Kaggle accepted the kernel: it is queued to run, and stays in the account as the record."""

    kernel: str
    url: str
    version: int | None
    # The push's answer was lost, and the kernel was found by its name: it was not pushed again.
    found_after_lost_answer: bool = False
    practice: bool = False  # the stand-in's: it ends with the command, and the kernel with it


@dataclass(frozen=True)
class KernelState(Event):
    """Kaggle's state for the kernel's session (QUEUED, RUNNING, COMPLETE, ERROR...), with the
    time since the push against the session's limit."""

    kernel: str
    state: str
    elapsed_s: float
    limit_s: float


@dataclass(frozen=True)
class KernelLeftRunning(Event):
    """A stop came while the kernel ran, and it could not be cancelled from here: Kaggle's public
    API gives no session id to cancel (Kaggle/kaggle-cli#1174). Kaggle ends it at its session
    limit (``ends_by``, seconds since the epoch) or when it finishes; its page can stop it."""

    kernel: str
    state: str
    ends_by: float
    url: str
    practice: bool = False  # the stand-in ends with the command, and its kernel with it


@dataclass(frozen=True)
class KernelDeleted(Event):
    """``--delete-kernel``: after its output came back, the kernel was deleted from the account,
    and ``verified`` says whether Kaggle then answered that it is not found."""

    kernel: str
    verified: bool
    detail: str = ""
