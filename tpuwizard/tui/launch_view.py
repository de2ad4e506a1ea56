"""One launch on the wizard's screens: the plan checked before any create, each event folded
into the wizard's state and shown on its phase's screen (Provision, Verify, Script, Teardown), a
dialog over them never replaced, then the Summary and the way on the user chooses."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.tui.host import WizardHost


class LaunchView:
    """The screens of one launch. ``app`` is the wizard: its state, its session, and its
    ``handle`` (the running launch, which its quit guard and signals reach too)."""

    def __init__(self, app: WizardHost) -> None:
        self.app = app
        self.screen: Any = None  # the phase's screen on show
        self.pending: Any = None  # the next phase's screen, while a dialog covers this one
        self.backlog: list[ev.Event] = []  # its events meanwhile, shown once it is on top

    async def run(self) -> str | None:
        """The launch, then its summary: "again" (a new launch), "zone" (another zone the
        summary offered), "review" (a check failed before create); None when the wizard is
        leaving."""
        from tpuwizard.tui.before_create import checked_plan
        from tpuwizard.tui.screens.run import ProvisionScreen

        app, s = self.app, self.app.state
        s.last_failure, s.finished_code, s.total_cost_usd, s.kept = None, None, None, None
        self.screen = ProvisionScreen()
        await app.push_screen(self.screen)
        # The session's pipeline, as launch, up and plain mode run it, before create.
        checked = await checked_plan(app, self.screen, s.plan_answers(), s.outlook)
        if checked is None:
            return "review"  # refused: nothing was created, Review shows again
        handle = app.handle = app.session.start_launch(checked, reruns=True)
        async for event in handle.async_events():
            s.apply(event)
            app.refresh_status()
            if app.leaving is not None:  # on the way out: the guard's choice is carried out
                from tpuwizard.tui.keeping import while_leaving

                while_leaving(app, handle, event, app.leaving)
                continue
            await self.show(event, handle.summary.recovering)
        summary = app.last_summary = handle.summary
        app.handle = None
        if app.leaving is not None:
            app.finish(app.leaving, app.goodbye(summary))
            return None
        return await self.summary(summary)

    async def show(self, event: ev.Event, recovering: bool) -> None:
        """On its phase's screen: the next phase's screen replaces the current one only when
        ours is on top (switch_screen replaces the top screen), so an open dialog (the quit
        guard, help) is never replaced; its events wait and are shown when it comes up.
        ``recovering``: a spot run makes a new node (run.py's phase_screen says what follows)."""
        from tpuwizard.tui.screens.run import phase_screen

        app = self.app
        phase = phase_screen(event, self.pending or self.screen, recovering)
        if phase is not self.screen:
            self.pending = phase
            self.backlog.append(event)
        if self.pending is not None and app.screen is self.screen:
            await app.switch_screen(self.pending)
            self.screen, self.pending = self.pending, None
            for missed in self.backlog:
                self.screen.show(missed)
            self.backlog = []
        elif self.pending is None:
            self.screen.show(event)

    async def summary(self, summary: RunSummary) -> str | None:
        """The Summary, once no dialog covers the last phase, and the way on chosen there."""
        from tpuwizard.tui.screens.summary import SummaryScreen

        app, s = self.app, self.app.state
        while app.screen is not self.screen:  # a dialog is open: never replace it (see show)
            if app.exiting:
                return None
            await asyncio.sleep(0.1)
        screen = SummaryScreen(summary)
        await app.switch_screen(screen)
        failure = s.last_failure
        screen.offer(failure.alternatives if failure and failure.kind == "stockout" else [])
        choice = await screen.choice
        app.pop_screen()
        if choice.kind == "quit":
            app.action_quit()
            return None
        if choice.kind == "zone":
            s.zone = choice.zone
        return str(choice.kind)
