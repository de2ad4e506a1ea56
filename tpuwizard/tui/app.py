"""The wizard App: walks the steps, runs a launch, and guards every way out while anything bills.

A controller worker walks the step screens with ``push_screen_wait``; each screen returns what the
user chose (or ``BACK``). The launch is ``LaunchHandle.async_events``: the App folds each event
into its state and hands it to the screen of that phase. Quitting goes through ``action_quit``
alone; SIGINT (Ctrl+C is a key here), SIGTERM and SIGHUP (tui/hangup.py) tear down what this
session made (a kept node stays kept), then exit 128+signal."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.tui.hangup import Hangup, safe_driver
from tpuwizard.tui.held_keys import HeldKeys
from tpuwizard.tui.screens.base import BACK
from tpuwizard.tui.state import WizardState

if TYPE_CHECKING:
    from textual.worker import Worker

    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.session.launch_handle import LaunchHandle

HERE = Path(__file__).parent


class WizardApp(App[int]):
    TITLE = "tpuwizard"
    # Absolute, so subclasses elsewhere (scripts/screenshots.py) find the same files.
    CSS_PATH: ClassVar = [HERE / "global.tcss", HERE / "screens" / "screens.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # A beginner's stop key: the same guarded way out as Ctrl+Q, before a field's copy
        # (the terminal's own selection still copies; super+c too).
        Binding("ctrl+c", "quit", show=False, priority=True),
        Binding("ctrl+t", "toggle_theme", "Theme"),
    ]

    def __init__(
        self, sandbox: bool = False, run_dir: Path | None = None, check_leftovers: bool = True
    ) -> None:
        super().__init__()
        self.driver_class = safe_driver(self.driver_class)
        self.force_sandbox = sandbox
        self.check_leftovers = check_leftovers
        self.state = WizardState()
        self.runs = run_dir  # the base of run folders asked for; the session says the default
        self.session: Any = None  # tpuwizard.session.Session, made when the walk starts
        self.handle: LaunchHandle | None = None  # the running launch, if any
        self.last_summary: RunSummary | None = None  # the last launch's: printed on the way out
        self.guard_open = False
        self.leaving: int | None = None  # the exit code, once a way out was chosen
        self.signal_received: int | None = None
        self.heartbeats: Any = None  # KeptHeartbeats: the kept nodes' heartbeats while open
        self.kept_beat_s: float | None = None  # their longest wait (None: the session's 60 s)
        self.leftover_check: Worker[None] | None = None  # checking for earlier runs' resources
        self.connected = threading.Event()  # the cloud chosen on Account is open (set each time)
        self.connecting = threading.Lock()  # one connect at a time (tui/leftover_check.py)
        self.held_keys = HeldKeys()  # typed while no step is on screen: the next step's
        self.hangup = Hangup(lambda: self.session is not None and self.session.busy)
        self.exiting = False

    @property
    def billing(self) -> BillingState:
        """What may bill now: the session's, read by the meter and the quit guard."""
        return self.session.billing if self.session is not None else BillingState()

    def compose(self) -> ComposeResult:
        yield Static("Starting...", id="welcome")

    def on_key(self, event: events.Key) -> None:
        self.held_keys.hold(self, event)

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            # Not possible off the main thread (some test runners) or on Windows.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.on_signal, sig)
        self.walk()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    # -- the walk ---------------------------------------------------------------------------
    @work(exclusive=True, group="walk", exit_on_error=False)
    async def walk(self) -> None:
        # Imported here, not above: the first screen shows sooner (benchmarks/tui_startup.py).
        from tpuwizard.core.cloud import gcloud_config
        from tpuwizard.session.session import Session

        ctx = gcloud_config.discover()  # local files only, no network: no thread needed
        # Discovered once: gcloud's files (and its credentials database) are read before the
        # first frame.
        self.session = Session.for_walk(self.force_sandbox, self.runs, ctx)
        self.state.practice, self.state.project = self.session.practice, self.session.project
        self.state.zone, self.state.account = ctx.zone, ctx.account
        self.state.credentials = ctx.credentials
        self.state.run_dir = self.session.runs_base
        if self.check_leftovers:
            self.session.billing.expect_leftovers()  # the meter says it is looking
        else:
            self.start_heartbeats()
        step = 0
        while True:
            steps = [
                self.step_route,
                lambda: self.step_account(ctx),
                self.step_capacity,
                self.step_zones,
                self.step_review,
            ]
            result = await steps[step]()
            if result == BACK:
                step = max(0, step - 1)
                continue
            if step == 0 and self.state.free_notebook:
                from tpuwizard.tui.free_route import free_route

                await free_route(self)  # a notebook, or a run on Kaggle and its Summary
                continue
            step += 1
            if step < len(steps):
                continue
            way_on = await self.run_launch()
            if self.exiting or self.leaving is not None:
                return
            # A new launch starts at the first step; another zone (after a stockout, chosen on
            # the summary) goes back to Review with it.
            step = 0 if way_on == "again" else 4

    async def step_route(self) -> Any:
        from tpuwizard.tui.screens.route import RouteScreen

        shown = self.push_screen(
            RouteScreen(self.state.route_card, self.state.route_answers), wait_for_dismiss=True
        )
        # Once the first step is drawn, not before: the check opens the cloud in a thread (the
        # client library, or the practice sandbox), and would slow the drawing down.
        self.call_after_refresh(self.start_leftover_check)
        result = await shown
        if result != BACK:
            self.state.choose_route(result)
        return result

    async def step_account(self, ctx: gcloud_config.GcloudContext) -> Any:
        from tpuwizard.session.preflight import project_checks
        from tpuwizard.tui.leftover_check import connect_after_leftovers
        from tpuwizard.tui.screens.account import AccountScreen

        s, checks = self.state, functools.partial(project_checks, self.session)
        refusal = self.session.mode.real_refusal
        result = await self.push_screen_wait(
            AccountScreen(ctx, s.practice, s.project, refusal, checks)
        )
        if result == BACK:
            return result
        self.state.practice = result.practice
        self.state.project = result.project
        # Capacity needs no cloud: it shows at once while the chosen one opens (after the
        # leftover check, which connects too); Zones waits for it in its survey's thread.
        self.connected = threading.Event()
        self.run_worker(connect_after_leftovers(self, self.connected), group="connect")
        return result

    def start_leftover_check(self) -> Worker[None] | None:
        """Look for earlier runs' resources, beside the walk (once); the worker, if asked for."""
        if self.check_leftovers and self.leftover_check is None:
            from tpuwizard.tui.leftover_check import offer_leftovers

            self.leftover_check = self.run_worker(offer_leftovers(self), group="leftovers")
        return self.leftover_check

    def start_heartbeats(self) -> None:
        from tpuwizard.tui.kept_beat import start_heartbeats

        self.heartbeats = start_heartbeats(self)

    async def step_capacity(self) -> Any:
        from tpuwizard.tui.screens.capacity import CapacityScreen

        s = self.state
        result = await self.push_screen_wait(
            CapacityScreen(s.state_gib, s.accelerator or None, s.params, s.recipe, s.route)
        )
        if result != BACK:
            s.state_gib, s.accelerator = result.state_gib, result.accelerator
            s.params, s.recipe = result.params, result.recipe
            s.program_pick = result.program
        return result

    async def step_zones(self) -> Any:
        from tpuwizard.tui.screens.zones import ZonesScreen

        def survey() -> Any:  # a ZoneAnswer: a failed live survey gives the catalog, said so
            self.connected.wait()  # the cloud chosen on Account is open
            return self.session.zone_survey(strict=False)

        result = await self.push_screen_wait(
            ZonesScreen(self.state.slice, self.state.zone, survey, self.state.route)
        )
        if result != BACK:
            self.state.zone = result
        return result

    async def step_review(self) -> Any:
        from tpuwizard.tui.screens.review import ReviewScreen

        await self.look_ahead()
        result = await self.push_screen_wait(ReviewScreen(self.state))
        if result != BACK:
            self.state.take_review(result)
        return result

    async def look_ahead(self) -> None:
        """Before Review: what the session decides of the answers so far (the backend, with
        Compute Engine's quota read where auto waits on it; the watchdog's check). The watchdog's
        switch starts at the check's answer, once per project and route, so going Back keeps
        what the user chose; a backend chosen for another type is asked of the session again."""
        s = self.state
        s.outlook = None
        outlook = await asyncio.to_thread(self.session.look_ahead, s.plan_answers())
        if not outlook.serves_asked(s.backend):
            s.backend = Backend.AUTO
            outlook = await asyncio.to_thread(self.session.look_ahead, s.plan_answers())
        s.outlook, s.watchdog_check = outlook, outlook.watchdog_check
        key = (s.project or "", s.route)
        if not outlook.watchdog_route:  # no watchdog on this route: the session's answer
            s.deadline, s.watchdog_checked_for = replace(s.deadline, watchdog=False), None
        elif s.watchdog_checked_for != key:
            s.deadline = replace(s.deadline, watchdog=outlook.watchdog_default)
            s.watchdog_checked_for = key

    # -- the launch -------------------------------------------------------------------------
    async def run_launch(self) -> str | None:
        """One launch, then its summary (tui/launch_view.py): the way on chosen ("again",
        "zone", "review"), None when the wizard is leaving."""
        from tpuwizard.tui.launch_view import LaunchView

        return await LaunchView(self).run()

    def refresh_status(self) -> None:
        from tpuwizard.tui.widgets.status_bar import StatusBar

        if not self.screen_stack:
            return  # closing: a late heartbeat's refresh has no bar to update
        for bar in self.screen.query(StatusBar):
            bar.refresh_text()

    # -- leaving ----------------------------------------------------------------------------
    def action_quit(self) -> None:  # type: ignore[override]
        """The only way out: Ctrl+Q, Esc on dialogs, the command palette and the footer."""
        from tpuwizard.tui.screens.kaggle_quit import guard_kaggle_quit
        from tpuwizard.tui.screens.quit_guard import QuitGuard

        if self.guard_open or self.leaving is not None:
            return  # one guard at a time; a way out already chosen ends in exit
        billing = self.billing
        if not billing.may_bill():
            if guard_kaggle_quit(self):  # a kernel left on Kaggle: named before leaving
                return
            # After a launch, its summary stays in the terminal (as Keep and Delete now leave it).
            self.finish(0, self.goodbye() if self.last_summary is not None else None)
            return
        self.guard_open = True
        self.push_screen(QuitGuard(billing.existing(), billing.undecided()), self.after_guard)

    def after_guard(self, choice: str | None) -> None:
        self.guard_open = False
        if choice == "keep":
            self.leave_running(0)
        elif choice == "delete":
            self.delete_then_exit(0)

    def leave_running(self, code: int) -> None:
        """Keep means keep: the launch detaches (it records the node as kept), then we exit."""
        self.leaving = code
        names = [b.name for b in self.billing.undecided()]
        self.session.leave(names)
        if self.handle is not None:  # the launch loop exits once its Finished arrives
            from tpuwizard.tui.keeping import keep_launch

            keep_launch(self, self.handle, names[0] if names else self.handle.plan.node_name, code)
        else:
            self.finish(code, self.goodbye())

    def delete_then_exit(self, code: int, only: list[str] | None = None) -> None:
        self.leaving = code  # ``only``: a stop signal's, what this session made and did not keep
        if self.handle is not None:
            self.handle.delete_now("quit", code)  # it deletes in its finally, then we exit
        else:
            self.delete_left_things(code, only)

    @work(thread=True, exclusive=True, group="teardown", exit_on_error=False)
    def delete_left_things(self, code: int, names: list[str] | None = None) -> None:
        """No launch runs but something may bill (leftovers, a failed teardown): ``names``."""
        try:
            self.session.delete_everything_left(names)
        finally:
            self.call_from_thread(self.finish, code, self.goodbye())

    def goodbye(self, summary: RunSummary | None = None) -> str | None:
        """The last words printed on exit: the run's summary (the last launch's unless one is
        given), what still bills, how to delete."""
        from tpuwizard.tui.farewell import farewell

        summary = summary if summary is not None else self.last_summary
        return farewell(self.billing, self.state.kept, self.state.practice, summary)

    def finish(self, code: int, message: str | None = None) -> None:
        self.exiting = True
        self.on_unmount()
        self.exit(code, return_code=code, message=message)
        self.hangup.finished(code)

    def on_unmount(self) -> None:
        handle = self.handle
        if handle is not None and handle.finished is None:
            # No way out chosen (a crash, a closed terminal): delete as on a signal; a Keep stands.
            handle.delete_now("the wizard closed")
        elif self.session is not None:
            self.session.close()  # in practice, what is kept or left lives on after us
        if self.heartbeats is not None:
            self.heartbeats.stop()  # no more heartbeats once the wizard is closed

    def on_signal(self, signum: int) -> None:
        self.hangup.signalled(signum, self.is_headless)
        if self.signal_received is not None or self.exiting:
            return  # on the way out already: a second signal starts no second teardown
        self.signal_received = signum
        # A launch, or what this session made: it does not outlive us; a kept node stays kept.
        made = [b.name for b in self.billing.made_here()]
        if self.handle is not None or made:
            self.delete_then_exit(128 + signum, made)
        else:
            self.finish(128 + signum, self.goodbye() if self.billing.may_bill() else None)


def run_wizard(sandbox: bool = False) -> int:
    app = WizardApp(sandbox=sandbox)
    with app.hangup.ending():
        app.run()
    return app.return_code or 0
