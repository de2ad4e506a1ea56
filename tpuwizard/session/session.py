"""The one way in: a Session decides practice or real, opens the cloud, runs launches, finds and
deletes leftovers, and keeps the one :class:`BillingState` that every front end reads.

The wizard, the plain mode and the CLI hold a Session and forward the user's intent to it
(start, delete now, keep, leave). None of them decides what bills.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.billing import BillingState
from tpuwizard.core.launch.ledger import Ledger, Resource
from tpuwizard.core.launch.plan import LaunchPlan
from tpuwizard.core.launch.summary import RunSummary
from tpuwizard.core.launch.teardown import Found, TeardownResult
from tpuwizard.session import practice as practice_mode

if TYPE_CHECKING:
    from tpuwizard.core.cloud.client import TpuCloud


class Session:
    """One user's session with Cloud TPU (or the practice sandbox)."""

    def __init__(self, practice: bool, project: str | None = None) -> None:
        self.practice = practice
        self.project = project or (practice_mode.PRACTICE_PROJECT if practice else None)
        self.billing = BillingState()
        self._cloud: TpuCloud | None = None

    @classmethod
    def open(cls, project: str | None = None, sandbox: bool = False) -> Session:
        """The CLI's choice: the sandbox when asked, when already pointed at one, or when no
        Google credentials exist; else the real API for the configured project."""
        if sandbox or practice_mode.is_practice() or not gcloud_config.has_credentials():
            return cls(True, project)
        ctx = gcloud_config.discover(project=project)
        if ctx.project is None:
            raise BadInput(
                "No project is set: give --project PROJECT_ID or run "
                "`gcloud config set project PROJECT_ID`."
            )
        gcloud_config.validate_project(ctx.project)
        return cls(False, ctx.project)

    def switch(self, practice: bool, project: str | None) -> None:
        """The wizard's account step changed mode or project: the next cloud call uses them."""
        if (practice, project) != (self.practice, self.project):
            self.practice = practice
            self.project = project or (practice_mode.PRACTICE_PROJECT if practice else None)
            self._cloud = None

    # -- the cloud --------------------------------------------------------------------------
    @property
    def cloud(self) -> TpuCloud:
        """The TPU API client, made on first use (practice starts the sandbox once)."""
        if self._cloud is None:
            from tpuwizard.core.cloud.client import TpuCloud

            if self.practice and not practice_mode.is_practice():
                practice_mode.start_sandbox()
            if not self.project:
                raise BadInput("No project is set: choose a project id first.")
            self._cloud = TpuCloud(self.project)
        return self._cloud

    @property
    def ledger(self) -> Ledger:
        from tpuwizard.session.runtime import ledger_for

        return ledger_for(self.practice)

    # -- launches ---------------------------------------------------------------------------
    def start_launch(
        self, plan: LaunchPlan, transport: str = "ssh", ready_timeout: float | None = None
    ) -> LaunchHandle:
        """A launch ready to run; its events flow through this session's billing state."""
        return LaunchHandle(self, plan, transport, ready_timeout)

    # -- leftovers --------------------------------------------------------------------------
    def find_leftovers(self, zones: list[str] | None = None) -> Found:
        """What earlier runs left that still exists (ledger + labels); they count as billing."""
        from tpuwizard.core.launch.teardown import reconcile

        found = reconcile(self.cloud, self.ledger, zones)
        self.billing.add_leftovers(found)
        return found

    def delete(self, resources: Sequence[Resource]) -> list[TeardownResult]:
        """Delete each and verify it is gone; only what is verified gone stops counting."""
        from tpuwizard.core.launch.teardown import delete_and_verify

        results = []
        for resource in resources:
            result = delete_and_verify(self.cloud, self.ledger, resource)
            if result.verified:
                self.billing.forget(resource.name)
            results.append(result)
        return results

    def delete_everything_left(self) -> list[TeardownResult]:
        """Delete what this session knows exists outside a running launch."""
        names = {b.name for b in self.billing.existing()}
        found = [b.resource for b in self.find_leftovers() if b.resource.name in names]
        return self.delete(found)

    def leave(self, names: Sequence[str]) -> None:
        """The user chose to leave these running: they keep billing and are no longer asked."""
        self.billing.leave(names)


class LaunchHandle:
    """One launch: its events (folded into the session's billing first), Delete now and Keep."""

    def __init__(
        self, session: Session, plan: LaunchPlan, transport: str, ready_timeout: float | None
    ) -> None:
        self.session, self.plan = session, plan
        self.transport, self.ready_timeout = transport, ready_timeout
        self.cancel = CancelToken()
        self.finished: ev.Finished | None = None
        self.summary = RunSummary()  # what the run came to, for the end-of-run summary

    def delete_now(self, reason: str = "stopped") -> None:
        """Stop at once: end the jobs and the followers, delete what this launch created."""
        self.cancel.set(reason)

    def keep(self) -> None:
        """Stop following and leave what exists running; nothing deletes it later."""
        self.cancel.request_keep()

    def events(self) -> Iterator[ev.Event]:
        """Run the launch in a thread; yield its events after the billing state has seen them."""
        from tpuwizard.core.launch.lifecycle import run_launch
        from tpuwizard.session.runtime import build_runtime

        q: queue.Queue[ev.Event | BaseException | None] = queue.Queue()

        def work() -> None:
            try:
                runtime = build_runtime(self.session.cloud, self.session.practice, self.transport)
                if self.ready_timeout is not None:
                    runtime.ready_timeout = self.ready_timeout
                run_launch(self.plan, runtime, q.put, self.cancel)
            except BaseException as err:  # reaches the front end as a failure, never silence
                q.put(err)
            finally:
                q.put(None)

        # Not a daemon: if the front end dies, the process stays until teardown is done.
        thread = threading.Thread(target=work, name="tpuwizard-launch")
        thread.start()
        while (item := q.get()) is not None:
            if isinstance(item, BaseException):
                yield from self._failed_to_start(item)
                continue
            self.session.billing.apply(item)
            self.summary.apply(item)
            if isinstance(item, ev.Finished):
                self.finished = item
            yield item
        thread.join()

    def _failed_to_start(self, err: BaseException) -> Iterator[ev.Event]:
        from tpuwizard.core.cloud.diagnose import diagnose

        code = 2 if isinstance(err, BadInput) else 3
        d = diagnose(err if isinstance(err, Exception) else RuntimeError(str(err)))
        failed = ev.Failed("start", d.to_dict())
        finished = ev.Finished(False, code, str(self.plan.run_dir), None)
        for item in (failed, finished):
            self.session.billing.apply(item)
            self.summary.apply(item)
        self.finished = finished
        yield failed
        yield finished

    async def async_events(self) -> AsyncIterator[ev.Event]:
        """The same stream for asyncio front ends (the TUI)."""
        iterator = self.events()
        while True:
            item = await asyncio.to_thread(next, iterator, None)
            if item is None:
                return
            yield item
