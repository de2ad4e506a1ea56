"""The Colab route's events in words (event_text.describe hands them here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.launch.events.colab import (
    COLAB_FREE_TPU,
    ColabAccount,
    ColabAssignmentsAfter,
    ColabPlanned,
    ColabSessionReady,
    ColabSessionStopped,
    cloud_type,
)
from tpuwizard.words.held_record_text import held_record_words
from tpuwizard.words.sent_text import folder_lines

if TYPE_CHECKING:
    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

ColabEvent = (
    ColabPlanned | ColabSessionReady | ColabSessionStopped | ColabAccount | ColabAssignmentsAfter
)
FAQ = "https://research.google.com/colaboratory/faq.html"
# Said before every run on Colab (with colab_account, before `colab new`): tpuwizard's runs are
# headless (no notebook open), and the FAQ says how Colab treats such use; its words, briefly.
POLICY_LINES = [
    f"Colab's policy (its FAQ, {FAQ}): Colab \"prioritizes users who are actively programming "
    'in a notebook"; its "resources are not guaranteed and not unlimited, and usage limits '
    'sometimes fluctuate"; a runtime running free of charge (no positive compute unit balance) '
    'doing an activity the FAQ lists "may be terminated at any time without warning", and a '
    "free runtime lasts 12 hours at most. A run from tpuwizard has no notebook open: read the "
    "FAQ's list before a long headless run.",
]


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
    @property
    def unrecorded(self) -> tuple[LedgerRecordHeld, ...]: ...


def colab_chip(label: str, with_label: bool = False) -> str:
    """Colab's chip named as every route names a chip, by its accelerator type ("TPU
    v5litepod-1"); ``with_label``: Colab's own label beside it, the once the route says it."""
    kind = cloud_type(label)
    if kind is None:  # a label tpuwizard does not know: Colab's own word is all there is
        return f"TPU {label}"
    return f"TPU {kind} (Colab's {label})" if with_label else f"TPU {kind}"


def ready_hardware(hardware: str, asked: str) -> str:
    """What ``colab sessions`` listed of a ready session's hardware: the chip's one name when it
    is the chip asked for, else Colab's word for what it gave."""
    if not hardware:
        return ""
    if cloud_type(hardware) is not None and cloud_type(hardware) == cloud_type(asked):
        return f" ({colab_chip(hardware)})"
    return f" (colab sessions lists its hardware as {hardware}, not the {asked} asked for)"


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
                f"{where} the session {event.session} with a {colab_chip(event.tpu, True)}; "
                f"your script's limit {event.max_run_minutes:g} min; receipt expected on "
                f"{event.expect}. Run {event.run_id}.",
                *folder_lines(event.folder, "to the Colab runtime"),
            ]
        case ColabSessionReady():
            hardware = ready_hardware(event.hardware, COLAB_FREE_TPU)
            return [
                f"Session {event.session} is ready{hardware}: uploading your script's folder, "
                "then the verifier, then your script. It is stopped at the end, whatever happens."
            ]
        case ColabAccount():
            return account_lines(event)
        case ColabAssignmentsAfter():
            if event.after is None:
                return [f"colab usage could not be read after the run: {event.problem}."]
            change = (
                "the same as before"
                if event.after == event.before
                else f"{event.before} before the run"
            )
            return [
                f"colab usage: {event.after} active assignment(s) on your account after the "
                f"run, {change}. That counts every session of the account (a notebook open in "
                "a browser too); colab sessions not listing this run's session is the check."
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
    """``status``: one session of the Colab ledger, as the colab CLI listed it, and any record
    of it this look could not write."""
    return [*_seen_lines(seen), *map(held_record_words, seen.unrecorded)]


def _seen_lines(seen: ColabSeenLike) -> list[str]:
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
        case "read-only-home":
            return [
                f"{practice}Colab session {seen.session} could not be checked: "
                + _read_only_stand_in(seen)
            ]
    return [f"{practice}Colab session {seen.session} could not be checked: {seen.detail}."]


def _read_only_stand_in(seen: ColabSeenLike) -> str:
    """The practice stand-in's state is in a read-only TPUWIZARD_HOME (``detail``: where)."""
    return (
        f"the practice Colab stand-in keeps it in {seen.detail}, and TPUWIZARD_HOME is "
        "read-only, so the stand-in can neither list nor stop it from there (it may still run; "
        "practice bills nothing). Once the home is writable again, "
        f"`tpuwizard teardown {seen.session} --sandbox` stops it."
    )


def torn_lines(seen: ColabSeenLike) -> list[str]:
    """``teardown``: what became of one session, and any record of it the disk refused."""
    return [*_torn_lines(seen), *map(held_record_words, seen.unrecorded)]


def _torn_lines(seen: ColabSeenLike) -> list[str]:
    if seen.state == "launch-running":
        return [f"{seen.session}: its launch still runs and stops it itself; not touched."]
    if seen.stopped:
        return [f"Stopped {seen.session}: colab sessions no longer lists it."]
    if seen.state == "read-only-home":
        return [f"{seen.session} was NOT stopped: " + _read_only_stand_in(seen)]
    why = seen.detail or "colab sessions still lists it"
    return [f"{seen.session} was NOT verified stopped: {why}."]


# The wizard's Notebook step, where Packages were typed for Colab (issue 55.11).
NO_PACKAGES = (
    "Colab's CLI installs no packages (the runtime keeps its own): clear Packages, or run it on "
    "Kaggle, which installs them at the kernel's start."
)


def practice_line(why: str) -> str:
    """Why a Colab run is practice, and (without the program) how to make it real."""
    line = f"[practice] Using the local Colab stand-in because {why}: nothing reaches Colab."
    if "not installed" in why:
        line += (
            " For Colab's own TPU, pip install google-colab-cli (Python 3.12 or newer), sign in "
            "once, and run this again."
        )
    return line


def account_lines(event: ColabAccount) -> list[str]:
    """The colab CLI's version, what it lacks, and the account's balance and rate."""
    version = f"colab CLI {event.version}" if event.version else "The colab CLI (no version said)"
    if event.practice:  # no colab program here: the stand-in's version is no fact of this computer
        version = f"The practice stand-in of {version}"
    lines = list(POLICY_LINES)  # before anything is asked of Colab
    if event.lacks and event.practice:
        lines.append(
            f"{version} (PyPI's) has no usage command, so no compute units are shown here; with "
            "google-colab-cli 0.8.0 a real run shows your account's."
        )
    elif event.lacks:
        lacks = ", ".join(event.lacks)
        lines.append(
            f"{version} lacks {lacks} (google-colab-cli 0.8.0 has it): the account's compute "
            "units and active assignments are not shown; colab sessions is the check."
        )
    elif event.usage_problem:
        lines.append(f"{version}: colab usage failed: {event.usage_problem}.")
    if event.balance is not None and event.rate_hourly is not None:
        lines.append(
            f"{version}: {'the practice' if event.practice else 'your Colab'} account has "
            f"{event.balance:.2f} compute units, spending "
            f"{event.rate_hourly:.2f}/hr now, with {event.assignments} active assignment(s) "
            "(every session of the account) before this run."
        )
    return lines
