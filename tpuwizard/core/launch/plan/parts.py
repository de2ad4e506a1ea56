"""The launch's parts: each a frozen, typed value declared once, which ``LaunchAnswers`` holds as
asked and ``LaunchPlan`` as decided, and whose rules live in a rule file of its own.

A new option of a part touches the part, its rule, its option group and its question, not every
place a launch's values pass through (issue 53). Parts import nothing of the plan, so every room
that reads one (the workers, the kept nodes, the front ends) can hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.ledger import Resource


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


@dataclass(frozen=True)
class Where:
    """Where and what the node is: its slice, the zone it is made in (with ``--zones`` the zones
    to try, in order, the zone first: serially with ``failover``, all at once with ``fan_out``),
    the route, the API that makes it (``backend``: ``AUTO`` only as asked, decided in the plan)
    and how Compute Engine is asked (``via``), the project ("" as asked: the session's) and the
    node's name (None: one made of the run id). zone_rules.py, backend_rules.py and
    via_rules.py say which are refused."""

    slice: Slice  # parsed once, where a front end read the name (or the ledger the record)
    zone: str = ""
    project: str = ""
    route: Route = Route.VM
    backend: Backend = Backend.AUTO
    name: str | None = None
    zones: tuple[str, ...] = ()
    failover: bool = False
    fan_out: bool = False
    via: Via = Via.AUTO

    def record(self) -> dict[str, Any]:
        """What a kept node's record holds of it beside its resource record, which holds the
        type, zone, project, route, backend, via and name already."""
        return {"zones": list(self.zones), "failover": self.failover, "fan_out": self.fan_out}

    @classmethod
    def from_record(cls, settings: dict[str, Any], made: Resource) -> Where:
        """The part back from a kept node's resource record and settings (one from before the
        settings were recorded: one zone, no failover). The name is left to the new run's."""
        return cls(
            made.slice,
            made.zone,
            made.project,
            Route(made.route),
            Backend(made.backend),  # as it was made: a replacement is made there too
            zones=tuple(settings.get("zones") or ()),
            failover=bool(settings.get("failover")),
            fan_out=bool(settings.get("fan_out")),
            via=Via(made.via),
        )
