"""Keep it running, said truthfully: a node is kept once its watchdog is armed, or the user
chooses to keep it without one (then only a teardown ends it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.cancel import KEEP_PENDING, KEEP_UNSAFE

if TYPE_CHECKING:
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.session.launch_handle import LaunchHandle
    from tpuwizard.tui.host import WizardHost


def keep_launch(app: WizardHost, handle: LaunchHandle, name: str, leaving: int) -> None:
    """Ask the launch to keep its node; say when that waits for the watchdog, ask when it
    cannot have one. The launch's Finished then ends the wizard (exit code ``leaving``), as for
    any Keep."""
    safety = handle.keep(leaving)
    if safety == KEEP_PENDING:
        app.notify(
            f"Keeping {name} once its watchdog is armed (usually within a few minutes). "
            "Until then a stop or a failure deletes it.",
            timeout=30,
        )
    elif safety == KEEP_UNSAFE:
        ask_keep_without_watchdog(app, handle, name, leaving)


def ask_keep_without_watchdog(
    app: WizardHost, handle: LaunchHandle, name: str, leaving: int
) -> None:
    """The watchdog could not be armed: Delete now (the safe answer, Esc too) or keep anyway."""
    from tpuwizard.tui.screens.confirm import ConfirmScreen

    def answered(keep: bool | None) -> None:
        if keep:
            handle.keep_without_watchdog()
        else:
            handle.delete_now("no watchdog to keep it with", leaving)

    question = (
        f"{name} cannot be kept as promised: its watchdog could not be armed, so nothing "
        "would delete it at its deadline if this laptop sleeps."
    )
    app.push_screen(
        ConfirmScreen(
            question, "Keep without a watchdog (only `tpuwizard down` ends it)", "Delete now"
        ),
        answered,
    )


def while_leaving(app: WizardHost, handle: LaunchHandle, event: ev.Event, leaving: int) -> None:
    """An event after a way out was chosen: only a Keep that lost its watchdog needs the user."""
    from tpuwizard.core.launch.events import launch_events as ev

    if isinstance(event, ev.KeepNeedsAnswer):
        ask_keep_without_watchdog(app, handle, event.name, leaving)
