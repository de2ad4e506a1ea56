"""How a launch ends: kept on purpose, or stopped and deleted, verified, and priced.

:class:`~tpuwizard.core.launch.lifecycle.launch.Launch` calls ``Ending.finish`` in its ``finally``,
so every way out (success, failure, a stop, a bug) passes through it. It reads what exists from the
launch's shared :class:`~tpuwizard.core.launch.lifecycle.launch_state.LaunchState`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.protocol import Cloud
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_TEARDOWN
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ledger_file import Held
from tpuwizard.core.launch.records.run_files import COST_FILE, write_record
from tpuwizard.core.launch.teardown.verified import delete_and_verify, still_listed
from tpuwizard.core.launch.teardown.zone_list import zone_listed
from tpuwizard.core.plan import cost
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.remote.jobs import stop_job


def stopped_diagnosis(reason: str) -> Diagnosis:
    return Diagnosis("cancelled", "Stopped", f"The launch was stopped ({reason}).")


def held_event(name: str, op: str, held: Held) -> ev.LedgerRecordHeld:
    """A record the disk refused, as the event that says so."""
    return ev.LedgerRecordHeld(name, op, *held.facts())


def delete_command(resource: Resource, practice: bool) -> str:
    """The exact command that deletes a kept resource later: ``down``, the one command every
    view of a kept node names (words/kept_end.py)."""
    if practice:
        return f"tpuwizard down {resource.name} --sandbox"
    what = "queued-resources delete" if resource.kind == "queued" else "tpu-vm delete"
    force = " --force" if resource.kind == "queued" else ""
    return (
        f"tpuwizard down {resource.name}   (or: gcloud compute tpus {what} "
        f"{resource.name} --zone {resource.zone} --project {resource.project}{force})"
    )


@dataclass(frozen=True)
class EndingInput:
    """What the ending reads of the plan and the runtime (lifecycle/part_inputs.py makes it)."""

    run_dir: Path  # cost.json goes there; Finished names it
    slice: Slice  # what is priced
    route: str
    accelerator: str  # as asked: cost.json says it
    keep: bool  # the plan's --keep (``up``): hand the node over at the end of the run
    watchdog: bool  # the plan promised a watchdog: a node is handed over only once it is armed
    idle_minutes: float | None  # a kept node's idle time, once its watchdog is armed
    max_run_s: int  # a kept node's deadline where Google's cannot be read back
    google_ends_it: bool  # Google ends the node at its deadline (the plan's DeadlineKeeper)
    kept_settings: Mapping[str, Any]  # recorded with a kept node: run --checkpoints remakes it
    cloud: Cloud  # deletes, verifies gone, lists the zone, reads Google's deadline
    ledger: Ledger
    poll: float  # the delete's pause between reads is at most this
    owner: str | None  # the zone's list says which nodes are this install's
    practice: bool  # the sandbox's words: the delete command, the zone list, cost.json
    # OS Login: the key imported for this launch, and what deletes it (Runtime's fields).
    login_key: str | None
    forget_login_key: Callable[[], str | None] | None


class Ending:
    """Keep, or stop the jobs and delete; then price the run and say what still exists."""

    def __init__(self, given: EndingInput, ctx: LaunchContext) -> None:
        self.given = given
        self.emit, self.cancel, self.state = ctx.emit, ctx.cancel, ctx.state
        # Asked once: forget_login_key clears it (nothing of the launch is left by then).
        self._forget_login_key = given.forget_login_key
        # What --fan-out's other requests cost until verified gone (they tear down in threads).
        self.others_cost: float | None = 0.0
        self.others_at_most: float | None = 0.0  # the most they cost (cost.at_most)
        # --checkpoints: what the earlier attempts' nodes cost, each until verified gone.
        self.earlier_cost = 0.0
        self._lock = threading.Lock()

    def finish(self, code: int) -> int:
        resource = self.state.resource
        because = self.not_kept_because() if resource is not None else None
        if resource is not None and because is not None:
            self.emit(ev.NotKept(resource.name, because))  # then deleted, verified, below
            code = EXIT_FAILED if code == EXIT_OK else code  # what was asked was not done
        if resource is not None and because is None and self.kept_at_end():
            if not self.keep(resource):  # kept and billing, said; its record not in the ledger
                code = EXIT_TEARDOWN
        else:
            if self.cancel.is_set():
                self.stop_jobs_in_background()
            if not self.teardown():
                code = EXIT_TEARDOWN
        if self.state.settle_others is not None:
            self.state.settle_others()  # --fan-out: every other request deleted, or not
        left = [o.resource for o in self.state.others if o.resource is not None]
        if left:
            code = EXIT_TEARDOWN
        if self.state.resource is None and not left:
            self.forget_login_key()
        total = self.total_cost()
        self._write_cost(total)
        remaining = [self.state.resource.name] if self.state.resource is not None else []
        remaining += [r.name for r in left]
        bound = self.total_cost(at_most=True) if total is None else None
        unseen = [
            s.resource.name
            for s in (self.state, *self.state.others)
            if s.resource is not None and s.created_at is None
        ]
        self.emit(
            ev.Finished(
                code == EXIT_OK,
                code,
                str(self.given.run_dir),
                total,
                remaining,
                bound,
                unseen,
                self.given.practice,
            )
        )
        return code

    def forget_login_key(self) -> None:
        """Nothing of the launch is left: delete the key it imported into the OS Login profile
        (unless another resource still logs in with it: said). A refused delete is said, and
        changes nothing else (the key expires at the deadline)."""
        forget, self._forget_login_key = self._forget_login_key, None
        key = self.given.login_key
        if forget is None or key is None:
            return
        try:
            still_used_by = forget()  # a kept node that logs in with the same key keeps it
        except Exception as err:  # said; the verified teardown stands
            self.emit(ev.LoginKeyForgotten(key, str(err)))
            return
        self.emit(ev.LoginKeyForgotten(key, still_used_by=still_used_by))

    def kept_at_end(self) -> bool:
        """Keep only what the user asked to keep and was not stopped before it was handed over.

        ``plan.keep`` (``up``, ``launch --keep``) hands the node over at the end of the run; a
        stop (a signal, Delete now) before that end means delete, as on every other path. Keep
        asked for by the user (``cancel.keep``) is the user's last word and stands. A node
        that went away under the launch (preempted) is never kept: its watchdog went with it.
        """
        if self.state.went_away is not None:
            return False
        if self.cancel.keep:
            return True
        return self.given.keep and not self.cancel.is_set()

    def not_kept_because(self) -> ev.NotKeptBecause | None:
        """Why a node the plan was to keep (``plan.keep``, no stop) must be deleted instead: it
        was never seen created (the create failed, or another run holds the name), the
        watchdog the plan promised was never armed (the run ended before it could be, or
        arming failed), or its setup or verifier failed (a node no run can use; a failure of
        the user's script after that is theirs to look into, and it is kept). None where it
        may be kept, or where the plan does not keep it. A node
        with no watchdog by the user's choice (``--no-watchdog``) or ended by Google's own
        deadline is kept as asked; a Keep the user chose (the wizard's) is settled apart."""
        state, given = self.state, self.given
        if not given.keep or self.cancel.is_set() or state.went_away is not None:
            return None
        if state.created_at is None:
            return ev.NotKeptBecause.NEVER_CREATED
        guarded = state.watchdog_deadline is not None or given.google_ends_it
        if given.watchdog and not guarded:
            return ev.NotKeptBecause.UNGUARDED
        if not state.proven:
            return ev.NotKeptBecause.UNPROVEN
        return None

    def keep(self, resource: Resource) -> bool:
        """Detach: nothing of ours will delete it later; the ledger says so, with any deadline.
        False where the disk refused that record: the node is kept and said so all the same
        (it bills, whatever the disk), and where its record is held is said after."""
        state, given = self.state, self.given
        idle = given.idle_minutes if state.watchdog_deadline is not None else None
        deadline, ended_by = state.watchdog_deadline, EndedBy.WATCHDOG
        if deadline is None and given.google_ends_it and state.created_at is not None:
            # Google's own deadline: read back where the cloud says it (Compute Engine's
            # terminationTimestamp), else the one asked for at create.
            deadline, ended_by = (
                self._googles_deadline(resource, state.created_at),
                EndedBy.GOOGLE,
            )
        elif deadline is None:
            ended_by = EndedBy.NOTHING
        record = KeptRecord(
            kept_at=time.time(),
            deadline=deadline,  # when it ends without us: its watchdog, or Flex-start's limit
            ended_by=ended_by,
            idle_s=idle * 60 if idle else None,
            settings=dict(given.kept_settings),  # run --checkpoints makes it again from these
            # Its run folder's records say "still running" until a verified delete brings
            # them up to date, from wherever that delete is asked for.
            run_dir=os.path.abspath(given.run_dir),
        )
        held = given.ledger.record("kept", resource, **record.fields())
        self.emit(
            ev.Kept(
                resource.name,
                resource.zone,
                delete_command(resource, given.practice),
                cost.hourly(resource.slice, resource.route, resource.zone),
                deadline,
                ended_by,
                resource.node_id or resource.name,
                resource.accelerator,
                idle,
                state.receipt,
                cost.at_most_hourly(resource.slice, resource.route, resource.zone),
                given.practice,
            )
        )
        if held is not None:
            self.emit(held_event(resource.name, "kept", held))
        return held is None

    def _googles_deadline(self, resource: Resource, created_at: float) -> float:
        try:
            read = self.given.cloud.deadline_at(resource.kind, resource.zone, resource.name)
        except Exception:  # unread: the deadline asked for at create stands
            read = None
        return read if read is not None else created_at + self.given.max_run_s

    def stop_jobs_in_background(self) -> None:
        """End the jobs on the workers while the delete is issued, not before it.

        On Google the delete ends them anyway; stopping them first would only delay the delete
        behind an SSH round trip. The watchdog is not among them: it is the safety net until
        the delete is verified.
        """
        transport, jobs = self.state.transport, list(self.state.running_jobs)
        if transport is None or not jobs:
            return

        def stop_all() -> None:
            for worker, job in jobs:
                stop_job(transport, worker, job)

        threading.Thread(target=stop_all, name="tpuwizard-stop-jobs", daemon=True).start()

    def teardown(self, state: LaunchState | None = None) -> bool:
        """Delete the resource of ``state`` (this launch's; with --fan-out, one of its other
        requests) and verify it is gone; True when nothing is left."""
        state = state or self.state
        resource = state.resource
        if resource is None:
            return True
        zone = resource.zone
        self.emit(ev.TeardownStarted(resource.name, resource.kind, zone))
        given = self.given
        result = delete_and_verify(given.cloud, given.ledger, resource, pause=min(2.0, given.poll))
        if result.held is not None:  # the list's word stands; where its record is, said
            self.emit(held_event(resource.name, "gone", result.held))
        if not result.verified:
            d = result.diagnosis or still_listed(resource)  # delete_and_verify gives one
            seen = state.created_at is not None  # else the create's answer never came
            self.emit(
                ev.TeardownFailed(resource.name, resource.kind, d, zone, seen, given.practice)
            )
            return False
        transport = state.transport
        if transport is not None and result.held_by is None:
            transport.forget_host_keys()  # gone for good: its keys must not linger
        state.gone_at = time.time()
        billed, total = self.costing_seconds(state), self.cost_so_far(state)
        bound = self.cost_so_far(state, at_most=True)
        # One at a time (--fan-out's requests end in threads), so that each says truly how
        # many of the others still exist, in the order the events arrive.
        with self._lock:
            state.resource = None
            if state is not self.state:
                part = total or 0.0
                self.others_cost = None if total is None else (self.others_cost or 0.0) + part
                most = self.others_at_most
                self.others_at_most = None if bound is None else (most or 0.0) + bound
            others = sum(s.resource is not None for s in (self.state, *self.state.others))
            self.emit(ev.BillingStopped(resource.name, round(billed, 1), total, zone))
            self.emit(
                ev.TeardownVerified(
                    resource.name,
                    resource.kind,
                    round(billed, 1),
                    total,
                    zone,
                    others,
                    None if total is not None else bound,
                    given.practice,
                )
            )
        if state is self.state:
            self.list_zone(resource.zone)
        return True

    def list_zone(self, zone: str) -> None:
        """Say what the zone's TPU list shows now, as the course's last step looks; a list that
        fails costs only this line (the teardown was verified already)."""
        with contextlib.suppress(Exception):  # the verified teardown stands; the list is extra
            self.emit(zone_listed(self.given.cloud, zone, self.given.owner, self.given.practice))

    def costing_seconds(self, state: LaunchState | None = None) -> float:
        """Seconds from the first READY until verified gone (or now, if it still exists)."""
        state = state or self.state
        since = state.costing_since
        if since is None:
            return 0.0
        return max(0.0, (state.gone_at or time.time()) - since)

    def cost_so_far(self, state: LaunchState | None = None, at_most: bool = False) -> float | None:
        """The estimate of ``state``'s resource; with ``at_most``, the most it cost (for
        Flex-start, which has no figure: on-demand's)."""
        state = state or self.state
        if state.created_at is None:
            return None
        figure = cost.at_most if at_most else cost.estimate
        return figure(self.given.slice, self.given.route, self.costing_seconds(state), state.zone)

    def total_cost(self, at_most: bool = False) -> float | None:
        """This launch's resource and, with --fan-out, what its other requests cost (with
        ``at_most``, the most they cost)."""
        own = self.cost_so_far(at_most=at_most)
        if self.earlier_cost:
            own = round((own or 0.0) + self.earlier_cost, 4)
        if not self.state.others:
            return own
        others = self.others_at_most if at_most else self.others_cost
        if others is None:
            return None
        return round((own or 0.0) + others, 4)

    def _write_cost(self, total: float | None) -> None:
        """The run's cost estimate, next to its receipt."""
        if self.state.created_at is None and not self.state.others:
            return
        zone, given = self.state.zone, self.given
        record = {
            "accelerator": given.accelerator,
            "route": given.route,
            "chips": given.slice.chips,
            "seconds": round(self.costing_seconds(), 1),
            "billed_from": "first READY until verified gone",
            "price_per_hour_usd": cost.hourly(given.slice, given.route, zone),
            "cost_usd": total,
            # Flex-start has no figure: the most it cost, at the on-demand price (cost.py).
            "cost_at_most_usd": self.total_cost(at_most=True) if total is None else None,
            "estimate": cost.label(),
            "practice": given.practice,
            # Practice bills nothing: its figures are what Google would have charged.
            "billed": not given.practice,
            "still_running": self.state.resource is not None,
            # When these figures were taken: a kept node bills on after it, and its verified
            # delete later (session/run_outcome.py) adds what it cost from here to gone.
            "as_of": time.time(),
            "price_at_most_per_hour_usd": cost.at_most_hourly(given.slice, given.route, zone),
        }
        # A disk that refuses costs this file only: the events and the summary say the cost.
        write_record(given.run_dir / COST_FILE, record)
