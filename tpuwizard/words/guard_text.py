"""The words of the stall guard's and Autocheckpoint's choices in the wizard and plain mode (the
CLI's are its options' help): their titles, plain mode's questions, Review's line and dialog."""

from __future__ import annotations

STALL_TITLE = "Stall guard"
AUTOCHECKPOINT_TITLE = "Autocheckpoint"
STALL_HELP = (
    f"{STALL_TITLE}: a worker silent (nothing printed, no CPU time) for this many minutes ends "
    "the run, in the verifier or your script: each worker's last lines and stack are shown, "
    "then the node is deleted. 0: off. A script quiet on purpose for longer (a long first "
    "compile) looks hung: give it more."
)
AUTOCHECKPOINT_HELP = (
    f"{AUTOCHECKPOINT_TITLE} (Google's, Preview): before a maintenance event your script gets "
    "SIGTERM and up to 5 minutes to save into its checkpoints folder "
    "(docs/guides/spot-resume.md shows the handler)."
)


def minutes_words(minutes: float) -> str:
    return "off" if minutes <= 0 else f"{minutes:g} min"


def stall_question(default: float) -> str:
    """Plain mode's question (the wizard's dialog has the title and the help)."""
    return (
        f"{STALL_TITLE}: minutes a worker may print nothing and use no CPU before the run is "
        f"ended (0: never; default {default:g})"
    )


def autocheckpoint_question() -> str:
    return (
        f"{AUTOCHECKPOINT_TITLE}: Google sends your script SIGTERM and up to 5 minutes to save "
        "before a maintenance event. Turn it on?"
    )


def guards_line(stall_minutes: float, autocheckpoint: bool | None) -> str:
    """Review's line: the stall guard's minutes and, where the node can have it (``None``: it
    cannot), Autocheckpoint on or off; F4 changes them."""
    said = f"{STALL_TITLE} {minutes_words(stall_minutes)}"
    if autocheckpoint is not None:
        said += f", {AUTOCHECKPOINT_TITLE} {'ON' if autocheckpoint else 'OFF'}"
    return f"{said}; F4: change."
