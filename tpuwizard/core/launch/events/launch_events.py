"""The events a launch and a run on a kept node produce: one vocabulary for the TUI, plain mode
and every ``--json`` stream (``launch``, ``up``, ``run``, ``watch``; the README's table lists
each event, when it comes and which commands emit it). The Kaggle and Colab routes' own events,
which no launch emits, are in kaggle.py and colab.py; they are events of this kind too.

Each is a small dataclass; ``to_dict()`` gives ``{"event": "provisioning", ...}`` for JSON lines.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.remote.sent_files import FolderSent


@dataclass(frozen=True)
class Event:
    @classmethod
    def event_name(cls) -> str:
        """``ReceiptSaved`` -> ``receipt_saved``: the ``"event"`` key of the JSON line."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event_name(), **asdict(self)}


@dataclass(frozen=True)
class Planned(Event):
    run_id: str
    name: str
    accelerator: str
    zone: str
    route: str
    project: str
    chips: int
    workers: int
    price_per_hour_usd: float | None
    max_run_minutes: float | None
    practice: bool
    run_dir: str
    fetch: tuple[str, ...] = ()  # what the script's files to copy back are, as asked
    budget_usd: float | None = None  # --budget: every attempt's estimated cost together
    # Where the catalog has no price but a bound (Flex-start: the on-demand price Google
    # discounts it from; cost.at_most_hourly), the most it costs; else None.
    price_at_most_usd: float | None = None
    # --checkpoints: how many attempts the chain may make (restarts + 1); None: no resume.
    attempts_at_most: int | None = None
    # Where the price is from, with its date (the Cloud Billing Catalog's read, or the offline
    # table's), and the catalog's SKU id it is from ("" for the offline table's).
    price_source: str = ""
    price_sku: str = ""
    # What of the script's folder is copied to each worker (files, bytes, the secrets left out
    # by name, how many .tpuwizardignore left out); None when there is no script.
    folder: FolderSent | None = None


@dataclass(frozen=True)
class ResourceExists(Event):
    """From the create call on, this resource may exist and must be cleaned up."""

    name: str
    kind: str  # "node" or "queued"
    zone: str
    accelerator: str
    route: str
    run_id: str


@dataclass(frozen=True)
class CreateRefused(Event):
    """The create was refused and nothing exists: nothing to clean up, nothing bills."""

    name: str
    kind: str
    zone: str


@dataclass(frozen=True)
class BillingStarted(Event):
    """The resource reached READY: from now on it costs money until it is verified gone."""

    name: str
    since: float  # seconds since the epoch
    price_per_hour_usd: float | None
    # Where it is: with --fan-out one name is requested in several zones at once.
    zone: str = ""
    # Where the catalog has no price but a bound (Flex-start: the on-demand price Google
    # discounts it from; cost.at_most_hourly), the most it costs; else None.
    price_at_most_usd: float | None = None
    # As Planned's: where the price is from (with its date), and its Billing Catalog SKU id.
    price_source: str = ""
    price_sku: str = ""
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


@dataclass(frozen=True)
class BillingStopped(Event):
    """It no longer costs money (verified gone, or Google took the VM away)."""

    name: str
    billed_s: float
    cost_usd: float | None
    zone: str = ""


@dataclass(frozen=True)
class Provisioning(Event):
    state: str
    elapsed_s: float
    cost_usd: float | None
    zone: str = ""  # the request's zone (several at once with --fan-out)
    route: str = ""  # vm, spot, flex: what bounds a wait for capacity (flex: its queue wait)


@dataclass(frozen=True)
class FanOutStarted(Event):
    """``--fan-out``: the create goes to every zone at once; the first READY is kept, the others
    are deleted and verified gone. Until then up to ``len(zones)`` nodes may bill at once."""

    name: str
    zones: list[str]
    worst_case_per_hour_usd: float | None  # every request granted at once
    quota_checked: bool  # quota for every request at once (the preflight's), or not checked
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


@dataclass(frozen=True)
class FanOutWon(Event):
    """The first request to be READY: kept; ``losers`` (their zones) are being deleted."""

    name: str
    zone: str
    losers: list[str]
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


@dataclass(frozen=True)
class ZoneFailover(Event):
    from_zone: str
    to_zone: str
    reason: str


@dataclass(frozen=True)
class Ready(Event):
    workers: int
    endpoints: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SshReady(Event):
    workers: int


@dataclass(frozen=True)
class BootstrapLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class Versions(Event):
    worker: int
    versions: dict[str, Any]
    workers: int = 1
    laptop_jax: str | None = None  # the JAX beside tpuwizard on this computer, if any


@dataclass(frozen=True)
class WatchdogAccount(Event):
    """Before the watchdog is armed: which service account it runs as, and what that needs."""

    account: str  # an email, or "" for the project's default compute service account
    detail: Said


@dataclass(frozen=True)
class Watchdog(Event):
    armed: bool
    deadline: float  # seconds since the epoch
    detail: Said


@dataclass(frozen=True)
class VerifierLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class Check(Event):
    worker: int
    name: str
    ok: bool
    detail: str
    boundary: str


@dataclass(frozen=True)
class ReceiptSaved(Event):
    path: str
    ok: bool
    receipt_sha256: str


@dataclass(frozen=True)
class ScriptLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class ChipHolding:
    """A process holding the TPU of ``worker``, as a refused rerun names it (not an event)."""

    worker: int
    pid: int
    command: str  # its command line ("" where it had none)


@dataclass(frozen=True)
class ChipHeldRefusal:
    """Why a rerun did not start (not an event: ScriptDone's ``chip_held``): ``holders`` hold the
    TPU of ``node``, processes tpuwizard did not start, or (``unended``) an earlier run's that
    SIGKILL did not end. Nothing was copied, installed or started; the node is as it was."""

    node: str
    holders: tuple[ChipHolding, ...]
    unended: bool = False

    @property
    def going_on_passes(self) -> bool:
        """Whether asking to go on (Run anyway, ``--even-if-held``) passes this refusal: past
        another's process it does; one of ours that SIGKILL did not end refuses every run
        (held_chip.check_chip), so no front end offers it."""
        return not self.unended


@dataclass(frozen=True)
class ScriptDone(Event):
    """The script ended; with ``can_rerun`` the launch waits to be told: again, or teardown.
    ``diagnosis``: why a run that failed did, said while the node is still there;
    ``missing_package``: the package that provides a module it could not import.
    ``not_installed``: the packages this run was to add first, which did not install
    (``diagnosis`` says why): the script did not run this time, and ``exit_code`` is still the
    last run's. ``run``: which run of the script this was (1 the first, 2 the first rerun).
    ``chip_held``: this rerun was refused before anything was touched, as the TPU is held
    (the run goes on only when asked to run anyway); ``exit_code`` is still the last run's."""

    exit_code: int
    can_rerun: bool
    seconds_left: float | None  # until the node's deadline
    diagnosis: Diagnosis | None = None
    missing_package: str | None = None
    not_installed: tuple[str, ...] = ()
    run: int = 1
    chip_held: ChipHeldRefusal | None = None


@dataclass(frozen=True)
class DeletingOnRequest(Event):
    """A stop (Delete now, a signal) while the launch waited after a run of the script that
    exited 0: nothing failed; the node is deleted as asked."""

    reason: str


@dataclass(frozen=True)
class ScriptFinished(Event):
    """Your script ended on every worker; ``exit_code`` is the first non-zero one, else 0.
    ``output``: the local file that holds its whole output (every worker's lines).
    ``sigterm``: the workers whose job wrapper passed a SIGTERM on to the script."""

    exit_code: int
    output: str | None = None
    sigterm: tuple[int, ...] = ()


@dataclass(frozen=True)
class FileFetched(Event):
    path: str


@dataclass(frozen=True)
class FileNotFetched(Event):
    """An entry the fetch patterns matched that was not copied back, and why.

    ``incomplete``: a file that should have come back and did not arrive whole (the run fails
    for it), not an entry that is no file to copy (a folder, a link).
    """

    path: str
    reason: str
    incomplete: bool = False


@dataclass(frozen=True)
class NothingMatched(Event):
    """No entry in the script's folder matched any of the fetch ``patterns``: nothing came back."""

    patterns: tuple[str, ...]


@dataclass(frozen=True)
class TeardownStarted(Event):
    name: str
    kind: str
    zone: str = ""


@dataclass(frozen=True)
class TeardownVerified(Event):
    name: str
    kind: str
    billed_s: float
    cost_usd: float | None
    zone: str = ""
    others_left: int = 0  # this launch's other requests (--fan-out) that still exist
    cost_at_most_usd: float | None = None  # where cost_usd is None: the most it cost (above)
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


@dataclass(frozen=True)
class ListedTpu:
    """One TPU of a zone's list: ``made_by`` is "yours", "another tpuwizard user's" or "not
    made by tpuwizard" (tpuwizard never deletes one it did not make)."""

    name: str
    accelerator: str
    state: str
    made_by: str


@dataclass(frozen=True)
class ZoneListed(Event):
    """What the zone's TPU list shows now, after a teardown (the course's last step), and the
    gcloud command that shows the same ("" in practice)."""

    zone: str
    backend: str
    command: str
    tpus: tuple[ListedTpu, ...]
    practice: bool = False  # the sandbox's list: what is on it bills nothing


@dataclass(frozen=True)
class TeardownFailed(Event):
    name: str
    kind: str
    diagnosis: Diagnosis
    zone: str = ""
    # False: it was never seen to exist (its create's answer was lost on the network), so it
    # may exist, and nothing says it bills.
    seen: bool = True
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


@dataclass(frozen=True)
class LoginKeyForgotten(Event):
    """After the verified teardown: the key imported into the OS Login profile deleted, or
    not (``problem``; it still expires at the launch's deadline), or left for a kept node that
    still logs in with it (``still_used_by``)."""

    fingerprint: str
    problem: str | None = None
    still_used_by: str | None = None


@dataclass(frozen=True)
class Kept(Event):
    """The user chose to leave it running: nothing will delete it, and it keeps billing."""

    name: str
    zone: str
    delete_command: str
    price_per_hour_usd: float | None = None
    deadline: float | None = None  # when it is deleted without us, if anything will
    # What ends it without us: the watchdog (armed on the VM), Google (Flex-start's run time,
    # Compute Engine's max run duration) or nothing (only a teardown ends it).
    ended_by: EndedBy = EndedBy.NOTHING
    # What `up --json`'s last line tells a script (this event is that line): the node to give
    # `run --node` (for a queued resource, the node it asked for), its type, the idle minutes
    # its watchdog allows without a heartbeat, and the receipt of its one verification.
    node: str = ""
    accelerator: str = ""
    idle_minutes: float | None = None
    receipt: str | None = None
    price_at_most_usd: float | None = None  # as Planned's
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


class NotKeptBecause(StrEnum):
    """Why a launch that was to keep its node (``up``, ``launch --keep``) deletes it instead."""

    NEVER_CREATED = "never_created"  # the create never showed a node of this run existing
    UNGUARDED = "unguarded"  # the watchdog the plan promised was never armed
    UNPROVEN = "unproven"  # its setup or its verifier failed: nothing to hand over


@dataclass(frozen=True)
class NotKept(Event):
    """The launch was to keep its node, and does not: it is deleted (and verified gone) now,
    because keeping it would break what the plan promised (``because`` says which)."""

    name: str
    because: NotKeptBecause


@dataclass(frozen=True)
class KeepNeedsAnswer(Event):
    """Keep was asked for, and no watchdog could be armed: delete now, or keep without one."""

    name: str
    reason: str


@dataclass(frozen=True)
class Failed(Event):
    stage: str
    diagnosis: Diagnosis


@dataclass(frozen=True)
class Finished(Event):
    """The launch ended, or one run on a kept node did (then ``remaining`` names the node, and
    ``cost_usd`` is None: the node's cost is status's to say). Always the last event of its
    stream, except that ``up --json`` ends with ``Kept`` once the node is handed over."""

    ok: bool
    exit_code: int
    run_dir: str
    cost_usd: float | None
    remaining: list[str] = field(default_factory=list)  # names that still exist (kept or not)
    cost_at_most_usd: float | None = None  # where cost_usd is None: the most it cost (above)
    # Of ``remaining``, those never seen to exist (a create whose answer was lost): they may.
    unseen: list[str] = field(default_factory=list)
    practice: bool = False  # the plan's: practice bills nothing, and its words say so


# A run of the script on a kept node (run, each run of watch).


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
class ChipHolderEnded(Event):
    """Before a run on a kept node: a process an earlier run of tpuwizard's left holding the TPU
    of ``worker`` (its ``job`` on the worker) was ended: SIGTERM, then SIGKILL after ``grace_s``."""

    node: str
    worker: int
    pid: int
    command: str
    job: str
    grace_s: float


@dataclass(frozen=True)
class ChipHeldGoingOn(Event):
    """``--even-if-held``: a process tpuwizard did not start holds the TPU of ``worker``; the
    run goes on as asked, and the script may fail to start JAX there."""

    node: str
    worker: int
    pid: int
    command: str


@dataclass(frozen=True)
class ChipNotChecked(Event):
    """Before a run on a kept node: who holds the TPU of ``worker`` could not be listed
    (``why``); the run goes on unchecked there."""

    node: str
    worker: int
    why: str


@dataclass(frozen=True)
class FolderProgress(Event):
    """A copy of the script's folder to a worker, on its way (a tar of 10 MB or more, said at
    each tenth of it): how many of its bytes are sent."""

    worker: int
    sent: int
    total: int
    workers: int


@dataclass(frozen=True)
class FolderSynced(Event):
    """What changed in the script's folder was copied to every worker of the kept node."""

    changed: list[str]  # as worker 0 needed them (each worker gets what it lacks)
    deleted: list[str]
    bytes_sent: int
    workers: int
    seconds: float  # the slowest worker's
    ways: list[str]  # "rsync", or "tar: <why not rsync>", each way used once
    files_bytes: int = 0  # the changed files' own sizes (bytes_sent: the tar's, or rsync's)


@dataclass(frozen=True)
class CompileCache(Event):
    """The kept node's compile cache, counted on worker 0 before and after the run: a run that
    wrote no entry while entries existed compiled nothing again (``hit``)."""

    before: int
    after: int
    hit: bool


@dataclass(frozen=True)
class HeartbeatMissed(Event):
    """A heartbeat to the kept node's watchdog was not sent; the run goes on (the next one may
    land before the idle deadline)."""

    node: str
    detail: str


# A spot run that survives preemption (--checkpoints): checkpoints come home, the node
# goes, a new one comes, the script resumes.


@dataclass(frozen=True)
class CheckpointCopied(Event):
    """--checkpoints: a complete set came home whole (each file size- and sha256-checked)."""

    name: str
    step: int | None
    files: int
    size_bytes: int
    path: str
    # Loose files with no COMMITTED marker, taken because they held still from one copy pass to
    # the next: assumed complete, not known to be.
    assumed: bool = False


@dataclass(frozen=True)
class CheckpointsUnusable(Event):
    """--checkpoints: the folder holds files, yet none of them can come home as a complete set
    (said once, on the first pass that finds it so, long before a preemption), or its files
    without a marker change between every pass (said once, after RESTLESS_PASSES passes)."""

    folder: str  # as the script sees it (--checkpoints)
    files: int
    # 0: no layout fits them. N: files with no marker that changed between each of the last N
    # passes, so they never held still long enough to be taken.
    restless_passes: int = 0
    every_s: float = 0.0  # how often the passes come


@dataclass(frozen=True)
class Preempted(Event):
    """--checkpoints: the node went away under the script (preempted, or gone)."""

    name: str
    zone: str
    attempt: int
    state: str | None  # PREEMPTED, or None when it is simply gone


@dataclass(frozen=True)
class Recreating(Event):
    """--checkpoints: the old node is verified gone; a new one is being made."""

    attempt: int  # the attempt about to start (2 is the first restart)
    attempts_at_most: int
    zone: str
    resume_from: str | None  # the complete set it will resume from; None: from the start


@dataclass(frozen=True)
class RunningAgain(Event):
    """--checkpoints: the script's job recorded a SIGTERM (Autocheckpoint's warning) and its
    node is still READY: the script starts again there, from the latest complete set."""

    name: str  # the node, which stays
    zone: str
    attempt: int  # the attempt about to start
    attempts_at_most: int
    resume_from: str | None  # the complete set it will resume from; None: from the start
    workers: tuple[int, ...]  # the workers whose job recorded the SIGTERM


@dataclass(frozen=True)
class Resumed(Event):
    """--checkpoints: the set is on the new node; the script starts with TPUWIZARD_RESUME=1."""

    attempt: int
    checkpoint: str | None
    step: int | None


@dataclass(frozen=True)
class KeptReplaced(Event):
    """run --checkpoints: the kept node went away and a new one, made from ``up``'s settings,
    is kept in its place; later commands use ``new_name``."""

    old_name: str
    new_name: str
    zone: str
    run_id: str  # the run that made the new node (its receipt is in its folder)


@dataclass(frozen=True)
class LedgerRecordHeld(Event):
    """This computer's disk refused a ledger record (full, read-only): what it said of which
    resource (``op``: created, kept, gone...), why, and where it is held until the disk takes
    it (``kept_in``; None: only in this command's memory). What is said of the resource itself
    comes from the cloud's list, never from whether its record was written."""

    name: str
    op: str
    reason: str
    ledger: str
    kept_in: str | None = None
