"""What tpuwizard says of a kept node's held chip, found before a run (core/launch/workers/
held_chip.py), and before the wizard's Run again: a process of an earlier run ended, another's
named with what would end it, a run refused or going on as asked. The chip's own words for a
held TPU (tpu_errors.py) say the same: only one process at a time may use a TPU."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.held_chip import ChipHeld, Holder

# A holder as a refusal names it: held_chip.Holder (the commands'), or ev.ChipHolding (a rerun's).
Held = ev.ChipHolding | Holder

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


def holder_line(h: Held) -> str:
    return f"  worker {h.worker}: process {h.pid}{_what(h.command)}"


def end_it_line(node: str, h: Held) -> str:
    """The command that would end ``h``, typed by the user (tpuwizard ends only its own)."""
    return (
        f"  To end it: tpuwizard ssh --node {node} --worker {h.worker}, then kill {h.pid} "
        f"{_harder(h.pid)}."
    )


def _harder(pid: int) -> str:
    return f"(sudo kill {pid} if it is another user's; kill -9 {pid} if it will not end)"


def chip_held_lines(err: ChipHeld, go_on: str = GO_ON_FLAG) -> list[str]:
    """The refusal: who holds the chip, what would end it, how to go on anyway (``go_on``, the
    front end's way). Nothing was copied or started."""
    return _refusal_lines(
        err.node,
        err.holders,
        err.unended,
        lambda h: end_it_line(err.node, h),
        go_on,
        ("tpuwizard down, then tpuwizard up", "tpuwizard down and tpuwizard up"),
    )


def _refusal_lines(
    node: str,
    holders: Sequence[Held],
    unended: bool,
    end_it: Callable[[Held], str],
    go_on: str,
    fresh: tuple[str, str],
) -> list[str]:
    """The refusal's lines; ``fresh``: how this front end gets a fresh node (after an unended
    holder, and beside going on)."""
    if unended:
        head = (
            f"{node}'s TPU is still held by a process an earlier run of tpuwizard's left "
            "there, which SIGTERM and SIGKILL did not end (a process stuck in the chip's driver "
            f"ends only with its VM): {ONE_AT_A_TIME}. Nothing was copied or started."
        )
        lines = [head, *(holder_line(h) for h in holders)]
        return [*lines, f"  {fresh[0]} for a fresh node."]
    head = (
        f"{node}'s TPU is held by a process tpuwizard did not start, and {ONE_AT_A_TIME}: "
        "your script would fail to start JAX there. Nothing was copied or started."
    )
    lines = [head]
    for h in holders:
        lines += [holder_line(h), end_it(h)]
    lines.append(
        f"  Or {go_on} (your script may then fail to start JAX), or {fresh[1]} for a fresh node."
    )
    return lines


def rerun_refused_lines(refusal: ev.ChipHeldRefusal) -> list[str]:
    """The wizard's Run again, refused before anything was touched: as the commands' refusal,
    with the wizard's ways (its Shell opens worker 0; Run anyway; Tear down)."""
    return _refusal_lines(
        refusal.node,
        refusal.holders,
        refusal.unended,
        _end_it_from_the_wizard,
        "press Run anyway",
        ("Tear down, then launch again", "Tear down and launch again"),
    )


def _end_it_from_the_wizard(h: Held) -> str:
    if h.worker == 0:
        return f"  To end it: press Shell (worker 0), then kill {h.pid} {_harder(h.pid)}."
    return (
        f"  It is on worker {h.worker}, which the wizard's Shell does not open (it opens worker 0)."
    )


def rerun_refused_verdict(refusal: ev.ChipHeldRefusal) -> str:
    """Above the choices, in short: why the script did not run, and what each choice does."""
    if refusal.unended:
        return (
            f"Your script did not run: {refusal.node}'s TPU is still held by a process an "
            "earlier run left, which SIGKILL did not end. Tear down, then launch again."
        )
    held = " and ".join(f"process {h.pid} on worker {h.worker}" for h in refusal.holders)
    holds, it = ("holds", "it") if len(refusal.holders) == 1 else ("hold", "them")
    return (
        f"Your script did not run: {held} {holds} the TPU, and tpuwizard did not start {it} "
        f"({ONE_AT_A_TIME}). End {it} (the log says how), then Run again; or Run anyway (your "
        "script may fail to start JAX); or Tear down."
    )


RUN_ANYWAY_LINE = "--- running your script again, though the TPU is held (Run anyway) ---"


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
