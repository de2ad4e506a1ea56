"""The one way in: a Session decides practice or real, opens the cloud, runs launches, finds and
deletes leftovers, and keeps the one :class:`BillingState` that every front end reads.

The wizard, the plain mode and the CLI hold a Session and forward the user's intent to it
(start, delete now, keep, leave). None of them decides what bills.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tpuwizard.core import paths
from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.cloud.backends import COMPUTE, TPU_API, Backend
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.session import decision
from tpuwizard.session.clouds import CloudBook, worth_surveying
from tpuwizard.session.decision import Mode, ZoneAnswer
from tpuwizard.session.practice import sandbox as practice_mode

if TYPE_CHECKING:
    # Imported where used: the wizard makes its Session before its first screen shows.
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.cloud.protocol import Cloud
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.launch.events.launch_events import ZoneListed
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.launch.records.ledger import Ledger, Resource
    from tpuwizard.core.launch.teardown.verified import Found, TeardownResult
    from tpuwizard.core.routes import Route
    from tpuwizard.session.kept.check import KeptCheck
    from tpuwizard.session.kept.nodes import KeptNodes
    from tpuwizard.session.launch_handle import LaunchHandle
    from tpuwizard.session.prepare.outcomes import Outlook, Prepared
    from tpuwizard.session.prepare.stages import Priced


def new_run(base: Path | None = None) -> tuple[str, Path]:
    """A new run: its id, minted here and nowhere else, and its folder under ``base``
    (``--run-dir``; else ``runs/`` here)."""
    run_id = paths.new_run_id()
    return run_id, paths.runs_folder(base) / run_id


class Session:
    """One user's session with Cloud TPU (or the practice sandbox)."""

    def __init__(
        self,
        practice: bool,
        project: str | None = None,
        runs: Path | None = None,
        mode: Mode | None = None,
    ) -> None:
        self.practice = practice
        self.project = project or (practice_mode.PRACTICE_PROJECT if practice else None)
        self.runs = runs  # the base folder of run folders asked for (--run-dir), if any
        # How practice or real was decided at start (its reason, for the words front ends say).
        self.mode = mode or Mode(practice, self.project, "asked" if practice else "real")
        self.billing = BillingState()
        self.clouds = CloudBook(self._open_cloud)
        self._sandbox_server: Any = None  # the practice sandbox this process serves, if any
        self._watchdog_checks: dict[tuple[bool, str, str | None], WatchdogCheck] = {}
        self._launches: list[LaunchHandle] = []
        self._deletions = 0  # deletions under way outside a launch (the wizard's, in threads)
        self._deletions_lock = threading.Lock()
        self._sandbox_lock = threading.Lock()

    @staticmethod
    def decide(sandbox: bool, ctx: gcloud_config.GcloudContext) -> Mode:
        """Practice or real, and the project: the one rule every front end asks
        (:func:`decision.decide`)."""
        return decision.decide(sandbox, ctx)

    @classmethod
    def open(
        cls, project: str | None = None, sandbox: bool = False, runs: Path | None = None
    ) -> Session:
        """The commands' session, by :meth:`decide`; a real one needs a valid project."""
        mode = cls.decide(sandbox, gcloud_config.discover(project=project))
        if mode.practice:  # before any call, whichever sandbox would serve it
            practice_mode.check_settings()
        if mode.practice and not practice_mode.is_practice():  # this process would serve it
            practice_mode.read_only_home_refused()
        if mode.practice and project:  # practice holds Google's rules too
            gcloud_config.validate_project(project)
        if not mode.practice:
            if mode.project is None:
                raise BadInput(
                    "No project is set: give --project PROJECT_ID or run "
                    "`gcloud config set project PROJECT_ID`."
                )
            gcloud_config.validate_project(mode.project)
        return cls(mode.practice, mode.project, runs, mode)

    @classmethod
    def for_walk(
        cls,
        sandbox: bool,
        runs: Path | None = None,
        ctx: gcloud_config.GcloudContext | None = None,
    ) -> Session:
        """The wizard's and plain mode's session, by :meth:`decide` (the project may still be
        asked for: :meth:`switch`), from ``ctx`` where the walk has discovered it already."""
        mode = cls.decide(sandbox, ctx if ctx is not None else gcloud_config.discover())
        return cls(mode.practice, mode.project, runs, mode)

    def switch(self, practice: bool, project: str | None) -> None:
        """The wizard's account step changed mode or project: the next cloud call uses them."""
        if (practice, project) != (self.practice, self.project):
            self.practice = practice
            self.project = project or (practice_mode.PRACTICE_PROJECT if practice else None)
            self.clouds.forget()

    # -- the cloud --------------------------------------------------------------------------
    @property
    def cloud(self) -> TpuCloud:
        """The TPU API's cloud, made on first use (practice starts the sandbox once)."""
        return cast("TpuCloud", self.clouds.get(TPU_API))

    def cloud_for(self, backend: str) -> Cloud:
        """The cloud of ``backend`` (a ledger record's, a plan's), made on first use."""
        return self.clouds.get(backend)

    def _open_cloud(self, backend: str) -> Cloud:
        from tpuwizard.core.cloud.endpoint import GOOGLE_COMPUTE_ENDPOINT, GOOGLE_ENDPOINT

        with self._sandbox_lock:  # two backends opening at once start one sandbox
            if self.practice and not practice_mode.is_practice():
                # None when a lasting one was running: then this process serves nothing. The
                # sandbox serves both backends on one port.
                self._sandbox_server = practice_mode.start_sandbox()
        if not self.project:
            raise BadInput("No project is set: choose a project id first.")
        # Real means Google, even after a practice sandbox of ours exported its address.
        if backend == COMPUTE:
            from tpuwizard.core.cloud.compute.client import ComputeCloud

            return ComputeCloud(
                self.project, endpoint=None if self.practice else GOOGLE_COMPUTE_ENDPOINT
            )
        from tpuwizard.core.cloud.tpu.client import TpuCloud

        return TpuCloud(self.project, endpoint=None if self.practice else GOOGLE_ENDPOINT)

    @property
    def ledger(self) -> Ledger:
        from tpuwizard.session.ledgers import ledger_for  # not runtime's launch machinery

        return ledger_for(self.practice)

    # -- where things go and come from ------------------------------------------------------
    @property
    def runs_base(self) -> Path:
        """The folder that holds the run folders: ``--run-dir``, else ``runs/`` here."""
        return paths.runs_folder(self.runs)

    def run_folder(self, run_id: str) -> Path:
        """Where run ``run_id``'s receipt and files go (created when the launch writes them);
        what its script's ``--fetch`` copies back goes in its ``files/``
        (``paths.fetched_files``), the same for ``launch`` and ``run``."""
        return self.runs_base / run_id

    def new_run(self) -> tuple[str, Path]:
        """A new run's id and its folder among this session's run folders."""
        return new_run(self.runs)

    def plan_launch(self, answers: LaunchAnswers, backend: Backend) -> LaunchPlan:
        """The launch plan for ``answers`` on the ``backend`` decided for them, for a new run:
        the run's id and folder minted here, the project this session's where the answers name
        none (a kept node made again from its record: session/kept/resume.py; a front end's
        answers go through :meth:`prepare`)."""
        from dataclasses import replace

        from tpuwizard.core.launch.plan.launch_plan import plan_for_run

        run_id, run_dir = self.new_run()
        where = replace(answers.where, project=answers.where.project or self.project or "")
        answers = replace(answers, where=where)
        return plan_for_run(run_id, run_dir, answers, backend)

    def prepare(
        self,
        answers: LaunchAnswers,
        *,
        preflight: bool = True,
        prices: Priced | None = None,
        found: Outlook | None = None,
    ) -> Prepared:
        """The pipeline before create (session/prepare/): the backend, the defaults, every
        rule, the preflight, the watchdog and the keep, in that order, for a new run of
        ``answers``. Its outcome is :class:`Ready` (a CheckedPlan, what :meth:`start_launch`
        takes), a refusal with its reasons, or a question the person must answer.
        ``preflight`` False: ``--no-preflight``; ``prices``: the command's, started once the
        rules pass; ``found``: a walk's :meth:`look_ahead`, whose quota reading stands."""
        from tpuwizard.session.prepare.pipeline import prepare

        return prepare(self, answers, preflight=preflight, prices=prices, found=found)

    def preflight_only(self, answers: LaunchAnswers) -> Prepared:
        """The checks before create for ``answers``, with the backend and the zone decided as
        a launch decides them (``tpuwizard preflight``); nothing is made."""
        from tpuwizard.session.prepare.pipeline import preflight_only

        return preflight_only(self, answers)

    def look_ahead(self, answers: LaunchAnswers) -> Outlook:
        """What the pipeline decides of a walk's answers before its last questions: the backend
        (auto's Compute Engine quota read where it decides), the watchdog's check and default."""
        from tpuwizard.session.prepare.pipeline import look_ahead

        return look_ahead(answers, self)

    def zone_survey(self, refresh: bool = False, strict: bool = True) -> ZoneAnswer:
        """Which zones offer which types: live when this session reaches a cloud (practice, or
        Google credentials), else the documented catalog. A live survey that fails raises when
        ``strict`` (the ``zones`` command's answer is the survey); else the documented catalog
        stands in, and the answer says why (the wizard's and plain mode's walks go on)."""
        from tpuwizard.core.cloud import zones
        from tpuwizard.session.decision import zone_history

        tried = zone_history(self.practice)
        if not (self.practice or gcloud_config.has_credentials()):
            return ZoneAnswer(zones.documented(), self.practice, attempts=tried)
        try:
            return ZoneAnswer(zones.live(self.cloud, refresh=refresh), self.practice, None, tried)
        except BadInput:
            raise
        except Exception as err:
            if strict:
                raise
            from tpuwizard.core.cloud.diagnose.failure import diagnose

            return ZoneAnswer(zones.documented(), self.practice, diagnose(err).title, tried)

    # -- before create ----------------------------------------------------------------------
    def watchdog_check(self, service_account: str | None = None) -> WatchdogCheck:
        """Can the on-VM watchdog run? Asked before create (IAM's actAs test and the project's
        IAM policy). A check that cannot be made answers "not known" (the VM checks again after
        create), so every front end goes on the same way: see :meth:`default_watchdog`."""
        from tpuwizard.core.cloud.endpoint import GOOGLE_ENDPOINT
        from tpuwizard.core.cloud.iam import WatchdogCheck, check_watchdog, endpoints_for

        try:
            cloud = self.cloud
            key = (self.practice, cloud.project, service_account)
            if key not in self._watchdog_checks:
                iam, crm = endpoints_for(cloud.endpoint, GOOGLE_ENDPOINT)
                self._watchdog_checks[key] = check_watchdog(
                    cloud.credentials, cloud.project, service_account, iam, crm, cloud.timeout
                )
            return self._watchdog_checks[key]
        except BadInput:
            raise
        except Exception as err:  # not cached: the next ask tries again
            from tpuwizard.core.cloud.diagnose.failure import diagnose

            return WatchdogCheck(
                None,
                f"the check before create could not be made ({diagnose(err).title}); the "
                "watchdog checks on the VM after create",
                service_account or "the project's default compute account",
            )

    def default_watchdog(self, route: Route, check: WatchdogCheck | None) -> bool:
        """The watchdog switch before the user touches it (:func:`watchdog.default_watchdog`)."""
        from tpuwizard.session.watchdog import default_watchdog

        return default_watchdog(route, check)

    # -- launches ---------------------------------------------------------------------------
    def start_launch(self, checked: CheckedPlan, reruns: bool = False) -> LaunchHandle:
        """A launch ready to run from a plan every check before create let through
        (:meth:`prepare`'s ``Ready``); its events flow through this session's billing state.
        Its workers are reached as the plan says (``plan.transport``, whose rules it checked).

        With ``reruns`` the launch waits after each run of the script (``ScriptDone``) for
        :meth:`LaunchHandle.run_again` or :meth:`LaunchHandle.end_runs`.
        """
        from tpuwizard.session.launch_handle import LaunchHandle

        handle = LaunchHandle(self, checked)
        self._launches.append(handle)
        if reruns:
            from tpuwizard.core.launch.workers.rerun import Reruns

            handle.reruns = Reruns()
        return handle

    def prepare_to_keep(self) -> None:
        """A kept node outlives this process; in practice, so must the sandbox that holds it
        (its watchdog calls it after this command has exited, and a stop signal just after the
        hand-over ends this process). Under the lock that opening a cloud takes, so that a price
        read opening the cloud meanwhile starts no sandbox of its own: one it started already
        moves now to a lasting sandbox on the same port and token (its clients go on working).
        Two servers never serve the same state, and the node, its client and its watchdog's token
        are never each another one's (the watchdog was refused with 401, or called a port nobody
        served any more: the CI's red run)."""
        if not self.practice:
            return
        with self._sandbox_lock:
            server, self._sandbox_server = self._sandbox_server, None
            if server is not None:
                practice_mode.hand_over(server, always=True)
            elif not self.clouds.opened and not practice_mode.is_practice():
                practice_mode.start_lasting_sandbox()

    def close(self) -> None:
        """The front end is ending and no launch of it is running. In practice, whatever still
        exists (a node kept, leftovers left running) moves to a lasting sandbox, so it lives on
        and its watchdog can still delete it, as with Google."""
        self.clouds.close()  # before the hand-over: no thread of ours starts another sandbox
        server, self._sandbox_server = self._sandbox_server, None
        if server is not None:
            practice_mode.hand_over(server)

    # -- kept nodes (tpuwizard up, run, watch, ssh) -------------------------------------------
    @property
    def kept(self) -> KeptNodes:
        """The kept nodes of this session: find, price, run on, heartbeat."""
        from tpuwizard.session.kept.nodes import KeptNodes

        return KeptNodes(self)

    def check_kept(self) -> KeptCheck:
        """Every kept node that still exists (:meth:`KeptNodes.check`: one Google preempted is
        deleted now). Where the ledger records none, the kept-node machinery is not loaded
        and nothing is called."""
        from tpuwizard.session.kept.check import KeptCheck

        if not any(e.op == "kept" for e in self.ledger.open_entries()):
            return KeptCheck([], [])
        return self.kept.check()

    # -- leftovers --------------------------------------------------------------------------
    def find_leftovers(self, zones: list[str] | None = None) -> Found:
        """What earlier runs left that still exists (ledger + labels); they count as billing."""
        from functools import partial

        from tpuwizard.core.launch.teardown.survey import reconcile_backends

        backends = worth_surveying(self.clouds.surveyed(), self.ledger, self.project)
        each = [(b, partial(self.cloud_for, b)) for b in backends]
        found = reconcile_backends(each, self.ledger, zones, owner=self.owner, project=self.project)
        found.stopped_ended = self._end_stopped(found)
        self.billing.add_leftovers(found)  # only this install's: others' do not bill this user
        return found

    def _end_stopped(self, found: Found) -> list[TeardownResult]:
        """Compute Engine VMs of ours that Google stopped: Google cleared their deadline when
        it stopped them (limit-vm-runtime) and their disks bill, so nothing would end them.
        Delete each and verify; those verified gone leave ``found``."""
        from tpuwizard.core.cloud.compute.states import STOPPED_STATES

        stopped = [
            b.resource for b in found if b.resource.backend == COMPUTE and b.state in STOPPED_STATES
        ]
        if not stopped:
            return []
        results = self.delete(stopped)
        gone = {r.resource.key for r in results if r.verified}
        found[:] = [b for b in found if b.resource.key not in gone]
        return results

    def recorded(self, name: str, zone: str | None = None) -> list[Resource]:
        """This project's open ledger records for ``name`` (or for the node a queued request
        asks for), in ``zone`` when one is given: where this install's own resource is, known
        without surveying any zone."""
        return [
            e.resource
            for e in self.ledger.open_entries()
            if name in (e.resource.name, e.resource.node_id)
            and e.resource.project == self.project
            and zone in (None, e.resource.zone)
        ]

    @property
    def owner(self) -> str:
        """This install's owner label value (a hash; see :func:`paths.owner_label`)."""
        from tpuwizard.core import paths

        return paths.owner_label()

    def is_mine(self, resource: Resource) -> bool:
        """Made by this install: its owner label is ours, or our ledger recorded it."""
        if resource.owner is not None:
            return resource.owner == self.owner
        return any(e.resource.key == resource.key for e in self.ledger.entries())

    def delete(
        self, resources: Sequence[Resource], others_confirmed: bool = False
    ) -> list[TeardownResult]:
        """Delete each and verify it is gone; only what is verified gone stops counting.

        Another owner's resource is left alone (an unverified result that says why) unless the
        front end asked for it by its exact name and the user confirmed: ``others_confirmed``.
        """
        from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
        from tpuwizard.core.launch.teardown.verified import TeardownResult, delete_and_verify

        results = []
        with self._deleting():
            for resource in resources:
                if not others_confirmed and not self.is_mine(resource):
                    why = Diagnosis(
                        "not_ours",
                        f"{resource.name} was made by another tpuwizard user",
                        "It was left alone: tpuwizard deletes only what this install created.",
                        [f"If it must go, ask its owner, or: tpuwizard teardown {resource.name}"],
                    )
                    results.append(TeardownResult(resource, False, why))
                    continue
                cloud = self.cloud_for(resource.backend)
                self._seen_gone_before_delete(resource)
                result = delete_and_verify(cloud, self.ledger, resource)
                if result.verified:
                    self.billing.forget(resource.name, resource.zone)
                    self._close_kept_run(resource)
                results.append(result)
        from tpuwizard.session.login import forget_after_teardown

        # Its OS Login key goes too, once nothing recorded logs in with it (each result says).
        return forget_after_teardown(self.cloud_for, self.ledger, results)

    def _seen_gone_before_delete(self, resource: Resource) -> None:
        """A kept node its zone's listing already lacks: its run folder closes with the reason
        its times support, not as deleted by this command (which then only verifies)."""
        kept = [e for e in self.ledger.open_entries() if e.op == "kept"]
        for entry in kept:
            if entry.resource.key != resource.key:
                continue
            try:
                cloud = self.cloud_for(resource.backend)
                listed = cloud.get_node(resource.zone, resource.node_id or resource.name)
            except Exception:  # unread: the delete that follows says what it finds
                return
            if listed is None:
                self.kept.seen_gone(entry, "teardown")

    def _close_kept_run(self, resource: Resource) -> None:
        """A node a launch kept, now verified gone: the records in that launch's run folder
        (wherever this command runs from) say so, with when and what it cost until then."""
        import time

        from tpuwizard.core.launch.kept.record import KeptRecord
        from tpuwizard.session.run_outcome import close_kept_run

        gone_at = time.time()
        for entry in self.ledger.entries():
            if entry.resource.key == resource.key and (folder := KeptRecord.of(entry).run_dir):
                close_kept_run(Path(folder), resource.name, gone_at)

    def zone_listed(self, zone: str, backend: str) -> ZoneListed:
        """What the zone's TPU list shows now (after a teardown, as the course looks)."""
        from tpuwizard.core.launch.teardown.zone_list import zone_listed

        return zone_listed(self.cloud_for(backend), zone, self.owner, self.practice)

    def delete_everything_left(self, only: Sequence[str] | None = None) -> list[TeardownResult]:
        """Delete what this session knows exists outside a running launch (``only``: just the
        resources so named)."""
        with self._deleting():
            names = {b.name for b in self.billing.existing()}
            names = names if only is None else names & set(only)
            if not names:
                return []
            found = [b.resource for b in self.find_leftovers() if b.resource.name in names]
            return self.delete(found)

    @property
    def busy(self) -> bool:
        """A launch's thread (it may be deleting in its teardown) or a deletion is under way: a
        process that must end now waits for them."""
        return self._deletions > 0 or any(h.running for h in self._launches)

    @contextlib.contextmanager
    def _deleting(self) -> Iterator[None]:
        with self._deletions_lock:
            self._deletions += 1
        try:
            yield
        finally:
            with self._deletions_lock:
                self._deletions -= 1

    def leave(self, names: Sequence[str]) -> None:
        """The user chose to leave these running: they keep billing and are no longer asked."""
        self.billing.leave(names)
