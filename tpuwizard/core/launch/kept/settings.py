"""What ``up`` asked for, recorded with the kept node in the ledger, so that ``run
--checkpoints`` can make the same node again after Google preempts it: the plan of its
replacement is made from the record alone (the old node is gone by then)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline, Reach, Where, Workload
from tpuwizard.core.launch.plan.zone_rules import zones_from
from tpuwizard.core.launch.records.ledger import Entry


def kept_settings(plan: LaunchPlan) -> dict[str, Any]:
    """The plan's settings that the resource record does not hold already (accelerator, zone,
    route, project and backend are the resource's own)."""
    return {
        **plan.where.record(),
        **plan.deadline.record(plan.max_run),
        **plan.reach.record(),
        **plan.workload.record(),
    }


def replacement_answers(entry: Entry) -> LaunchAnswers:
    """The answers ``up`` made ``entry``'s node with, for the plan of a new node in the same
    zone (then the zones after it in ``--zones``), which the session makes for a new run; the
    chain sets its deadline (:func:`kept_chain_end` bounds it). A record from before settings
    were recorded gives the route's defaults, and the watchdog its recorded idle time, as ``up``
    does."""
    r, record = entry.resource, KeptRecord.of(entry)
    settings, idle_s = record.settings, record.idle_s
    where = Where.from_record(settings, r)
    return LaunchAnswers(
        # A new node in the zone the old one was made in, then the zones after it.
        replace(where, zones=zones_from(where.zones, r.zone) if where.zones else ()),
        deadline=Deadline.from_record(settings, idle_s),
        reach=Reach.from_record(settings),
        workload=Workload.from_record(settings),
    )


def kept_chain_end(entry: Entry, now: float) -> float:
    """When a kept node's chain ends: its deadline (a replacement keeps it, never extends it);
    with none recorded, ``up``'s --max-run from now."""
    record = KeptRecord.of(entry)
    if record.deadline:
        return record.deadline
    asked = Deadline(record.settings.get("max_run_minutes"))
    minutes = asked.max_run(entry.resource.route) or 120  # an unknown route: up's own
    return now + float(minutes) * 60


def replaced_by(entries: list[Entry], name: str) -> str | None:
    """The node ``run --checkpoints`` made in place of the kept node ``name`` (the last of a
    line of replacements); None when it was not replaced."""
    seen, found = {name}, None
    while True:
        new = next(
            (
                replaced
                for e in entries
                if name in (e.resource.name, e.resource.node_id)
                and (replaced := KeptRecord.of(e).replaced_by)
            ),
            None,
        )
        if new is None or new in seen:
            return found
        seen.add(new)
        found = name = new
