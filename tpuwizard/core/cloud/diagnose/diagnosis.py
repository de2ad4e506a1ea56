"""A Diagnosis (what went wrong, in plain words, and what to do) and the Context it is about."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tpuwizard.core.choices import Said

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice


@dataclass(frozen=True)
class Diagnosis:
    kind: str  # "stockout", "quota", "permission", "api_disabled", ...
    title: str
    explanation: str
    # Plain words, or a Phrase naming a choice (each front end words it: words/choice_words.py).
    next_steps: list[Said] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)  # zones to try, for a stockout

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "title": self.title,
            "explanation": self.explanation,
            "next_steps": list(self.next_steps),
            "alternatives": self.alternatives,
        }


@dataclass(frozen=True)
class Context:
    """What the failing call was about, so the diagnosis can be specific."""

    project: str | None = None
    zone: str | None = None
    accelerator: str | None = None
    account: str | None = None
    name: str | None = None
    route: str | None = None  # vm, spot or flex
    backend: str | None = None  # tpu-api or compute (None: not known; the TPU API's words)
    # ``accelerator`` parsed, where whoever made the context holds it (a plan's, a record's):
    # what the rules read; ``accelerator`` is what the words say.
    slice: Slice | None = None
