"""One launch started by a :class:`Session`: its events (folded into the session's billing
before any front end sees them), Delete now, Keep, and the answers between runs."""

from __future__ import annotations

import asyncio
import dataclasses
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_TEARDOWN, for_signal
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.session.run_outcome import write_outcome

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.packages import PackageSpec
    from tpuwizard.core.launch.workers.rerun import Reruns
    from tpuwizard.session.login import OsLoginAsk
    from tpuwizard.session.services import SessionServices


class LaunchHandle:
    """One launch: its events (folded into the session's billing first), Delete now and Keep."""

    def __init__(self, session: SessionServices, checked: CheckedPlan) -> None:
        self.session, self.checked, self.plan = session, checked, checked.plan
        self.transport, self.ready_timeout = checked.plan.reach.transport, checked.ready_timeout_s
        self.cancel = CancelToken()
        self.finished: ev.Finished | None = None
        self.summary = RunSummary()  # what the run came to, for the end-of-run summary
        self.reruns: Reruns | None = None
        self.exit_after_stop: int | None = None  # the code the process exits with after a stop
        self.exit_after_keep: int | None = None  # ... and after the user's Keep, once kept
        # The hand-over: the launch's Kept event, once it reached the front end with no stop
        # before it. The one fact a stop signal reads: before it, a stop deletes what this
        # launch created; after it, the node is the user's and the stop keeps it.
        self.handed_over: ev.Kept | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """The launch's thread is alive: it may be creating, or deleting in its teardown."""
        return self._thread is not None and self._thread.is_alive()

    def run_again(self, packages: str = "", even_if_held: bool = False) -> None:
        """After ``ScriptDone``: run the script again (its file is read again), first adding
        ``packages`` (typed as Review's Packages field takes them) to the running node.
        Raises :class:`PlanRefused` for a package that cannot go there; nothing is asked then.
        Who holds the TPU is checked first: a process tpuwizard did not start refuses the run
        (the next ``ScriptDone``'s ``chip_held``) unless ``even_if_held`` (Run anyway)."""
        specs = self.check_packages(packages)
        if self.reruns is not None:
            self.reruns.answer(True, specs, even_if_held)

    @staticmethod
    def check_packages(packages: str) -> tuple[PackageSpec, ...]:
        """The packages typed for a rerun, parsed once; :class:`PlanRefused` says why one cannot
        go into the worker venv (a jax pin, a line that is not a requirement)."""
        from tpuwizard.core.errors import PlanRefused
        from tpuwizard.core.launch.plan.packages import package_problems, specs_from_field

        specs = specs_from_field(packages)
        if problems := package_problems(specs):
            raise PlanRefused(problems)
        return specs

    def end_runs(self) -> None:
        """After ``ScriptDone``: no more runs; the launch goes on to teardown."""
        if self.reruns is not None:
            self.reruns.answer(False)

    def shell_command(self, worker: int = 0) -> tuple[list[str], str | None, dict[str, str] | None]:
        """After ``ScriptDone``, before the answer: (argv, cwd, env) of a shell on ``worker``."""
        if self.reruns is None:
            raise BadInput("This launch runs no script, so it never waits between runs.")
        return self.reruns.shell_command(worker)

    def delete_now(self, reason: str = "stopped", exit_code: int | None = None) -> None:
        """Stop at once: end the jobs and the followers, delete what this launch created. With
        ``exit_code``, the process exits with it, so the launch's ``Finished`` (its Done line
        and the summary's exit code) says it too; the first stop's code stands."""
        if self.exit_after_stop is None:
            self.exit_after_stop = exit_code
        self.cancel.set(reason)

    def stop_for_signal(self, signum: int, name: str) -> ev.Kept | None:
        """A stop signal; the process exits 128 + the first one either way. Before the
        hand-over it deletes now (one that lands as the launch keeps its node, before the
        hand-over: ``delete_kept_after_stop``); returns None then. After it, the node stays
        kept: returns its Kept event, and the launch's ``Finished`` says the code."""
        if self.handed_over is None:
            self.delete_now(name, for_signal(signum))
            return None
        if self.exit_after_stop is None:
            self.exit_after_stop = for_signal(signum)
        return self.handed_over

    def settle_stop_after_hand_over(self) -> None:
        """A stop signal after the hand-over that came after ``Finished`` too: ``Finished``,
        the summary and ``outcome.json`` say the code the process exits with."""
        finished, code = self.finished, self.exit_after_stop
        if self.handed_over is None or finished is None or code is None:
            return
        if finished.exit_code != code:
            self.finished = dataclasses.replace(finished, ok=False, exit_code=code)
            self.summary.finished = self.finished
            write_outcome(self.plan.run_dir, self.finished, self.summary, self.cancel)

    def stop_and_wait(self) -> None:
        """However its front end ends, the launch has ended before it does: one still going
        (the front end failed, or stopped reading) is stopped as a stop signal stops it, and
        waited for while it deletes what it created and verifies that it is gone."""
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return
        if thread.is_alive():
            self.delete_now("the command ended before its launch did")
        thread.join()

    def keep(self, exit_code: int | None = None) -> str:
        """Stop following and leave what exists running, once that is safe: its watchdog armed
        (when the plan has one). Returns the cancel token's ``KEEP_SAFE`` (kept now),
        ``KEEP_PENDING`` (kept once the watchdog is armed; a stop before then deletes) or
        ``KEEP_UNSAFE`` (no watchdog: ask the user, then ``delete_now`` or
        ``keep_without_watchdog``). ``KeepNeedsAnswer`` comes when arming fails later. With
        ``exit_code``, the launch's ``Finished`` says the code the process exits with once kept.
        """
        self.exit_after_keep = exit_code
        return self.cancel.ask_to_keep()

    def keep_without_watchdog(self) -> None:
        """The user's answer to ``KeepNeedsAnswer``: keep it; only a teardown ends it."""
        self.cancel.request_keep()

    def os_login(self, ready_timeout: float) -> OsLoginAsk | None:
        """Under OS Login, until when the key must be in the profile: the latest the launch's
        deadline can fall (ready by ``ready_timeout``, then ``max_run``); None where the
        preflight found OS Login off (or gcloud's SSH is used)."""
        from tpuwizard.session.login import OsLoginAsk

        if not self.checked.os_login_key or self.transport == Transport.GCLOUD:
            return None
        return OsLoginAsk(time.time() + ready_timeout + self.plan.max_run_s)

    def events(self) -> Iterator[ev.Event]:
        """Run the launch in a thread; yield its events after the billing state has seen them."""
        from tpuwizard.core.launch.lifecycle.launch import run_launch
        from tpuwizard.session.runtime import build_runtime

        q: queue.Queue[ev.Event | BaseException | None] = queue.Queue()

        def work() -> None:
            try:
                cloud = self.session.cloud_for(self.plan.backend)
                ready_timeout = self.ready_timeout
                runtime = build_runtime(
                    cloud,
                    self.session.practice,
                    self.transport,
                    self.os_login(ready_timeout),
                )
                runtime.ready_timeout = ready_timeout
                runtime.fan_out_quota_checked = self.checked.fan_out_quota_checked
                runtime.reruns = self.reruns
                run_launch(self.plan, runtime, q.put, self.cancel)
            except BaseException as err:  # reaches the front end as a failure, never silence
                q.put(err)
            finally:
                q.put(None)

        # Not a daemon: if the front end dies, the process stays until teardown is done.
        thread = self._thread = threading.Thread(target=work, name="tpuwizard-launch")
        thread.start()
        while (item := q.get()) is not None:
            if isinstance(item, BaseException):
                yield from self._failed_to_start(item)
                continue
            if isinstance(item, ev.Finished):
                item = self._with_exit_code(item)
            if isinstance(item, ev.Kept) and not self._stopped_before_hand_over():
                self.handed_over = item  # from here a stop keeps it
            self.session.billing.apply(item)
            self.summary.apply(item)
            if isinstance(item, ev.Finished):
                self.finished = item
                write_outcome(self.plan.run_dir, item, self.summary, self.cancel)
            yield item
        thread.join()

    def _stopped_before_hand_over(self) -> bool:
        """A stop (a signal, Delete now) came before the launch's Kept event reached the front
        end: what the launch kept as the stop landed is deleted (``delete_kept_after_stop``).
        The user's own Keep (the wizard's) is no such stop."""
        return self.cancel.is_set() and not self.cancel.keep

    def delete_kept_after_stop(self) -> Iterator[ev.Event]:
        """A stop signal after the launch kept its node (``plan.keep``: ``launch --keep``) but
        before the front end handed it over: the stop means delete, as it does for ``up``.
        Deletes what this launch kept, verified, and yields what became of each, then a
        ``Finished`` that says what is left. A Keep the user chose (the wizard's) stands."""
        stopped = self._stopped_before_hand_over() and self.exit_after_stop is not None
        if not stopped or self.handed_over is not None or self.finished is None:
            return
        if not self.plan.keep:
            return
        kept = [
            e.resource
            for e in self.session.ledger.open_entries()
            if e.op == "kept" and e.resource.run_id == self.plan.run_id
        ]
        if not kept:
            return
        before = {r.name: self.session.billing.get(r.name) for r in kept}
        results = self.session.delete(kept)
        self.summary.cost_usd = None  # counted again below, to the verified delete
        events: list[ev.Event] = []
        for result in results:
            r, billed = result.resource, before.get(result.resource.name)
            if not result.verified:
                from tpuwizard.core.launch.teardown.verified import still_listed

                why = result.diagnosis or still_listed(r)
                practice = self.session.practice
                events.append(ev.TeardownFailed(r.name, r.kind, why, r.zone, practice=practice))
                continue
            spent = billed.cost_usd() if billed is not None else None
            seconds = round(billed.costing_s(), 1) if billed is not None else 0.0
            events.append(
                ev.TeardownVerified(
                    r.name, r.kind, seconds, spent, r.zone, practice=self.session.practice
                )
            )
        gone = {r.resource.name for r in results if r.verified}
        gone |= {r.resource.node_id for r in results if r.verified and r.resource.node_id}
        left = [name for name in self.finished.remaining if name not in gone]
        self.summary.kept = [k for k in self.summary.kept if k.name not in gone]
        code = self.exit_after_stop or self.finished.exit_code
        events.append(dataclasses.replace(self.finished, ok=False, exit_code=code, remaining=left))
        for event in events:
            self.session.billing.apply(event)
            self.summary.apply(event)
            yield event
        self.finished = events[-1]  # type: ignore[assignment]

    def _with_exit_code(self, finished: ev.Finished) -> ev.Finished:
        """The code the process exits with, stamped on ``Finished``: the summary says it too."""
        code = self.exit_after_keep if self.cancel.keep else self.exit_after_stop
        if code is None:
            return finished
        return dataclasses.replace(finished, ok=code == 0, exit_code=code)

    def _failed_to_start(self, err: BaseException) -> Iterator[ev.Event]:
        """The launch's thread ended with an error instead of its ``Finished``: said, and what
        its records say may exist is checked against the cloud, never assumed gone."""
        from tpuwizard.core.cloud.diagnose.failure import diagnose

        code = self.exit_after_stop or (EXIT_BAD_INPUT if isinstance(err, BadInput) else EXIT_CLOUD)
        d = diagnose(err if isinstance(err, Exception) else RuntimeError(str(err)))
        failed = ev.Failed("start", d)
        left = self._still_there()
        if left:
            code = self.exit_after_stop or EXIT_TEARDOWN
        run_dir, practice = str(self.plan.run_dir), self.session.practice
        finished = ev.Finished(False, code, run_dir, None, left, practice=practice)
        for item in (failed, finished):
            self.session.billing.apply(item)
            self.summary.apply(item)
        self.finished = finished
        write_outcome(self.plan.run_dir, finished, self.summary, self.cancel)
        yield failed
        yield finished

    def _still_there(self) -> list[str]:
        """This launch's open records, each checked against the cloud: the names still there,
        and those that could not be checked (they may bill)."""
        from tpuwizard.core.launch.teardown.verified import check_record

        try:
            entries = self.session.ledger.open_entries()
        except Exception:  # an unreadable ledger: its records cannot be named here; status says
            return []
        left = []
        for entry in entries:
            r = entry.resource
            if r.run_id != self.plan.run_id:
                continue
            try:
                cloud = self.session.cloud_for(r.backend)
                there = check_record(cloud, self.session.ledger, entry) is not None
            except Exception:  # not checked: it may still exist and bill
                there = True
            if there:
                left.append(r.name)
        return left

    async def async_events(self) -> AsyncIterator[ev.Event]:
        """The same stream for asyncio front ends (the TUI)."""
        iterator = self.events()
        while True:
            item = await asyncio.to_thread(next, iterator, None)
            if item is None:
                return
            yield item
