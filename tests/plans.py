"""Plans for tests, built the way tests have always named them: ``launch_plan("v5litepod-4",
ZONE, PROJECT, run_id, run_dir, route, ...)``, the node's ``Where`` made of the names (parsed
here, the tests' edge). A keyword that names a value of a part (``watchdog=``, ``jax=``,
``checkpoints=``...) goes into that part; a part given whole (``deadline=Deadline(...)``) is
the plan's own. A plan made by the session goes through ``plan_for_run``; these are for tests
of what reads a plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tpuwizard.core.cloud.backends import Backend, Via
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline, Resume, Where, Workload
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import Route


def launch_plan(
    accelerator: str,
    zone: str,
    project: str,
    run_id: str,
    run_dir: Path,
    route: Route | str = Route.VM,
    *,
    backend: Backend | str = Backend.TPU_API,
    name: str | None = None,
    zones: tuple[str, ...] = (),
    failover: bool = False,
    fan_out: bool = False,
    via: Via | str = Via.AUTO,
    **fields: Any,
) -> LaunchPlan:
    """A plan on ``backend`` (the TPU API unless said: a plan's backend is decided)."""
    where = Where(
        parse_accelerator(accelerator),
        zone,
        project,
        Route(route),
        Backend(backend),
        name,
        tuple(zones),
        failover,
        fan_out,
        Via(via),
    )
    return dataclasses.replace(LaunchPlan(where, run_id, run_dir), **_into_parts(None, fields))


# The parts a flat keyword may name a value of, by the plan's field that holds each; the flat
# names older tests use where a part's own name differs.
_PARTS: dict[str, type[Any]] = {"deadline": Deadline, "workload": Workload, "resume": Resume}
_RENAMED = {"resume_from": "from_run"}


def _into_parts(plan: LaunchPlan | None, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with each value of a part moved into that part (``plan``'s, else a new one)."""
    out = dict(fields)
    for holder, part in _PARTS.items():
        names = {f.name for f in dataclasses.fields(part)}
        values = {_RENAMED.get(k, k): out.pop(k) for k in list(out) if _RENAMED.get(k, k) in names}
        if not values:
            continue
        base = out.get(holder) or (getattr(plan, holder) if plan is not None else None)
        if base is None:
            base = Deadline(watchdog=False) if part is Deadline else part()
        out[holder] = dataclasses.replace(base, **values)
    return out


def changed(plan: LaunchPlan, **changes: Any) -> LaunchPlan:
    """``plan`` with ``changes``: those of its ``Where`` (``accelerator=`` for its slice,
    ``zone=``, ``route=``, ``backend=``..., parsed from their words) made there, the rest on
    the plan itself."""
    where_names = {f.name for f in dataclasses.fields(Where)}
    where = {k: changes.pop(k) for k in list(changes) if k in where_names | {"accelerator"}}
    if "accelerator" in where:
        where["slice"] = parse_accelerator(where.pop("accelerator"))
    for key, kind in (("route", Route), ("backend", Backend), ("via", Via)):
        if key in where:
            where[key] = kind(where[key])
    if where:
        changes["where"] = dataclasses.replace(plan.where, **where)
    return dataclasses.replace(plan, **_into_parts(plan, changes))
