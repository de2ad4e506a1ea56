"""The words of a spot run that resumes after preemption (``--checkpoints``), shared by the
wizard, plain mode and the CLI: the option's name and help, the attempt under way, each
attempt in the summary, and the chain's events."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import AttemptRecord, RunSummary

RESUME_TITLE = "Resume after preemption"
RESUME_PLACEHOLDER = "checkpoints folder"
RESUME_HELP = (
    f"{RESUME_TITLE} (spot only): the folder inside your script's folder that it saves "
    "checkpoints in, as the script sees it (checkpoints, say). While the script runs, the "
    "complete checkpoints in it come home to the run folder's checkpoints/; when Google "
    "preempts the TPU, it is verified gone, a new one is made, the latest checkpoint is put "
    "back and the script starts again with TPUWIZARD_RESUME=1 (examples/resumable_train.py "
    "shows the loop). Left empty, a preempted run just ends."
)


def resume_question() -> str:
    """Plain mode's question for the option (the wizard's field has the title and the help)."""
    return (
        f"{RESUME_TITLE}: the folder your script saves checkpoints in, inside its folder "
        "(e.g. checkpoints; empty for none)"
    )


def field_words(folder: str, every_s: float, restarts: int) -> str:
    """Under the wizard's field, in a few words (it is 80 columns' third): how often the
    checkpoints come home and how many times a preempted run starts again."""
    if not folder.strip():
        return "off"
    every = f"{every_s:g}s" if every_s < 60 else f"{every_s / 60:g}m"
    return f"every {every}; {restarts} restart{'' if restarts == 1 else 's'}"


def _step_words(name: str | None, step: int | None) -> str:
    return f"step {step}" if step is not None else str(name)


def attempt_words(summary: RunSummary) -> str | None:
    """The attempt under way, in a line: "Attempt 2 of 4, resumed from step 1200."; None for
    a launch that does not resume after preemption."""
    now, most = summary.attempt, summary.attempts_at_most
    if now is None or most is None:
        return None
    head = f"Attempt {now.number} of {most}"
    if now.number > 1:
        set_words = _step_words(now.resume_from, now.resumed_step)
        if now.resume_from is None:
            head += ", from the start (no checkpoint had come home)"
        elif now.resumed:
            head += f", resumed from {set_words}"
        else:
            head += f", to resume from {set_words}"
    if now.ended in ("preempted", "gone"):
        return f"{head}: the TPU {_ended_words(now.ended)}."
    if now.ended == "sigterm":
        return f"{head}: the script got SIGTERM."
    if now.last_home is not None:
        return f"{head}. Last checkpoint home: {_step_words(now.last_home, now.last_home_step)}."
    return f"{head}. No checkpoint has come home yet."


def _ended_words(ended: str) -> str:
    return {"preempted": "was preempted", "gone": "is gone"}.get(ended, ended)


def attempt_lines(summary: RunSummary) -> list[str]:
    """The summary's lines for the chain: how many attempts, and each one's zone, start and
    end; none for a launch that does not resume."""
    if summary.attempts_at_most is None or not summary.attempts:
        return []
    lines = [f"  Attempts: {len(summary.attempts)} of at most {summary.attempts_at_most}"]
    lines += [f"    {_attempt_line(a)}" for a in summary.attempts]
    return lines


def _attempt_line(a: AttemptRecord) -> str:
    parts: list[str] = []
    if a.number > 1:
        parts.append(
            f"resumed from {_step_words(a.resume_from, a.resumed_step)}"
            if a.resume_from is not None
            else "from the start"
        )
    if a.last_home is not None:
        parts.append(f"last checkpoint home {_step_words(a.last_home, a.last_home_step)}")
    words = {"preempted": "preempted", "gone": "its TPU was gone", "sigterm": "got SIGTERM"}
    parts.append(words.get(a.ended or "", a.ended or "did not end"))
    return f"{a.number} in {a.zone}: " + ", ".join(parts)


def unusable_words(folder: str, files: int) -> str:
    """A checkpoints folder with files but no set that can come home, and what to write."""
    shown = folder.rstrip("/") + "/"
    return (
        f"{shown} holds {files} file(s) but no complete set: write COMMITTED last (in the "
        "folder, or in a folder per step), or use step folders (step_100/, orbax's 100/). "
        "Until then nothing comes home and a preempted run starts from the start."
    )


def restless_words(folder: str, files: int, passes: int, every_s: float) -> str:
    """Files with no marker that never held still from one copy pass to the next."""
    shown = folder.rstrip("/") + "/"
    every = f"{every_s:g}s" if every_s < 60 else f"{every_s / 60:g}m"
    return (
        f"{shown} holds {files} file(s) with no COMMITTED marker that changed between each of "
        f"the last {passes} copy passes (one every {every}), so none of those versions came "
        "home: write COMMITTED last, use step folders, or save less often than that."
    )


def chain_event_lines(event: ev.Event) -> list[str]:
    """What to print for one of the chain's events (describe() hands them here)."""
    from tpuwizard.core.launch.events import launch_events as ev

    match event:
        case ev.CheckpointCopied():
            how = "assumed complete: no COMMITTED marker" if event.assumed else "whole"
            return [f"  Checkpoint {event.name} came home {how} ({event.files} file(s))."]
        case ev.CheckpointsUnusable() if event.restless_passes:
            return [restless_words(event.folder, event.files, event.restless_passes, event.every_s)]
        case ev.CheckpointsUnusable():
            return [unusable_words(event.folder, event.files)]
        case ev.Preempted():
            how = "was preempted by Google" if event.state == "PREEMPTED" else "is gone"
            return [f"{event.name} {how} during attempt {event.attempt}."]
        case ev.Recreating():
            start = f"resuming from {event.resume_from}" if event.resume_from else "from the start"
            return [
                f"Verified gone. Making a new TPU in {event.zone}: attempt {event.attempt} of "
                f"{event.attempts_at_most}, {start}."
            ]
        case ev.RunningAgain():
            start = f"resuming from {event.resume_from}" if event.resume_from else "from the start"
            on = ", ".join(str(w) for w in event.workers)
            return [
                f"Your script got SIGTERM on worker {on} before it finished, and {event.name} is "
                f"still READY: attempt {event.attempt} of {event.attempts_at_most} runs it there "
                f"again, {start}."
            ]
        case ev.Resumed():
            at = f"from {event.checkpoint}" if event.checkpoint else "from the start"
            return [f"Attempt {event.attempt}: the script starts again {at} (TPUWIZARD_RESUME=1)."]
    return []
