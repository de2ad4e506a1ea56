"""What tpuwizard says of a kept node's held chip, found before a run (core/launch/workers/
held_chip.py): a process of an earlier run ended, another's named with what would end it, a run
refused or going on as asked. The chip's own words for a held TPU (tpu_errors.py) say the same:
only one process at a time may use a TPU."""

from __future__ import annotations

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.held_chip import ChipHeld, Holder

# How the commands ask to go on although the chip is held (the wizard's measure has no such
# choice: it says to measure from the command line).
GO_ON_FLAG = "give --even-if-held to run anyway"
GO_ON_MEASURE = (
    "measure from the command line with `tpuwizard fit --program ... --measure --node NAME "
    "--even-if-held`"
)
ONE_AT_A_TIME = "only one process at a time may use a TPU"


def _what(command: str) -> str:
    return f" ({command})" if command else ""


def holder_line(h: Holder) -> str:
    return f"  worker {h.worker}: process {h.pid}{_what(h.command)}"


def end_it_line(node: str, h: Holder) -> str:
    """The command that would end ``h``, typed by the user (tpuwizard ends only its own)."""
    return (
        f"  To end it: tpuwizard ssh --node {node} --worker {h.worker}, then kill {h.pid} "
        f"(sudo kill {h.pid} if it is another user's; kill -9 {h.pid} if it will not end)."
    )


def chip_held_lines(err: ChipHeld, go_on: str = GO_ON_FLAG) -> list[str]:
    """The refusal: who holds the chip, what would end it, how to go on anyway (``go_on``, the
    front end's way). Nothing was copied or started."""
    if err.unended:
        head = (
            f"{err.node}'s TPU is still held by a process an earlier run of tpuwizard's left "
            "there, which SIGTERM and SIGKILL did not end (a process stuck in the chip's driver "
            f"ends only with its VM): {ONE_AT_A_TIME}. Nothing was copied or started."
        )
        lines = [head, *(holder_line(h) for h in err.holders)]
        return [*lines, "  tpuwizard down, then tpuwizard up for a fresh node."]
    head = (
        f"{err.node}'s TPU is held by a process tpuwizard did not start, and {ONE_AT_A_TIME}: "
        "your script would fail to start JAX there. Nothing was copied or started."
    )
    lines = [head]
    for h in err.holders:
        lines += [holder_line(h), end_it_line(err.node, h)]
    lines.append(
        f"  Or {go_on} (your script may then fail to start JAX), or tpuwizard down "
        "and tpuwizard up for a fresh node."
    )
    return lines


def chip_event_lines(event: ev.Event) -> list[str] | None:
    """The held chip's events, as launch's are said; None for any other event."""
    match event:
        case ev.ChipHolderEnded():
            job = f" (its job {event.job})" if event.job else ""
            return [
                f"worker {event.worker}: ended process {event.pid}{_what(event.command)}, which "
                f"an earlier run of tpuwizard's on {event.node} left holding the TPU{job}: "
                f"SIGTERM, then SIGKILL after {event.grace_s:g} s."
            ]
        case ev.ChipHeldGoingOn():
            return [
                f"worker {event.worker}: process {event.pid}{_what(event.command)} holds the "
                f"TPU, and tpuwizard did not start it: going on as you asked; your script may "
                "fail to start JAX there."
            ]
        case ev.ChipNotChecked():
            return [
                f"worker {event.worker}: who holds the TPU could not be listed ({event.why}): "
                "going on unchecked there."
            ]
    return None
