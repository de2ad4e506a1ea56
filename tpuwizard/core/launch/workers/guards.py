"""What a run's options ask of the workers' guards (``--stall-timeout``, ``--join-timeout``,
``--heartbeat-timeout``), as typed: light, so a command can hold them before anything runs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunGuards:
    """None: the default (deadlines.py); a stall timeout of 0 turns the stall guard off."""

    stall_minutes: float | None = None
    join_timeout_s: int | None = None
    heartbeat_timeout_s: int | None = None

    @classmethod
    def of(
        cls, stall_minutes: float | None, join_s: int | None, heartbeat_s: int | None
    ) -> RunGuards:
        return cls(stall_minutes, join_s, heartbeat_s)
