"""Next steps that are choices in tpuwizard itself, stated as facts and worded by each front end.

The core says *which* choice would help: the route, the watchdog, another zone, a name... Each
front end names it in its own words: the CLI its flag (``--route flex``), the wizard its control
("Flex-start, queued" on the Route step), plain mode its question. Those words live below the
front ends, in ``tpuwizard/words/choice_words.py``; the core never spells a flag for one.

A sentence that names choices is a :class:`Phrase`: its text holds ``{0}``, ``{1}``... where the
choices are named. Everything else stays a plain ``str``; :data:`Said` is either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The choices a remedy may name. ``value`` says which one (a route's key, "off", an accelerator).
CONTROLS = (
    "route",  # value: "vm", "spot", "flex" or several joined by "," (any of them)
    "failover",  # value "": try the other zones; "name": the option itself, as a noun
    "zone",  # value: the accelerator, so the words can say where to look
    "name",  # another name for the node
    "run_dir",  # where run folders go
    "practice",  # practise against the local sandbox
    "transport",  # value "gcloud": gcloud's SSH (OS Login, IAP); "ssh": tpuwizard's own SSH
    "external_ips",  # value "on": ask for external addresses; "off": internal ones through IAP
    "watchdog",  # value "off": go on without the watchdog
    "service_account",  # name another account for the node
    "backend",  # value: "tpu-api" or "compute", the API that creates the TPU
    "packages",  # value: a package to add to the worker venv
    "script",  # the user's script, run after the verifier
    "checkpoints",  # value: a folder the script saves checkpoints in (resume after preemption)
    "max_run",  # value: minutes, the deadline ("": any)
    "idle",  # value "": a kept node's idle deadline, as a noun; "off": leave it out
    "stall_timeout",  # value "": the stall guard's minutes (0 turns it off)
)


@dataclass(frozen=True)
class Choice:
    """A choice the user can make in tpuwizard: which control, and which value of it."""

    control: str
    value: str = ""

    def __post_init__(self) -> None:
        if self.control not in CONTROLS:
            raise ValueError(f"unknown control {self.control!r}")


@dataclass(frozen=True)
class Phrase:
    """A sentence naming choices: ``text`` has ``{0}``, ``{1}``... where each is named."""

    text: str
    choices: tuple[Choice, ...]

    def __post_init__(self) -> None:
        for i in range(len(self.choices)):
            if f"{{{i}}}" not in self.text:
                raise ValueError(f"{self.text!r} does not name choice {i}")

    def worded(self, words: list[str]) -> str:
        """The sentence with each choice replaced by its words (one per choice, in order)."""
        text = self.text
        for i, word in enumerate(words):
            text = text.replace(f"{{{i}}}", word)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "choices": [{"control": c.control, "value": c.value} for c in self.choices],
        }


Said = str | Phrase  # what the core says to a user: plain words, or words naming choices


def phrase(text: str, *choices: Choice) -> Phrase:
    return Phrase(text, choices)
