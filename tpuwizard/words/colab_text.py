"""The Colab route's events in words (event_text.describe hands them here)."""

from __future__ import annotations

from typing import Protocol

from tpuwizard.core.launch.events.colab import (
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
)
from tpuwizard.words.sent_text import folder_lines

ColabEvent = ColabPlanned | ColabSessionReady | ColabSessionStopped


class ColabSeenLike(Protocol):
    """What status and teardown found of a session (session/free/colab_records.py's ColabSeen)."""

    @property
    def session(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def practice(self) -> bool: ...
    @property
    def state(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def stopped(self) -> bool | None: ...


def colab_lines(event: ColabEvent) -> list[str]:
    match event:
        case ColabPlanned():
            if event.practice:
                where = "[practice] Asking the Colab stand-in (on this computer) for"
            else:
                where = "Asking Colab (through Google's colab CLI) for"
            why = (
                [practice_line(event.practice_why)] if event.practice and event.practice_why else []
            )
            return [
                *why,
                f"{where} the session {event.session} with a TPU {event.tpu}; your script's limit "
                f"{event.max_run_minutes:g} min; receipt expected on {event.expect}. "
                f"Run {event.run_id}.",
                *folder_lines(event.folder, "to the Colab runtime"),
            ]
        case ColabSessionReady():
            hardware = f" ({event.hardware})" if event.hardware else ""
            return [
                f"Session {event.session} is ready{hardware}: uploading your script's folder, "
                "then the verifier, then your script. It is stopped at the end, whatever happens."
            ]
        case ColabSessionStopped():
            if event.verified:
                return [f"Stopped {event.session}: colab sessions no longer lists it."]
            return [
                f"{event.session} was NOT verified stopped: {event.detail}. It spends your Colab "
                f"usage until it stops: `tpuwizard teardown {event.session}` tries again."
            ]
    return []


def held_lines(seen: ColabSeenLike) -> list[str]:
    """``status``: one session of the Colab ledger, as the colab CLI listed it."""
    flag = " --sandbox" if seen.practice else ""
    practice = "[practice] " if seen.practice else ""
    match seen.state:
        case "running":
            return [
                f"{practice}Colab session {seen.session} is still running (run {seen.run_id}): "
                f"`tpuwizard teardown {seen.session}{flag}` stops it."
            ]
        case "launch-running":
            return [
                f"{practice}Colab session {seen.session}: its launch still runs and stops it "
                "at its end."
            ]
        case "gone":
            return [f"{practice}Colab session {seen.session}: gone (colab no longer lists it)."]
    return [f"{practice}Colab session {seen.session} could not be checked: {seen.detail}."]


def torn_lines(seen: ColabSeenLike) -> list[str]:
    """``teardown``: what became of one session."""
    if seen.state == "launch-running":
        return [f"{seen.session}: its launch still runs and stops it itself; not touched."]
    if seen.stopped:
        return [f"Stopped {seen.session}: colab sessions no longer lists it."]
    why = seen.detail or "colab sessions still lists it"
    return [f"{seen.session} was NOT verified stopped: {why}."]


def practice_line(why: str) -> str:
    """Why a Colab run is practice, and (without the program) how to make it real."""
    line = f"[practice] Using the local Colab stand-in because {why}: nothing reaches Colab."
    if "not installed" in why:
        line += (
            " For Colab's own TPU, pip install google-colab-cli (Python 3.12 or newer), sign in "
            "once, and run this again."
        )
    return line
