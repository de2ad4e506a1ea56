"""What a launch came to, folded from its events: the results a beginner must be able to read
after the run, in one object that the wizard, plain mode and the CLI all print the same way."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.colab import ColabPlanned, ColabSessionStopped
from tpuwizard.core.launch.events.kaggle import KernelDeleted, KernelPlanned, KernelPushed

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice

LAST_LINES = 8  # of the script's output, kept for the summary


@dataclass(frozen=True)
class CheckResult:
    worker: int
    name: str
    ok: bool
    detail: str


@dataclass
class AttemptRecord:
    """One attempt of a spot run that resumes after preemption (``--checkpoints``)."""

    number: int  # 1 is the first
    zone: str
    resume_from: str | None = None  # the set it resumed from (from the second attempt on)
    resumed_step: int | None = None
    resumed: bool = False  # the script started again on this attempt's node
    last_home: str | None = None  # the last set that came home while it ran
    last_home_step: int | None = None
    # "preempted", "gone", "sigterm", "finished", "failed"; None while it runs
    ended: str | None = None


@dataclass
class RunSummary:
    """One launch's results. ``apply`` every event of the launch, in order."""

    name: str | None = None
    accelerator: str | None = None
    zone: str | None = None
    route: str = ""  # the launch's route (empty for a Kaggle run): what its price is for
    practice: bool = False
    checks: dict[tuple[int, str], CheckResult] = field(default_factory=dict)
    receipt: ev.ReceiptSaved | None = None
    script_ran: bool = False
    script_exit_code: int | None = None
    script_sigterm: tuple[int, ...] = ()  # workers whose script was sent SIGTERM
    script_tail: deque[str] = field(default_factory=lambda: deque(maxlen=LAST_LINES))  # last run
    script_output: str | None = None  # the file that holds the script's whole output
    fetched: list[str] = field(default_factory=list)
    not_fetched: list[tuple[str, str]] = field(default_factory=list)
    fetch: tuple[str, ...] = ()  # the patterns asked for, of the script's files to copy back
    # Whether anything the patterns matched came back, or was said not to, after the script's
    # last run: when nothing did, the summary says nothing was copied back, and why.
    script_files_seen: bool = False
    incomplete: list[str] = field(default_factory=list)  # files that did not come back whole
    gone: list[str] = field(default_factory=list)  # as said: "NAME in ZONE"
    gone_names: list[str] = field(default_factory=list)  # the names alone, as records hold them
    not_gone: list[str] = field(default_factory=list)
    # The zone's TPU list after the teardown, as the course's last step reads it.
    zone_lists: list[ev.ZoneListed] = field(default_factory=list)
    kept: list[ev.Kept] = field(default_factory=list)
    held: list[ev.LedgerRecordHeld] = field(default_factory=list)  # records the disk refused
    failure: ev.Failed | None = None
    # Reruns whose packages did not install (the script did not run then): each ScriptDone
    # that says so, in order; the launch's result is still its last run's.
    not_installed: list[ev.ScriptDone] = field(default_factory=list)
    deleted_on_request: bool = False  # Delete now after the script's run succeeded
    cost_usd: float | None = None
    cost_at_most_usd: float | None = None  # where cost_usd has no figure (Flex-start)
    billed_s: float = 0.0
    finished: ev.Finished | None = None
    # --checkpoints: how many attempts the chain may make, and each one so far (None, []: a
    # launch that does not resume after preemption).
    attempts_at_most: int | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    # A free route's own things (nothing of them bills): a Kaggle kernel that stays in the
    # account as the run's record; one deleted (--delete-kernel) or a Colab session stopped,
    # each verified; a Colab session not verified stopped, and why.
    free_kept: list[str] = field(default_factory=list)
    free_ended: list[str] = field(default_factory=list)
    free_not_ended: list[tuple[str, str]] = field(default_factory=list)

    @property
    def known_slice(self) -> Slice | None:
        """The launch's type, parsed from the name its Planned event carried; None for a name
        that is no Cloud TPU type (a Kaggle shape)."""
        from tpuwizard.core.plan import catalog

        try:
            return catalog.parse_accelerator(self.accelerator or "")
        except catalog.UnknownAcceleratorError:
            return None

    def apply(self, event: ev.Event) -> None:
        match event:
            case ev.Planned():
                self.name, self.accelerator = event.name, event.accelerator
                self.zone, self.practice = event.zone, event.practice
                self.route, self.fetch = event.route, event.fetch
                self.attempts_at_most = event.attempts_at_most
                self.attempts = [AttemptRecord(1, event.zone)] if event.attempts_at_most else []
            case KernelPlanned():  # a run on Kaggle: the kernel, its shape, no zone
                self.name, self.accelerator, self.zone = event.kernel, event.shape, "Kaggle"
                self.practice = event.practice
            case ColabPlanned():  # a run on Colab: the session, its TPU, no zone
                self.name, self.accelerator, self.zone = event.session, event.accelerator, "Colab"
                self.practice = event.practice
            case KernelPushed():
                if event.kernel not in self.free_kept:
                    self.free_kept.append(event.kernel)
            case KernelDeleted() | ColabSessionStopped():
                name = event.kernel if isinstance(event, KernelDeleted) else event.session
                if event.verified:
                    self.free_kept = [k for k in self.free_kept if k != name]
                    self.free_ended.append(name)
                else:
                    self.free_not_ended.append((name, event.detail))
            case ev.ZoneFailover():
                self.zone = event.to_zone
                self._attempt_zone(event.to_zone)
            case ev.FanOutWon():
                self.zone = event.zone
                self._attempt_zone(event.zone)
            case (
                ev.CheckpointCopied()
                | ev.Preempted()
                | ev.Recreating()
                | ev.RunningAgain()
                | ev.Resumed()
            ):
                self._chain(event)
            case ev.Check():
                self.checks[(event.worker, event.name)] = CheckResult(
                    event.worker, event.name, event.ok, event.detail
                )
            case ev.ReceiptSaved():
                self.receipt = event
            case ev.ScriptLine():
                if self.script_exit_code is not None:
                    # The first line of a run again on the same node: its lines replace the last.
                    self.script_tail.clear()
                    self.script_exit_code = None
                self.script_ran = True
                prefix = f"[w{event.worker}] " if event.workers > 1 else ""
                self.script_tail.append(prefix + event.text)
            case ev.ScriptFinished():
                self.script_ran, self.script_exit_code = True, event.exit_code
                self.script_sigterm = event.sigterm
                self.script_files_seen = False  # its files are copied back after it
                self.script_output = event.output or self.script_output
            case ev.FileFetched():
                self.script_files_seen = self.script_ran
                if event.path not in self.fetched:  # a rerun copies the same file back again
                    self.fetched.append(event.path)
            case ev.FileNotFetched():
                self.script_files_seen = self.script_ran
                self.not_fetched.append((event.path, event.reason))
                if event.incomplete:
                    self.incomplete.append(event.path)
            case ev.ZoneListed():
                self.zone_lists.append(event)
            case ev.TeardownVerified():
                # With its zone: --fan-out deletes one name in several zones.
                self.gone.append(f"{event.name} in {event.zone}" if event.zone else event.name)
                self.gone_names.append(event.name)
                self.billed_s += event.billed_s
                if event.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + event.cost_usd
                elif event.cost_at_most_usd is not None:
                    self.cost_at_most_usd = (self.cost_at_most_usd or 0.0) + event.cost_at_most_usd
            case ev.TeardownFailed():
                self.not_gone.append(event.name)
            case ev.Kept():
                self.kept.append(event)
            case ev.ScriptDone() if event.not_installed:
                self.not_installed.append(event)
            case ev.LedgerRecordHeld():
                self.held.append(event)
            case ev.DeletingOnRequest():
                self.deleted_on_request = True
            case ev.Failed():
                self.failure = self.failure or event  # the first failure is the cause
            case ev.Finished():
                self.finished = event
                if self.cost_usd is None:
                    self.cost_usd = event.cost_usd
                if self.cost_usd is None and event.cost_at_most_usd is not None:
                    self.cost_at_most_usd = event.cost_at_most_usd
                if self.attempts and self.attempts[-1].ended is None:
                    self.attempts[-1].ended = "finished" if event.ok else "failed"
            case _:
                pass

    def _attempt_zone(self, zone: str) -> None:
        if self.attempts:
            self.attempts[-1].zone = zone

    def _chain(self, event: ev.Event) -> None:
        """An event of the chain of attempts, folded into the attempt it belongs to."""
        if not self.attempts:
            return
        now = self.attempts[-1]
        match event:
            case ev.CheckpointCopied():
                now.last_home, now.last_home_step = event.name, event.step
            case ev.Preempted():
                now.ended = "preempted" if event.state == "PREEMPTED" else "gone"
            case ev.Recreating():
                self.zone = event.zone
                self.attempts.append(AttemptRecord(event.attempt, event.zone, event.resume_from))
            case ev.RunningAgain():
                now.ended = "sigterm"
                self.attempts.append(AttemptRecord(event.attempt, event.zone, event.resume_from))
            case ev.Resumed():
                now.resume_from, now.resumed_step = event.checkpoint, event.step
                now.resumed = True

    @property
    def attempt(self) -> AttemptRecord | None:
        """The attempt under way (or the last one); None for a launch that does not resume."""
        return self.attempts[-1] if self.attempts else None

    @property
    def recovering(self) -> bool:
        """Between a node going away and the next attempt: its teardown is part of the chain,
        not the end of the launch."""
        now = self.attempt
        return now is not None and now.ended in ("preempted", "gone")

    @property
    def still_existing(self) -> list[str]:
        """What the launch said still exists when it finished (kept, or not verified gone)."""
        if self.finished is None:
            return [*self.not_gone, *(k.name for k in self.kept)]
        return list(self.finished.remaining)

    @property
    def nothing_billing(self) -> bool:
        """True once the launch finished with nothing of it left existing."""
        return self.finished is not None and not self.still_existing

    @property
    def checks_passed(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks.values())
