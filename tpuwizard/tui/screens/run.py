"""Steps 6-9: provision, verify, your script, teardown. The App feeds them lifecycle events;
each screen only renders what it is given and reports the user's final choice."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Log, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.host import host
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.checks_panel import ChecksPanel
from tpuwizard.tui.widgets.follow_log import FollowLog
from tpuwizard.words.bill_words import (
    PRACTICE_COST,
    keeps_billing,
    may_still_be_billing,
    still_running,
)
from tpuwizard.words.event_text import (
    describe,
    next_steps,
    refusal_text,
    rerun_offer,
    zone_listed_lines,
)
from tpuwizard.words.figures import about
from tpuwizard.words.held_chip_text import RUN_ANYWAY_LINE, rerun_refused_verdict
from tpuwizard.words.resume_text import attempt_words

if TYPE_CHECKING:
    from textual.widget import AwaitMount

LOG_LINES = 5000  # bounded memory however chatty the worker is


def wrap_lines(lines: list[str], width: int) -> list[str]:
    """Fold lines longer than the log is wide (Textual's Log never wraps, and a beginner at
    80x24 should not scroll sideways to read an error); continuations are indented."""
    if width < 20:  # not laid out yet: write as they are
        return lines
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(
                textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False) or [""]
            )
    return out


class RunScreen(WizardScreen[None]):
    CAN_GO_BACK = False  # a launch in progress is stopped with Ctrl+Q, which tears down

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []
        self.offered_at: tuple[float, float | None] = (0.0, None)  # the last offer: when, left
        self.packages_asked = ""  # the packages the last Run again was given

    def on_mount(self) -> None:
        # Lines are written in batches: one Log update per 50 ms keeps keys answered however
        # chatty the worker is.
        self.set_interval(0.05, self.flush)
        self.show_attempt()

    def flush(self) -> None:
        if self.pending:
            lines, self.pending = self.pending[-LOG_LINES:], []
            log = self.query_one(Log)
            log.write_lines(wrap_lines(lines, log.scrollable_content_region.width))

    def show(self, event: ev.Event) -> None:
        lines = describe(event, "wizard")
        self.pending.extend(lines)
        if isinstance(event, ev.CheckpointsUnusable):
            # Said once, and it decides whether a preemption loses the run: not only in the log.
            self.notify(" ".join(lines), severity="warning", timeout=30)
        self.show_attempt()

    def compose_attempt(self) -> ComposeResult:
        """A spot run that resumes: the attempt under way, on its own line above the log."""
        yield Static(id="attempt")

    def show_attempt(self) -> None:
        """The attempt line from the launch's summary (it folds every event before we see
        it); hidden for a launch that does not resume after preemption."""
        handle = getattr(self.app, "handle", None)
        words = attempt_words(handle.summary) if handle is not None else None
        for line in self.query("#attempt").results(Static):
            line.update(words or "")
            line.display = words is not None

    def say(self, lines: list[str]) -> None:
        """Lines that are no event's (the preflight's, before the create)."""
        self.pending.extend(lines)

    def log_text(self) -> str:
        """What the log shows now, and what is about to be written to it (only the latter while
        the screen is still being put together)."""
        shown = [line for log in self.query(Log).results(Log) for line in log.lines]
        return "\n".join([*shown, *self.pending])


class ProvisionScreen(RunScreen):
    STEP = "6 Provision"
    HELP = (
        "The node is being created. It costs nothing until it is READY; from then the meter "
        "at the top runs until its deletion is verified. Ctrl+Q stops and deletes it."
    )

    def compose_body(self) -> ComposeResult:
        yield from self.compose_attempt()
        yield Static("Creating...", id="node-state")
        yield FollowLog(max_lines=LOG_LINES, id="log")

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1.0, self.tick)  # a slow create must not look frozen

    def checking(self) -> None:
        """Before the create: the preflight is reading what would refuse the TPU."""
        self.query_one("#node-state", Static).update(
            "Checking what would refuse the TPU before creating it (preflight)..."
        )

    def tick(self) -> None:
        """The state and its age, from the core's billing state and clock."""
        ours = host(self).billing.made_here()  # never a node kept earlier: it is not this one
        if ours:
            b = ours[0]
            spent = about(b.cost_usd(), b.cost_at_most_usd())
            cost = f", {spent} so far" if b.costing_since is not None else ""
            self.query_one("#node-state", Static).update(
                f"State: [b]{b.state}[/b], {b.name} exists for {int(b.age_s())} s{cost}"
            )

    def show(self, event: ev.Event) -> None:
        super().show(event)
        if isinstance(event, ev.Provisioning):
            self.query_one("#node-state", Static).update(
                f"State: [b]{event.state}[/b] after {event.elapsed_s:.0f} s"
            )
            self.tick()  # the core's own view, when it knows the resource


class VerifyScreen(RunScreen):
    STEP = "7 Verify"
    HELP = (
        "JAX is installed on the worker, then the verifier runs there. Each check ticks as "
        "it passes; a failure names the boundary that failed."
    )

    def compose_body(self) -> ComposeResult:
        yield from self.compose_attempt()
        with Horizontal(id="verify"):
            yield FollowLog(max_lines=LOG_LINES, id="log")
            yield ChecksPanel()
        yield Static(id="receipt")

    def show(self, event: ev.Event) -> None:
        if isinstance(event, ev.Check):
            self.query_one(ChecksPanel).record(event.name, event.ok, event.detail, event.boundary)
        elif isinstance(event, ev.ReceiptSaved):
            verdict = "proves the run" if event.ok else "does NOT prove the run"
            self.query_one("#receipt", Static).update(f"Receipt: {event.path} ({verdict})")
        super().show(event)


class ScriptScreen(RunScreen):
    STEP = "8 Your script"
    HELP = (
        "Your script runs on the TPU host; its output streams here and its files come back. "
        "When it ends, run it again on the same node (Edit and rerun opens your editor first) "
        "while time remains before the deadline, or open a Shell on worker 0 to look around "
        "(the wizard comes back when you exit it; the node {keeps} meanwhile); Tear down "
        "deletes the node. A spot run that resumes after preemption says above the log which "
        "attempt this is and where it resumed from; the meter counts every attempt."
    )

    def action_help(self) -> None:
        """The help, with what the node does meanwhile said as practice or real says it."""
        from tpuwizard.tui.screens.help import HelpScreen

        practice = host(self).state.practice
        text = self.HELP.format(keeps=keeps_billing(practice))
        self.app.push_screen(HelpScreen(self.STEP, text, self.CAN_GO_BACK))

    def compose_body(self) -> ComposeResult:
        yield from self.compose_attempt()
        yield FollowLog(max_lines=LOG_LINES, id="log")
        yield Static(id="script-verdict")

    def show(self, event: ev.Event) -> None:
        super().show(event)
        if isinstance(event, ev.ScriptDone):
            self.show_verdict(event)
        if isinstance(event, ev.ScriptDone) and event.can_rerun:
            self.offered_at = (time.monotonic(), event.seconds_left)  # said again after a shell
            # Mounted only when offered, so the screen is unchanged while the script runs;
            # Run again has the focus, so Enter runs it again and Tab goes along the choices.
            # A rerun's packages that did not install stay in the field, to be corrected; a
            # rerun refused as the TPU is held leaves the ones it was given.
            asked = " ".join(event.not_installed) or event.missing_package or ""
            if event.chip_held is not None:
                asked = self.packages_asked
            run_again = Button("Run again", id="run-again", variant="primary")
            # Beside them, after a refusal that going on can pass: Run anyway.
            held = event.chip_held
            anyway = [Button("Run anyway", id="run-anyway", variant="warning")]
            anyway = anyway if held is not None and held.going_on_passes else []
            mounting = self.query_one("#body").mount(
                Input(
                    value=asked,
                    placeholder="packages to add before the next run (none)",
                    id="rerun-packages",
                ),
                Horizontal(
                    run_again,
                    *anyway,
                    Button("Edit and rerun", id="edit-rerun"),
                    Button("Shell", id="open-shell", tooltip="A shell on worker 0; exit to return"),
                    Button("Tear down", id="end-runs", variant="error"),
                    id="rerun-choices",
                ),
            )
            self.call_later(self.focus_when_mounted, mounting, run_again)

    def show_verdict(self, event: ev.ScriptDone) -> None:
        """Why a failed run failed, above the choices, while the node is still there: not only
        on the Summary after teardown."""
        verdict = self.query_one("#script-verdict", Static)
        verdict.display = event.exit_code != 0 or bool(event.not_installed)
        if event.chip_held is not None:
            verdict.display = True
            verdict.update(f"[b]{escape(rerun_refused_verdict(event.chip_held))}[/b]")
            return
        if event.not_installed:
            verdict.update(not_installed_words(event))
            return
        if event.exit_code == 0:
            return
        said = f"[b]Your script exited with code {event.exit_code}.[/b]"
        if event.diagnosis is not None:
            said = f"[b]{escape(event.diagnosis.title)}.[/b] {escape(event.diagnosis.explanation)}"
        if event.missing_package and event.can_rerun:
            said += (
                f" {escape(event.missing_package)} is filled in below: Run again adds it to "
                "this node first, then runs your script."
            )
        verdict.update(said)

    async def focus_when_mounted(self, mounting: AwaitMount, button: Button) -> None:
        # This very button, once mounted: an earlier run's choices may still be on their way
        # out, and focusing a button not yet mounted does nothing.
        await mounting
        button.focus()

    @on(Button.Pressed, "#run-again, #run-anyway, #edit-rerun, #end-runs")
    async def rerun_chosen(self, event: Button.Pressed) -> None:
        handle = getattr(self.app, "handle", None)
        if handle is None or not self.query("#rerun-choices"):
            return  # a second press while the first one's choices leave
        packages = self.query_one("#rerun-packages", Input).value.strip()
        if event.button.id != "end-runs":
            try:  # checked before anything is asked of the node: a wrong one is said here
                handle.check_packages(packages)
            except BadInput as err:
                self.notify(refusal_text(err, "wizard"), severity="warning")
                return
        # Gone before the launch is asked: a rerun refused at once (a held TPU) offers its
        # choices under the same ids, and a mount beside ones still leaving mounts only some.
        await self.query_one("#rerun-choices", Horizontal).remove()
        await self.query_one("#rerun-packages", Input).remove()
        if event.button.id == "end-runs":
            handle.end_runs()
            return
        if event.button.id == "edit-rerun":
            self.edit_script(host(self).state.workload.script)
        added = f" (adding {packages} first)" if packages else ""
        anyway = event.button.id == "run-anyway"
        self.pending.append(
            RUN_ANYWAY_LINE if anyway else f"--- running your script again{added} ---"
        )
        self.packages_asked = packages  # the field's again, should this run be refused
        handle.run_again(packages, even_if_held=anyway)

    @on(Button.Pressed, "#open-shell")
    def open_shell(self) -> None:
        """A shell on worker 0 with the wizard suspended; the choices stay for when it ends."""
        import subprocess

        from tpuwizard.core.errors import BadInput

        handle = getattr(self.app, "handle", None)
        if handle is None:
            return
        try:
            argv, cwd, env = handle.shell_command(0)
        except BadInput as err:
            self.notify(str(err), severity="warning")
            return
        try:
            with self.app.suspend():
                keeps = keeps_billing(host(self).state.practice)
                print(f"A shell on worker 0; the TPU {keeps}. Type exit to come back.")
                code = subprocess.call(argv, cwd=cwd, env=env)
        except Exception as err:  # no terminal to hand over (a web terminal, a test)
            self.notify(f"Could not open a shell here ({err}).", severity="warning")
            return
        self.pending.append(f"--- the shell on worker 0 ended (exit {code}) ---")
        said_at, left = self.offered_at
        if left is not None:  # the minutes said before the shell are stale now
            left = max(0.0, left - (time.monotonic() - said_at))
        self.pending.append(rerun_offer(left))

    def edit_script(self, script: Path | None) -> None:
        """Open the script in the editor git would pick, with the wizard suspended (it resumes
        after)."""
        import os
        import shutil
        import subprocess

        if script is None:
            self.notify("There is no script file to edit; the script runs again as it is.")
            return
        editor = editor_argv(os.environ, shutil.which)
        if editor is None:
            self.notify(
                "No editor found ($VISUAL, $EDITOR, editor, nano or vi), so the script "
                f"runs again as it is. Next time, edit {script} in another terminal before "
                "Run again, or start the wizard as EDITOR=your-editor tpuwizard.",
                severity="warning",
                timeout=15,
            )
            return
        try:
            with self.app.suspend():
                subprocess.call([*editor, str(script)])
        except Exception as err:  # no terminal to hand over (a test, a web terminal)
            self.notify(f"Could not open the editor ({err}); edit the file, then Run again.")


# Git's order: the variables first, then Debian's `editor` alternative, then the usual ones.
FALLBACK_EDITORS = ("editor", "nano", "vi")


def editor_argv(environ: Mapping[str, str], which: Callable[[str], str | None]) -> list[str] | None:
    """The editor command to open a file with: $VISUAL, then $EDITOR (split as a shell would,
    so ``code --wait`` works), then the first of ``editor``, ``nano`` and ``vi`` on PATH."""
    import shlex

    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError:  # an unbalanced quote: take it as one program name
                return [value]
    for program in FALLBACK_EDITORS:
        found = which(program)
        if found:
            return [found]
    return None


def not_installed_words(event: ev.ScriptDone) -> str:
    """A rerun whose packages did not install: why, what it fixes, and that the script did not
    run, above the field that still holds the names."""
    asked = escape(" ".join(event.not_installed))
    said = f"[b]Run {event.run}: installing {asked} failed"
    d = event.diagnosis
    if d is not None:
        fix = next((step for step in next_steps(d, "wizard") if step.startswith("Fix:")), "")
        said += f": {escape(d.title)}.[/b] {escape(d.explanation)} {escape(fix)}"
    else:
        said += ".[/b] Your script did not run."
    return (
        f"{said.rstrip()} The names are below: correct them and Run again, or empty the field "
        "to run your script as it is."
    )


class TeardownScreen(RunScreen):
    STEP = "9 Teardown"
    HELP = (
        "The TPU is deleted, then listed to prove it is gone. Only then does the meter stop. "
        "The summary of the run follows."
    )

    def compose_body(self) -> ComposeResult:
        self.verdict_words = "Deleting and verifying..."
        self.listed: list[str] = []  # the zone's TPU list after the delete, as the course reads it
        yield Static(self.verdict_words, id="verdict")
        yield FollowLog(max_lines=LOG_LINES, id="log")

    def show(self, event: ev.Event) -> None:
        super().show(event)
        if isinstance(event, ev.TeardownVerified):
            figure = about(event.cost_usd, event.cost_at_most_usd)
            spent = (
                f"{PRACTICE_COST} it would have cost {figure} (estimate)"
                if event.practice
                else f"it cost {figure} (estimate)"
            )
            self.verdict_words = (
                f"[b]Nothing is billing.[/b] {event.name} is verified gone; {spent}."
            )
        elif isinstance(event, ev.TeardownFailed):
            claim = may_still_be_billing(event.practice) if event.seen else "may exist (never seen)"
            self.verdict_words = (
                f"[b]NOT verified gone: {event.name} {claim}.[/b] "
                "Run tpuwizard teardown --all, or delete it in the Cloud Console."
            )
        elif isinstance(event, ev.Kept):
            self.verdict_words = (
                f"[b]{event.name} is {still_running(event.practice)}[/b], as you asked."
            )
        elif isinstance(event, ev.ZoneListed):
            self.listed += [escape(line) for line in zone_listed_lines(event)]
        else:
            return
        # The verdict, then the list that proves it.
        self.query_one("#verdict", Static).update("\n".join([self.verdict_words, *self.listed]))


def phase_screen(event: ev.Event, current: Any, recovering: bool = False) -> Any:
    """The run screen for ``event``: ``current`` unless the event belongs to a later phase.

    ``recovering``: a spot run's node went away and the chain makes a new one (the launch's
    summary says so): its old node's teardown is not the launch's end, and the new attempt
    goes through Provision, Verify and the script again."""
    wanted: type | None = None
    if isinstance(event, ev.Preempted):
        wanted = ProvisionScreen
    elif isinstance(
        event,
        ev.SshReady | ev.BootstrapLine | ev.Versions | ev.VerifierLine | ev.Check | ev.ReceiptSaved,
    ):
        wanted = VerifyScreen
    elif isinstance(
        event,
        ev.ScriptLine
        | ev.ScriptDone
        | ev.FileFetched
        | ev.FileNotFetched
        | ev.NothingMatched
        | ev.Resumed,
    ):
        wanted = ScriptScreen
    elif isinstance(event, ev.TeardownFailed | ev.Kept | ev.Finished):
        wanted = TeardownScreen
    elif isinstance(event, ev.TeardownStarted | ev.TeardownVerified | ev.ZoneListed):
        wanted = None if recovering else TeardownScreen
    if wanted is None or isinstance(current, wanted):
        return current
    if wanted is VerifyScreen and isinstance(current, ScriptScreen):
        # Packages added by Run again (uv's lines, the versions after): the Script step's,
        # with its log and choices; a spot run's new attempt goes through Provision first.
        return current
    if isinstance(current, TeardownScreen):
        return current  # never leave the last phase once it is shown
    return wanted()
