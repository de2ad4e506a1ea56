"""The launch's parts: each a frozen, typed value declared once, which ``LaunchAnswers`` holds as
asked and ``LaunchPlan`` as decided, and whose rules live in a rule file of its own.

A new option of a part touches the part, its rule, its option group and its question, not every
place a launch's values pass through (issue 53). Parts import nothing of the plan, so every room
that reads one (the workers, the kept nodes, the front ends) can hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpuwizard.core.cloud.backends import Transport


@dataclass(frozen=True)
class Guards:
    """The guards on a run's workers, as asked: the stall guard's minutes (a worker that printed
    nothing and used no CPU for that long ends the run; 0: no guard), and the timeouts the
    launcher gives ``jax.distributed.initialize()`` where the script passes none. None leaves
    each to its default (core/deadlines.py); guard_rules.py says which values are refused."""

    stall_minutes: float | None = None
    join_timeout_s: int | None = None
    heartbeat_timeout_s: int | None = None


@dataclass(frozen=True)
class Reach:
    """How the workers are reached and as whom the node runs: tpuwizard's own SSH or gcloud's
    (OS Login, IAP), external addresses or internal ones only, and the node's service account
    (the watchdog deletes with its token; None: the project's default compute account).
    reach_rules.py says which combinations no transport can reach."""

    transport: Transport = Transport.SSH
    internal_ips: bool = False
    service_account: str | None = None

    def record(self) -> dict[str, Any]:
        """What a kept node's record holds of it (``run --checkpoints`` remakes the node from
        the record alone); the transport is the login's, recorded with the login."""
        return {"internal_ips": self.internal_ips, "service_account": self.service_account}

    @classmethod
    def from_record(cls, settings: dict[str, Any], transport: Transport = Transport.SSH) -> Reach:
        """The part back from a kept record's settings (one from before they were recorded
        gives the defaults)."""
        account = settings.get("service_account")
        return cls(
            transport,
            bool(settings.get("internal_ips")),
            account if isinstance(account, str) else None,
        )


DEFAULT_CHECKPOINT_EVERY_S = 60.0
DEFAULT_MAX_RESTARTS = 3


@dataclass(frozen=True)
class Resume:
    """How a run comes back after Google preempts its spot TPU: the folder its script saves
    checkpoints in (relative to the script's folder on the worker; None: the run does not
    resume), how often they are copied home, how many times it starts again on a new TPU, the
    US dollars every attempt together may bill (None: --max-run alone bounds it), the earlier
    run whose latest complete set it starts from (its id), and Google's Autocheckpoint (None:
    on wherever the node can have it). resume_rules.py says which values are refused."""

    checkpoints: str | None = None
    checkpoint_every_s: float = DEFAULT_CHECKPOINT_EVERY_S
    max_restarts: int = DEFAULT_MAX_RESTARTS
    budget_usd: float | None = None
    from_run: str | None = None
    autocheckpoint: bool | None = None
