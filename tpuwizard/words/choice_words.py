"""The core's choices (``core/choices.py``) in each front end's own words.

The CLI names its flag, the wizard the control on its screen (the labels its screens show), plain
mode its question. Commands for the user's shell (``gcloud ...``) are the same everywhere; where
only the command line offers a choice, the wizard and plain mode say so and quote the command.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from typing import Any, Literal

from tpuwizard.core.choices import Choice, Phrase
from tpuwizard.core.plan.routes import route_table
from tpuwizard.words.guard_text import STALL_TITLE
from tpuwizard.words.resume_text import RESUME_TITLE

Audience = Literal["cli", "wizard", "plain"]
AUDIENCES: tuple[Audience, ...] = ("cli", "wizard", "plain")


def _route_titles(values: str) -> list[str]:
    titles = {info.key: info.title for info in route_table()}
    return [f'"{titles.get(v, v)}"' for v in values.split(",")]


def choice_words(choice: Choice, audience: Audience) -> str:
    """How ``audience`` names ``choice``: a fragment that fits where the core's sentence puts it."""
    c, v = choice.control, choice.value
    if audience == "cli":
        return _cli(c, v)
    if c == "route":
        where = "on the Route step" if audience == "wizard" else "at the Route question"
        return f"{' or '.join(_route_titles(v))} {where}"
    if c == "failover" and v == "name":
        return "Trying other zones"
    if c == "failover":
        if audience == "wizard":
            return 'the summary\'s "Try <zone>" buttons start the same launch there'
        return "launch again and choose one of them at the Zone question"
    if c == "zone":
        if audience == "wizard":
            return "another row on the Zones step, which lists the zones your project can use"
        return "another answer at the Zone question, which lists the zones your project can use"
    if c == "name":
        return 'the "Name" field on Review' if audience == "wizard" else "the Name question"
    if c == "run_dir":
        return "the runs folder in the folder where you started tpuwizard"
    if c == "practice":
        if audience == "wizard":
            return 'switch "Practice mode" ON on the Account step'
        return "start plain mode in practice: `tpuwizard --plain --sandbox`"
    if c == "watchdog":
        if audience == "wizard":
            return 'switch "Watchdog" OFF on Review'
        return "answer no to the Watchdog question"
    if c == "service_account":
        return "only from the command line: `tpuwizard launch --service-account EMAIL`"
    if c == "transport" and v == "ssh":
        return "tpuwizard's own SSH (what the wizard and plain mode use)"
    if c == "transport":
        return "only from the command line: `tpuwizard launch --transport gcloud`"
    if c == "backend":
        return f"only from the command line: `tpuwizard launch --backend {v or 'tpu-api'}`"
    if c == "packages":
        if audience == "wizard":
            return f'type {v} in the "Packages" field on Review'
        # Plain mode asks for packages as Review does; a requirements.txt is the other way,
        # which the diagnosis names on its own line.
        return f'type {v} at the "Packages to add" question'
    if c == "script":
        if audience == "wizard":
            return 'the "Your script" field on Review'
        return "the question for your script"
    if c == "checkpoints":
        named = f"{v} in " if v else ""
        if audience == "wizard":
            return f'{named}the "{RESUME_TITLE}" field on Review'
        return f"{named}the {RESUME_TITLE} question"
    if c == "max_run" and not v:
        if audience == "wizard":
            return 'a number of minutes in the "Deadline (minutes)" field on Review'
        return "a number of minutes at the Deadline question"
    if c == "max_run":
        if audience == "wizard":
            return f'{v} or more in the "Deadline (minutes)" field on Review'
        return f"{v} or more at the Deadline question"
    if c == "external_ips" and v == "on":
        return "tpuwizard asked for them: check that the project's firewall lets SSH in"
    if c == "external_ips":
        return "only from the command line: `tpuwizard launch --internal-ips --transport gcloud`"
    if c == "stall_timeout":
        if audience == "wizard":
            return f'the "{STALL_TITLE}" minutes on Review (F4)'
        return f"the {STALL_TITLE} question"
    if c == "idle":  # only `up` keeps a node with an idle deadline
        if v == "off":
            return "leave the idle deadline out"
        return "An idle deadline (only `tpuwizard up --idle` sets one)"
    raise ValueError(f"no words for {choice}")  # pragma: no cover - CONTROLS are all above


def _cli(control: str, value: str) -> str:
    if control == "route":
        return " or ".join(f"--route {v}" for v in value.split(","))
    if control == "failover":
        return "--failover" if value == "name" else "--failover tries them in turn"
    if control == "zone":
        which = f" --accelerator {value}" if value else ""
        return f"--zone ZONE (tpuwizard zones --live{which} lists the zones your project can use)"
    flags = {
        "name": "--name NAME",
        "run_dir": "--run-dir",
        "practice": "tpuwizard --sandbox",
        "watchdog": "--no-watchdog",
        "service_account": "--service-account EMAIL",
        "script": "--script FILE",
    }
    if control == "backend":
        return f"--backend {value or 'tpu-api'}"
    if control == "packages":  # before the script's name: after it, words are the script's
        return f"--with {value or 'PACKAGE'}, before the script's name"
    if control == "checkpoints":
        return f"--checkpoints {value or 'DIR'}"
    if control == "max_run":
        return f"--max-run {value} or more" if value else "--max-run MINUTES"
    if control == "external_ips":
        return "without --internal-ips" if value == "on" else "--internal-ips --transport gcloud"
    if control == "transport":
        return f"--transport {value or 'gcloud'}"
    if control == "idle":
        return "leave --idle out" if value == "off" else "--idle"
    if control == "stall_timeout":
        return "--stall-timeout MINUTES"
    return flags[control]


def words(said: str | Phrase, audience: Audience) -> str:
    """What the core said, in ``audience``'s words."""
    if isinstance(said, Phrase):
        return said.worded([choice_words(c, audience) for c in said.choices])
    return said


def all_words(said: Iterable[str | Phrase], audience: Audience) -> list[str]:
    return [words(s, audience) for s in said]


def plain_data(value: Any, audience: Audience = "cli") -> Any:
    """``value`` (an event, a diagnosis) as JSON data, as ``dataclasses.asdict`` would make
    it, with every Phrase in ``audience``'s words: what ``--json`` prints, so its ``next_steps``
    stay strings."""
    if isinstance(value, Phrase):
        return words(value, audience)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_data(getattr(value, f.name), audience) for f in fields(value)}
    if isinstance(value, dict):
        return {k: plain_data(v, audience) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(v, audience) for v in value]
    return value
