"""The kernels the Kaggle ledger holds, as ``status`` lists them and ``teardown`` ends them.

A kernel is touched only when its record proves it is this user's run: its name is the one
tpuwizard gave that run (``tpuwizard-<run id>``) and its owner is the account signed in now.
A session that still runs cannot be cancelled from here (Kaggle's public API gives no session
id: Kaggle/kaggle-cli#1174), so it is never deleted either: what Kaggle does to a running
kernel's session when the kernel is deleted is not documented.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tpuwizard.core.kaggle.kernel import kernel_name
from tpuwizard.core.kaggle.ledger import KernelLedger, held_as_json, said_held
from tpuwizard.core.kaggle.protocol import KaggleCallFailed, Kernels
from tpuwizard.core.kaggle.run import ENDED, delete_verified

if TYPE_CHECKING:
    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

PAGE = "https://www.kaggle.com/code/"


@dataclass(frozen=True)
class KernelRecord:
    """One kernel the ledger holds (its last word not ``deleted``)."""

    kernel: str  # owner/name
    run_id: str
    op: str  # the ledger's last word: intent, pushed or ended
    url: str  # its page
    ends_by: float  # Kaggle ends its session by then (seconds since the epoch)
    practice: bool
    pid: int | None  # the command that pushed it

    @classmethod
    def from_ledger(cls, data: dict[str, Any]) -> KernelRecord:
        kernel = str(data.get("kernel"))
        at = float(data.get("at") or 0.0)
        pid = data.get("pid")
        return cls(
            kernel=kernel,
            run_id=str(data.get("run_id")),
            op=str(data.get("op")),
            url=str(data.get("url") or PAGE + kernel),
            ends_by=float(data.get("ends_by") or at + float(data.get("timeout_s") or 0.0)),
            practice=bool(data.get("practice")),
            pid=pid if isinstance(pid, int) else None,
        )

    @property
    def name(self) -> str:
        return self.kernel.partition("/")[2]


def held_kernels(ledger: KernelLedger) -> list[KernelRecord]:
    return [KernelRecord.from_ledger(d) for d in ledger.held()]


def named(records: list[KernelRecord], name: str) -> list[KernelRecord]:
    """The records a name given to ``teardown`` means: the whole slug, or its name part."""
    return [r for r in records if name in (r.kernel, r.name)]


def not_ours(record: KernelRecord, username: str) -> str | None:
    """Why this kernel must not be touched by the account signed in now, or None."""
    owner, _, name = record.kernel.partition("/")
    if name != kernel_name(record.run_id):
        return f"its name is not the one tpuwizard gave run {record.run_id}"
    if owner != username:
        return f"it belongs to the Kaggle account {owner}, and you are signed in as {username}"
    return None


@dataclass(frozen=True)
class KernelSeen:
    """What Kaggle says of one held kernel now."""

    record: KernelRecord
    state: str | None  # Kaggle's state for its session; None where not known
    may_run: bool  # its session may still spend the weekly quota
    gone: bool = False  # Kaggle says it is not found: its record is closed
    problem: str | None = None  # why it was not checked or not touched
    # practice: its command still runs (its stand-in holds it); the process group of a
    # session left running after its command ended
    held_by_command: bool = False
    group: int | None = None
    # The records this look wrote that the disk refused (held until it takes them): said as a
    # launch says them, so a closed record is never silently one only this computer's memory has.
    unrecorded: tuple[LedgerRecordHeld, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.record.kernel,
            "run_id": self.record.run_id,
            "url": self.record.url,
            "practice": self.record.practice,
            "state": self.state,
            "may_run": self.may_run,
            "ends_by": self.record.ends_by if self.may_run else None,
            "gone": self.gone,
            "problem": self.problem,
            **({"process_group": self.group} if self.group is not None else {}),
            **held_as_json(self.unrecorded),
        }


def check_kernel(kernels: Kernels, ledger: KernelLedger, record: KernelRecord) -> KernelSeen:
    """Kaggle's state for a kernel of this user's, its ledger record brought up to date."""
    open_session = record.op != "ended"
    why = not_ours(record, kernels.username)
    if why:
        return KernelSeen(record, None, open_session, problem=f"not checked: {why}")
    try:
        state, _ = kernels.status(record.kernel)
    except KaggleCallFailed as err:
        if err.status == 404:
            held = ledger.record("deleted", record.kernel, record.run_id, why="Kaggle: not found")
            unrecorded = tuple(said_held(held, record.kernel, "deleted"))
            return KernelSeen(record, None, False, gone=True, unrecorded=unrecorded)
        return KernelSeen(record, None, open_session, problem=f"not checked: {err.detail}")
    unrecorded = ()
    if state in ENDED and open_session:
        held = ledger.record("ended", record.kernel, record.run_id, state=state)
        unrecorded = tuple(said_held(held, record.kernel, "ended"))
    return KernelSeen(record, state, state not in ENDED, unrecorded=unrecorded)


@dataclass(frozen=True)
class PracticeSession:
    """What the practice stand-in's files say of a kernel's session (read by the session
    layer: the core never imports the stand-in)."""

    runs: bool  # a process of its session still runs
    state: str | None  # its last state (RUNNING, COMPLETE, ERROR); None: it never started
    ends_by: float | None  # when its session limit falls (seconds since the epoch)
    group: int | None  # its process group on this computer


def practice_kernel(
    ledger: KernelLedger, record: KernelRecord, alive: bool, session: PracticeSession
) -> KernelSeen:
    """A practice kernel lives in the stand-in of the command that pushed it (``alive``: that
    command still runs), which ends its session when it ends; a command killed outright leaves
    the session running to its limit, as Kaggle would. Its record is closed only once that
    command is gone and the stand-in's files show no process of the session left."""
    if session.runs:
        ends_by = session.ends_by or record.ends_by
        state = session.state or "RUNNING"
        group = None if alive else session.group
        return KernelSeen(replace(record, ends_by=ends_by), state, True, False, None, alive, group)
    if alive:
        started = session.state is not None
        may_run = record.op != "ended" and not started  # queued in its command's stand-in
        return KernelSeen(record, session.state or "QUEUED", may_run, held_by_command=True)
    held = ledger.record(
        "deleted",
        record.kernel,
        record.run_id,
        why="the practice stand-in ended with its command, and no process of its session runs",
        state=session.state,
    )
    unrecorded = tuple(said_held(held, record.kernel, "deleted"))
    return KernelSeen(record, session.state, False, gone=True, unrecorded=unrecorded)


@dataclass(frozen=True)
class KernelTorn:
    """``teardown`` of one kernel: ``verified`` when Kaggle then says it is not found."""

    seen: KernelSeen
    verified: bool
    detail: str = ""  # why it was not deleted, or not verified

    def to_dict(self) -> dict[str, Any]:
        return {**self.seen.to_dict(), "verified": self.verified, "detail": self.detail}


def tear_down(kernels: Kernels, ledger: KernelLedger, record: KernelRecord) -> KernelTorn:
    """Delete a kernel this user's run pushed, once its session ended, and verify it is gone."""
    seen = check_kernel(kernels, ledger, record)
    if seen.gone:
        return KernelTorn(seen, True, "Kaggle no longer has it")
    if seen.problem:
        return KernelTorn(seen, False, seen.problem.replace("not checked", "not touched"))
    if seen.may_run:
        return KernelTorn(seen, False, "its session still runs, and no public call cancels it")
    deleted = delete_verified(kernels, record.kernel)
    if deleted.verified:
        held = ledger.record("deleted", record.kernel, record.run_id, why="teardown")
        seen = replace(
            seen, unrecorded=(*seen.unrecorded, *said_held(held, record.kernel, "deleted"))
        )
    return KernelTorn(seen, deleted.verified, deleted.detail)
