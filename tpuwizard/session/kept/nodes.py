"""Kept nodes: the ones ``tpuwizard up`` created for iterating, found again from the ledger and
the API, each with a transport, heartbeats and its deadlines. What a kept node's line says, read
from the ledger alone, is in :mod:`~tpuwizard.session.kept.lines`.

``run``, ``watch``, ``ssh``, ``status`` and the wizard reach a kept node only through this module
(via :class:`~tpuwizard.session.session.Session`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.errors import (
    BadInput,
    HeartbeatFailed,
    NodeGone,
    PlanRefused,
    QueueSuspended,
    RemoteError,
    WorkersStalled,
)
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.heartbeat_book import HeartbeatBook
from tpuwizard.core.launch.kept.iterate import EXIT_STOPPED, ScriptRun, run_script
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.kept.settings import replaced_by
from tpuwizard.core.launch.lifecycle.vanished import went_away
from tpuwizard.core.launch.plan.parts import Guards
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.launch.records.ownership import is_instance
from tpuwizard.core.launch.workers.distributed import (
    JoinTimeouts,
    coordinator_for,
    slice_coordinator,
)
from tpuwizard.core.launch.workers.heartbeat import heartbeat_interval, heartbeats, send_heartbeat
from tpuwizard.core.launch.workers.stall import stall_seconds
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.session.kept.check import KeptCheck, KeptGone
from tpuwizard.session.kept.gone import close_gone_run, gone_evidence
from tpuwizard.session.kept.lines import kept_info, node_id

if TYPE_CHECKING:
    from tpuwizard.core.cloud.diagnose.diagnosis import Context
    from tpuwizard.core.cloud.types import NodeInfo
    from tpuwizard.core.launch.lifecycle.runtime import Runtime
    from tpuwizard.core.launch.plan.packages import PackageSpec
    from tpuwizard.core.launch.teardown.verified import TeardownResult
    from tpuwizard.core.remote.transports import Transport
    from tpuwizard.session.kept.resume import CheckpointsAsked
    from tpuwizard.session.services import SessionServices


class KeptPreempted(Exception):
    """The kept node asked for was preempted by Google; it has been deleted (``results``)."""

    def __init__(self, name: str, results: list[TeardownResult]) -> None:
        self.name, self.results = name, results
        self.verified = all(r.verified for r in results)
        done = "deleted, verified gone" if self.verified else "deleting it was NOT verified"
        super().__init__(f"{name} was preempted by Google: {done}")


def preempted(node: NodeInfo, resource: Resource) -> bool:
    """Google preempted this kept node: the very instance the record describes (a node of the
    same name made since by someone else is not ours to delete)."""
    return node.state == "PREEMPTED" and is_instance(node.labels, resource)


class KeptNodes:
    """The kept nodes of one session."""

    def __init__(self, session: SessionServices) -> None:
        self.session = session
        self.book = HeartbeatBook(session.ledger.path.parent / "heartbeats.json")

    def entries(self) -> list[Entry]:
        return [e for e in self.session.ledger.open_entries() if e.op == "kept"]

    def check(self) -> KeptCheck:
        """Every kept node that still exists, priced from its first READY-ish record; one that
        Google preempted is deleted now (:meth:`end_preempted`). A node whose zone cannot be
        read is left out: reconciling the ledger reports it."""
        beats, checked = self.book.read(), KeptCheck([], [])
        for entry in self.entries():
            r = entry.resource
            try:
                cloud = self.session.cloud_for(r.backend)
                node = cloud.get_node(r.zone, node_id(r))
            except Exception:  # that zone's error is reported once, by the reconciliation
                continue
            if node is None:  # deleted (its deadline, or by hand): status reconciles the ledger
                checked.gone.append(self.seen_gone(entry, "status", beats))
                continue
            if preempted(node, r):
                checked.preempted += self.end_preempted(entry, "status")
                continue
            info = kept_info(entry, node.state, beats, self.session.practice)
            # The deadline the cloud itself enforces, read back (Flex-start's run end) when it
            # sets one: it, not our record of it, is what ends the node.
            try:
                ends = cloud.deadline_at(r.kind, r.zone, r.name)
            except Exception:  # unread: the deadline recorded at keep stands
                ends = None
            checked.infos.append(replace(info, max_deadline=ends) if ends else info)
        return checked

    def end_preempted(self, entry: Entry, seen_by: str) -> list[TeardownResult]:
        """A kept node that Google preempted: its watchdog died with its VM and its queued
        resource stays ACTIVE, so nothing else would delete it. Its run folder closes with the
        preemption as its end (seen by ``seen_by``); then both are deleted and verified."""
        evidence = gone_evidence(entry, self.book.read(), preempted=True)
        close_gone_run(entry, evidence, seen_by)
        return self.session.delete([entry.resource])

    def seen_gone(
        self, entry: Entry, seen_by: str, beats: dict[str, float] | None = None
    ) -> KeptGone:
        """``entry``'s node is not in its zone's listing, seen by ``seen_by``: its run folder
        closes now (the first to see it gone closes it) with the reason its times support.
        Its ledger record is closed by the survey that verifies it gone (``status``'s, or
        :meth:`settle`)."""
        beats = self.book.read() if beats is None else beats
        evidence = gone_evidence(entry, beats)
        reason = close_gone_run(entry, evidence, seen_by)
        info = kept_info(entry, "gone", beats, self.session.practice)
        return KeptGone(info, entry.resource.route, evidence, reason)

    def settle(self, name: str, seen_by: str = "up") -> None:
        """Check the kept records called ``name`` against the cloud, as ``status`` does: one
        whose node is verified gone (its idle watchdog deleted it) or whose name a newer node
        holds is closed, so that a name used again names one kept node. A record that cannot
        be checked now stays open (``status`` says why)."""
        from tpuwizard.core.launch.teardown.verified import check_record

        for entry in self.entries():
            if name in (entry.resource.name, node_id(entry.resource)):
                try:
                    cloud = self.session.cloud_for(entry.resource.backend)
                    still = check_record(cloud, self.session.ledger, entry)
                except Exception:  # unreachable: it may still exist, so it stays recorded
                    continue
                if still is None:  # not listed (or its name another's): its folder closes
                    self.seen_gone(entry, seen_by)

    def open(self, name: str | None, seen_by: str = "run") -> KeptNode:
        """The kept node called ``name``, or the only one when no name is given (``seen_by``:
        who asks, recorded in its run folder if it is found gone)."""
        entries = self.entries()
        called = [node_id(e.resource) for e in entries]
        twice = {n for n in called if called.count(n) > 1}  # a name used again since
        for again in twice:
            self.settle(again, seen_by)  # its earlier node, deleted meanwhile, is closed first
        entries = self.entries() if twice else entries
        if name is not None:
            entries = [e for e in entries if name in (e.resource.name, node_id(e.resource))]
        names = ", ".join(node_id(e.resource) for e in self.entries())
        if not entries:
            new = replaced_by(self.session.ledger.entries(), name) if name is not None else None
            if new is not None:
                raise BadInput(
                    f"{name} was preempted and replaced: `tpuwizard run --checkpoints` made "
                    f"{new} in its place. Use --node {new}."
                )
            if name is not None:
                raise BadInput(f"No kept node called '{name}' (kept: {names or 'none'}).")
            raise BadInput("No kept node: start one with `tpuwizard up --accelerator T --zone Z`.")
        if len(entries) > 1:
            raise BadInput(f"{len(entries)} kept nodes ({names}): choose one with --node NAME.")
        entry = entries[0]
        cloud = self.session.cloud_for(entry.resource.backend)
        node = cloud.get_node(entry.resource.zone, node_id(entry.resource))
        if node is not None:
            self._check_identity(entry, node)
            self._check_owner(entry, node)
        if node is not None and preempted(node, entry.resource):
            raise KeptPreempted(node_id(entry.resource), self.end_preempted(entry, seen_by))
        if node is None:  # its folder and its ledger record close (once verified gone)
            self.settle(node_id(entry.resource), seen_by)
        if node is None or not node.up:
            state = "gone (its idle deadline may have passed)" if node is None else node.state
            raise BadInput(
                f"{node_id(entry.resource)} is {state}: run `tpuwizard status`, then "
                "`tpuwizard up` for a new one."
            )
        return KeptNode(self, entry, node)

    def _check_identity(self, entry: Entry, node: NodeInfo) -> None:
        """Touch only the node that was kept: the same labels, server-side id and create time.
        Another node under its name means ours is gone: the ledger says so, nothing is touched."""
        from tpuwizard.core.launch.records.ownership import not_the_recorded_node

        r = entry.resource
        why = not_the_recorded_node(r, entry.extra, node.labels, node.uid, node.create_time)
        if why is None:
            return
        self.session.ledger.record("gone", r, name_held_by=why)
        raise BadInput(
            f"{node_id(r)} in {r.zone} is not the node you kept: {why}. Yours is gone; "
            "tpuwizard leaves this one alone. Start a new one with `tpuwizard up`."
        )

    def _check_owner(self, entry: Entry, node: NodeInfo) -> None:
        """Touch only a node whose owner label, as the cloud returns it now, is this install's:
        the ledger's copy proves nothing when the ledger came from another user's home. Every
        kept-node command (run, watch, ssh, fit --measure, the wizard's heartbeats) opens its
        node here, before any SSH."""
        from tpuwizard.core.launch.records.ownership import not_this_owners

        why = not_this_owners(node.labels, self.session.owner)
        if why is None:
            return
        r = entry.resource
        raise BadInput(
            f"{node_id(r)} in {r.zone} is not yours: {why}. Your ledger records it (a home "
            "copied or restored from another user's?), but tpuwizard uses only nodes whose "
            "labels say you made them: nothing was copied to it or run on it. Start your own "
            "with `tpuwizard up`."
        )


class KeptNode:
    """One kept, bootstrapped node: run scripts on it, send it heartbeats, open a shell."""

    def __init__(self, nodes: KeptNodes, entry: Entry, node: NodeInfo) -> None:
        from tpuwizard.session.login import recorded_login
        from tpuwizard.session.runtime import build_runtime

        self.nodes, self.entry, self.node = nodes, entry, node
        self.name = node_id(entry.resource)
        session = nodes.session
        cloud = session.cloud_for(entry.resource.backend)
        # As up chose: under OS Login the key in the same profile (imported again where it
        # expired or was removed, until the node's deadline), as the POSIX user Google names.
        login, os_login = recorded_login(entry)
        self.rt: Runtime = build_runtime(
            cloud, session.practice, login.transport, os_login, login.account
        )
        self.transport: Transport = self.rt.make_transport(node)
        self.idle_s: float | None = KeptRecord.of(entry).idle_s

    @property
    def workers(self) -> int:
        return self.transport.workers

    def heartbeat(self) -> None:
        """Push the idle deadline back by the idle time (and remember when, for status).

        A heartbeat that fails raises what happened: the node went away (:class:`NodeGone`),
        or it is READY and the beat did not land (:class:`HeartbeatFailed`)."""
        try:
            sent = send_heartbeat(self.transport)
        except RemoteError as err:
            raise self._why(err, "when tpuwizard sent it a heartbeat") or HeartbeatFailed(
                self.name, str(err)
            ) from err
        self.nodes.book.record(self.name, sent)

    def _why(self, err: RemoteError, doing: str) -> Exception | None:
        """The node's own fate when it explains ``err`` (gone, preempted), else None."""
        r = self.entry.resource
        queued = r.name if r.kind == "queued" else None
        cloud = self.nodes.session.cloud_for(r.backend)
        return went_away(cloud, r.zone, self.name, queued, doing, err)

    def keep_alive(self, on_error: Callable[[str], None]):  # -> a context manager
        """Heartbeats now and through the block (each run, watch and ssh)."""
        return heartbeats(self.heartbeat, heartbeat_interval(self.idle_s), on_error)

    def check_packages(self, packages: Sequence[PackageSpec]) -> str | None:
        """The packages a run adds, resolved beside this node's JAX before anything is copied
        to it, as a launch's are before create: refused with uv's reason (:class:`BadInput`),
        else the note to say where the check could not run (the run goes on), or None."""
        from tpuwizard.session.package_check import check_packages, package_note, package_refusal

        specs = [spec.text for spec in packages]
        jax = KeptRecord.of(self.entry).settings.get("jax")
        found = check_packages(specs, jax, self.nodes.session.practice)
        untouched = f"Nothing was copied to {self.name}, and it is as it was."
        if refusal := package_refusal(found, specs, untouched):
            raise BadInput(refusal)
        return package_note(found, specs, "the run")

    def run(
        self,
        script: Path,
        args: Sequence[str],
        fetch: Sequence[str],
        folder: LocalFolder,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
        wait: bool = False,
        packages: tuple[PackageSpec, ...] = (),
        checkpoints: CheckpointsAsked | None = None,
        guards: Guards | None = None,
        even_if_held: bool = False,
    ) -> int:
        """Copy what changed, install the ``packages`` that are new, and run ``script`` on every
        worker, under heartbeats, holding the node's run lock (``NodeBusy`` when another run holds
        it, unless ``wait``); returns the run's exit code. First the chip is checked
        (:meth:`check_chip`: ``ChipHeld`` when another process holds it, unless
        ``even_if_held``). Everything it does reaches ``emit`` as the launch's events do, from
        :class:`RunStarted` to :class:`Finished` (after :class:`Failed` when the node went away
        or a command on it failed). With ``checkpoints`` (a spot node) the run survives the
        node's preemption: it is made again from ``up``'s settings (session/kept/resume.py)."""
        from tpuwizard.core.cloud.diagnose.failure import diagnose
        from tpuwizard.core.launch.kept.run_lock import lock_path, run_lock
        from tpuwizard.session.kept.resume import resume_problems, run_resumable

        session, r = self.nodes.session, self.entry.resource
        run_id, run_dir = session.new_run()
        coordinator = coordinator_for(self.node.endpoints, self.rt.explicit_coordinator)
        asked = guards or Guards()
        address = None
        if not self.rt.explicit_coordinator:  # a TPU API / Compute slice: an open port
            address = slice_coordinator(self.node.endpoints, r.slice.vms)
        plan = ScriptRun(
            script,
            args,
            run_id,
            run_dir,
            r.slice,
            self.rt.expect,
            fetch,
            coordinator,
            packages,
            slice_address=address,
            timeouts=JoinTimeouts.of(asked.join_timeout_s, asked.heartbeat_timeout_s),
            stall_s=stall_seconds(asked.stall_minutes),
        )
        if checkpoints is not None:
            plan = replace(plan, resume=checkpoints.setup(run_dir))
        problems = [*plan.problems(), *resume_problems(r, checkpoints)]
        if problems:
            raise PlanRefused(problems)  # each front end words them
        folder.manifest()  # a folder too big to copy is refused here, before the node is touched
        lock = lock_path(session.ledger.path.parent, r.zone, self.name)
        command = f"tpuwizard run {script.name}"

        def waiting(text: str) -> None:
            emit(ev.WaitingForNode(self.name, text))

        with run_lock(lock, self.name, command, wait, cancel, waiting):
            self.check_chip(even_if_held, emit)  # under the lock: no run of ours is going on
            emit(ev.RunStarted(run_id, self.name, self.workers, str(run_dir)))
            run_dir.mkdir(parents=True, exist_ok=True)
            if checkpoints is not None:
                code, kept = run_resumable(
                    self, plan, folder, emit, cancel, checkpoints, even_if_held
                )
            else:
                code, gone = self.run_once(plan, folder, emit, cancel)
                if gone is not None:
                    emit(ev.Failed("script", diagnose(gone, self.context())))
                kept = self.name
            left, practice = [kept] if kept else [], self.nodes.session.practice
            emit(ev.Finished(code == EXIT_OK, code, str(run_dir), None, left, practice=practice))
            return code

    def check_chip(self, even_if_held: bool, emit: Callable[[ev.Event], None]) -> None:
        """Who holds the chip on every worker, before anything is copied (after the owner check
        that opened this node): what an earlier run of ours left is ended; another's refuses
        the run (``ChipHeld``) unless ``even_if_held`` (core/launch/workers/held_chip.py)."""
        from tpuwizard.core.launch.workers.held_chip import check_chip

        try:
            check_chip(self.transport, self.name, self.rt.chip_files, even_if_held, emit)
        except RemoteError as err:
            gone = self._why(err, "when tpuwizard listed who holds its TPU")
            if gone is None:
                raise
            raise gone from err

    def context(self) -> Context:
        """The node's words for a diagnosis."""
        from tpuwizard.core.cloud.diagnose.diagnosis import Context

        r = self.entry.resource
        return Context(
            project=r.project,
            zone=r.zone,
            accelerator=r.accelerator,
            name=self.name,
            route=r.route,
            slice=r.known_slice,
        )

    def run_once(
        self,
        plan: ScriptRun,
        folder: LocalFolder,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
    ) -> tuple[int, Exception | None]:
        """One run of the script on this node, under heartbeats: its exit code, and what
        happened to the node when it went away under it (then nothing is said of it here)."""
        from tpuwizard.core.cloud.diagnose.failure import diagnose

        def missed(text: str) -> None:
            emit(ev.HeartbeatMissed(self.name, text))

        try:
            with self.keep_alive(missed):
                return self._run_script(plan, folder, emit, cancel), None
        except BadInput:
            raise
        except Cancelled:  # a stop where the run did not expect one: still the stop's code
            return cancel.exit_code or EXIT_STOPPED, None
        except (NodeGone, QueueSuspended) as gone:
            return EXIT_CLOUD, gone
        except WorkersStalled as stalled:  # the script hung, not the cloud: as a launch's, 1
            emit(ev.Failed("script", diagnose(stalled, self.context())))
            return EXIT_FAILED, None
        except Exception as err:  # a command on it failed
            emit(ev.Failed("script", diagnose(err, self.context())))
            return EXIT_CLOUD, None

    def _run_script(
        self,
        plan: ScriptRun,
        folder: LocalFolder,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
    ) -> int:
        try:
            return run_script(self.transport, plan, folder, emit, cancel)
        except RemoteError as err:
            gone = self._why(err, "while your script ran")
            if gone is None:
                raise
            raise gone from err

    def shell_command(self, worker: int) -> tuple[list[str], str | None, dict[str, str] | None]:
        """The local argv (with its cwd and env) of an interactive shell on ``worker``."""
        from tpuwizard.core.launch.workers.jobs import shell_env
        from tpuwizard.core.remote.interactive import interactive_command

        if not 0 <= worker < self.workers:
            raise BadInput(f"--worker must be 0-{self.workers - 1} on {self.name}.")
        env = shell_env(self.rt.expect, self.entry.resource.slice)
        return interactive_command(self.transport, worker, env=env)

    def measure(
        self,
        program: Path,
        function: str,
        mesh: list[tuple[str, int | None]],
        steps: int,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
        even_if_held: bool = False,
    ) -> tuple[dict[str, Any], int]:
        """``fit --measure --node``: run the program's step on this node as a run runs (its run
        lock, the chip checked, heartbeats, the folder copied, the job streamed), bounded by the
        node's deadline:
        the measurement is stopped when the deadline comes first. Returns what the measuring
        worker said and its exit code."""
        import threading
        import time

        from tpuwizard.core.launch.kept.measure import NodeMeasure, measure_on_node
        from tpuwizard.core.launch.kept.run_lock import lock_path, run_lock

        if self.workers > 1:
            raise BadInput(
                f"{self.name} has {self.workers} workers: measuring a multi-host slice is not "
                "done here (every VM would have to run the step together). Use a single-host node."
            )
        session, r = self.nodes.session, self.entry.resource
        deadline = KeptRecord.of(self.entry).deadline
        left = None if deadline is None else deadline - time.time()
        if left is not None and left < 60:
            raise BadInput(
                f"{self.name} deletes itself in {max(left, 0):.0f} s: too soon to measure."
            )
        run_id, _run_dir = session.new_run()
        plan = NodeMeasure(program, function, mesh, steps, run_id, r.slice, self.rt.expect)
        folder = LocalFolder.of_script(program)
        folder.manifest()  # a folder too big to copy is refused before the node is touched
        lock = lock_path(session.ledger.path.parent, r.zone, self.name)
        timer = (
            threading.Timer(left - 30, cancel.set, ("the node's deadline is near",))
            if left is not None
            else None
        )

        def waiting(text: str) -> None:
            emit(ev.WaitingForNode(self.name, text))

        def missed(text: str) -> None:
            emit(ev.HeartbeatMissed(self.name, text))

        with run_lock(
            lock, self.name, f"tpuwizard fit --measure {program.name}", False, cancel, waiting
        ):
            self.check_chip(even_if_held, emit)
            if timer is not None:
                timer.daemon = True
                timer.start()
            try:
                with self.keep_alive(missed):
                    return measure_on_node(self.transport, plan, folder, emit, cancel)
            except RemoteError as err:
                gone = self._why(err, "while your step was measured")
                if gone is None:
                    raise
                raise gone from err
            finally:
                if timer is not None:
                    timer.cancel()
