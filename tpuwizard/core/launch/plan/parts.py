"""The launch's parts: each a frozen, typed value declared once, which ``LaunchAnswers`` holds as
asked and ``LaunchPlan`` as decided, and whose rules live in a rule file of its own.

A new option of a part touches the part, its rule, its option group and its question, not every
place a launch's values pass through (issue 53). Parts import nothing of the plan, so every room
that reads one (the workers, the kept nodes, the front ends) can hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    # Read where a record is: the wizard holds parts from its first frame, which the
    # requirement parser's imports would slow down.
    from tpuwizard.core.launch.plan.packages import PackageSpec
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
class Workload:
    """What runs on the workers: the script (None: the verifier alone) and its own arguments,
    the files it writes that come home (globs relative to its folder), the packages added to
    the worker venv, the worker's JAX (a version of core/plan/jax_versions.py's table; None:
    its default), and the verifier's extras: the fp32/bf16/int8 precision profile and a
    jax.profiler trace from every worker. workload_rules.py says which are refused."""

    script: Path | None = None
    script_args: tuple[str, ...] = ()
    fetch: tuple[str, ...] = ()
    packages: tuple[PackageSpec, ...] = ()
    jax: str | None = None
    precision: bool = False
    trace: bool = False

    def record(self) -> dict[str, Any]:
        """What a kept node's record holds of it: the node's venv (its packages and JAX), which
        a replacement node is made with; the script and its files are each run's own."""
        return {"packages": [[p.text, p.origin] for p in self.packages], "jax": self.jax}

    @classmethod
    def from_record(cls, settings: dict[str, Any]) -> Workload:
        """The node's venv back from a kept record's settings (one from before they were
        recorded gives the defaults)."""
        from tpuwizard.core.launch.plan.packages import PackageSpec

        packages = settings.get("packages") or ()
        jax = settings.get("jax")
        return cls(
            packages=tuple(PackageSpec(text, origin) for text, origin in packages),
            jax=jax if isinstance(jax, str) else None,
        )


# The minutes a node may run where no --max-run is asked, on the routes that make a node.
DEFAULT_MAX_RUN: dict[str, float] = {Route.VM: 120, Route.SPOT: 120, Route.FLEX: 240}


@dataclass(frozen=True)
class Deadline:
    """When and how the node ends: its deadline (``max_run_minutes``; None: the route's), the
    on-VM watchdog that deletes it then (as asked, None leaves it to the route and the check
    before create; as decided, on or off), a kept node's idle deadline, Flex-start's wait for
    capacity (None: the route's), the wait for READY (None: the route's), whether the node is
    kept after the run (``launch --keep``, ``up``), and whether it is kept for runs (``up``:
    its watchdog on and its idle deadline 30 minutes by default). deadline_rules.py says
    which of them a plan may not ask for."""

    max_run_minutes: float | None = None
    watchdog: bool | None = None
    idle_minutes: float | None = None
    queue_wait_minutes: float | None = None
    ready_timeout_s: float | None = None
    keep: bool = False
    iterate: bool = False

    def max_run(self, route: str) -> float | None:
        """Minutes a node on ``route`` may run: as asked, else the route's default; None on a
        route that makes no node (a free route's deadline is its own)."""
        return self.max_run_minutes or DEFAULT_MAX_RUN.get(route)

    def record(self, max_run: float) -> dict[str, Any]:
        """What a kept node's record holds of it, with ``max_run``, the deadline the plan
        decided (the route's where none was asked), under the keys older versions wrote. The
        wait for READY and ``up``'s defaults are the launch's, not the node's: not recorded."""
        return {
            "watchdog": bool(self.watchdog),
            "idle_minutes": self.idle_minutes,
            "max_run_minutes": max_run,
            "queue_wait_minutes": self.queue_wait_minutes,
        }

    @classmethod
    def from_record(cls, settings: dict[str, Any], idle_s: float | None = None) -> Deadline:
        """The part back from a kept node's record (so kept): its settings, or, for a record
        from before they were recorded, the watchdog's idle time ``idle_s`` recorded with the
        node (a watchdog on where it has one) and the route's defaults."""
        watchdog = settings.get("watchdog", idle_s is not None)
        idle = settings.get("idle_minutes", idle_s / 60 if idle_s else None)
        return cls(
            max_run_minutes=_minutes(settings.get("max_run_minutes")),
            watchdog=bool(watchdog),
            idle_minutes=_minutes(idle),
            queue_wait_minutes=_minutes(settings.get("queue_wait_minutes")),
            keep=True,
        )


def _minutes(value: object) -> float | None:
    """A number of minutes from a record; anything else (a record we did not write) none."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


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

    @property
    def resumes(self) -> bool:
        """The route resumes a run after a preemption (``--checkpoints``): Google preempts it."""
        from tpuwizard.core.launch.plan.route_offers import RESUME_ROUTES

        return self.route in RESUME_ROUTES

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
