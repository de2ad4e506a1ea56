"""The base of every lifecycle event (events/launch_events.py): its JSON name and its dict."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    @classmethod
    def event_name(cls) -> str:
        """``ReceiptSaved`` -> ``receipt_saved``: the ``"event"`` key of the JSON line."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event_name(), **asdict(self)}
