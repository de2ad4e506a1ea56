"""The bounds of a deadline (and of a kept node's idle time), in minutes: one pair for the core's
plan check and for every front end's validation and help text."""

from __future__ import annotations

from enum import StrEnum

DEADLINE_MINUTES = (0.1, 7 * 24 * 60.0)  # a few seconds at least, 7 days at most
# How long a create waits for READY unless the user says otherwise (--ready-timeout), in
# seconds, on every route: written here only (the commands' help reads it, so it stays light).
READY_TIMEOUT_S = 1800.0


def deadline_bounds_text() -> str:
    """The bounds in words, for help texts and prompts: "0.1 to 10080"."""
    low, high = DEADLINE_MINUTES
    return f"{low:g} to {high:g}"


def deadline_problem(minutes: float | None, what: str = "deadline") -> str | None:
    """Why ``minutes`` cannot be a deadline (or an idle time); None when it can, or is unset."""
    low, high = DEADLINE_MINUTES
    if minutes is None or low <= minutes <= high:
        return None
    return (
        f"The {what} must be between {low:g} minutes and {high / 1440:g} days ({high:g} minutes)."
    )


def idle_deadline(
    kept_at: float,
    idle_s: float | None,
    last_heartbeat: float | None = None,
    max_deadline: float | None = None,
) -> float | None:
    """When a kept node's watchdog deletes it for want of heartbeats (epoch seconds).

    The idle time counts from the last heartbeat (or from when it was kept, before any), and the
    ``--max-run`` deadline comes first if it is earlier. None when no idle time was armed.
    """
    if idle_s is None:
        return None
    deadline = max(kept_at, last_heartbeat or 0.0) + idle_s
    return min(deadline, max_deadline) if max_deadline else deadline


# The join's timeouts the launcher (verify/tpu_launch.py) gives the script's
# jax.distributed.initialize() where it passes none (JAX's defaults are 300 s and 100 s): a cold
# multi-host start took longer than 300 s in marin-community/marin PR 7232 (raised to 1800 s), a
# first compile outlived 100 s of heartbeat in GoogleCloudPlatform/ml-auto-solutions PR 1166
# (set to 1200 s). --join-timeout and --heartbeat-timeout change them.
INIT_TIMEOUT_S = 1800
HEARTBEAT_TIMEOUT_S = 1200
# The stall guard's default (--stall-timeout) outlasts the join's registration timeout, so a slow
# join ends by JAX's own error, which says more, before the guard would.
STALL_TIMEOUT_MIN = INIT_TIMEOUT_S // 60 + 15


class EndedBy(StrEnum):
    """What ends a kept node without tpuwizard: the ledger's ``ended_by`` and the Kept event's
    (their words on disk and in ``--json``, unchanged: older ledgers are read with them)."""

    GOOGLE = "google"  # Flex-start's run duration, Compute Engine's max run duration
    WATCHDOG = "watchdog"  # armed on the VM
    NOTHING = "nothing"  # only a running tpuwizard, or `tpuwizard down`
