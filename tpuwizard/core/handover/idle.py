"""The header every hand-over file begins with: what bills while no job runs (each figure per
hour with its source and date), how to tear down what the commands create, and what tpuwizard no
longer guards once the plan leaves it.

The TPU figures are the catalog's (core/plan/cost.py: a zone's own price where it has one, else
the generation's list price). The cluster's management fee and its CPU system pool are typed
here with their sources: no catalog of tpuwizard's holds them.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.export_marks import MARKER
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.routes import Route

GKE_FEE_PER_HOUR = 0.10
GKE_FEE_SOURCE = (
    "cloud.google.com/kubernetes-engine/pricing: a flat $0.10 per cluster per hour; a $74.40 "
    "monthly credit per billing account covers one zonal or Autopilot cluster (read 2026-12-02)"
)
# xpk cluster create's default CPU pool (--default-pool-cpu-machine-type, default 6 nodes with
# autoscaling); export asks for one node with --default-pool-cpu-num-nodes 1.
CPU_POOL_MACHINE = "e2-standard-16"
CPU_POOL_NODES = 1
# 16 vCPU x $0.021811 + 64 GB x $0.002923 per hour, us-central1 E2 on-demand rates.
CPU_POOL_PER_HOUR = 0.54
CPU_POOL_SOURCE = (
    "E2 on-demand rates in us-central1 (16 vCPU x $0.021811 + 64 GB x $0.002923 per hour), "
    "typed 2026-12-02 and not confirmed against a page here: check "
    "cloud.google.com/compute/vm-instance-pricing; the machine type is xpk 1.16.0's default "
    "(xpk/parser/cluster.py, --default-pool-cpu-machine-type)"
)
UNGUARDED = (
    "tpuwizard no longer guards this run: no ledger record, no deadline of its own, no watchdog "
    "and no verified teardown past this hand-over. Nothing here deletes what these commands "
    "create; run the teardown lines yourself and list what is left afterwards."
)
ROUTE_WORDS = {"vm": "on-demand", "spot": "spot", "flex": "Flex-start"}


@dataclass(frozen=True)
class Bill:
    """One thing that bills per hour while no job runs; ``usd_per_hour`` None where unknown."""

    what: str
    usd_per_hour: float | None
    source: str


def _money(usd: float | None) -> str:
    return "no price known" if usd is None else f"${usd:.2f}/h"


def tpu_price_source(plan: HandoverPlan) -> str:
    src = catalog.sources()
    note = cost.zone_price(plan.slice, plan.route, plan.zone).note
    found = f"tpuwizard's catalog, {src['prices']}" + (
        f"; {note}" if note and plan.route != Route.FLEX else ""
    )
    if plan.route == Route.FLEX:
        found += f"; {catalog.price_table('flex_start_price').get('source', '')}"
    return found


def tpu_pool_bill(plan: HandoverPlan) -> Bill:
    """The TPU node pools xpk cluster create makes: full size for on-demand and spot (billing
    from creation until deletion), none until a workload asks for Flex-start."""
    s = plan.slice
    many = f"{plan.slices} x " if plan.slices > 1 else ""
    pools = f"{plan.slices} TPU node pool{'s' if plan.slices > 1 else ''}"
    if plan.route == Route.FLEX:
        at_most = cost.at_most_hourly(s, "flex", plan.zone)
        each = "no price known" if at_most is None else f"at most ${at_most:.2f}/h each"
        return Bill(
            f"{pools} of {s.name}, Flex-start: made with 0 nodes, billing nothing until a "
            f"workload runs; then {many}{s.name} ({each}, on-demand's price bounds Flex-start's)",
            0.0,
            tpu_price_source(plan),
        )
    hourly = cost.hourly(s, plan.route, plan.zone)
    total = None if hourly is None else round(hourly * plan.slices, 4)
    return Bill(
        f"{pools} of {s.name} ({plan.gke.vms} VM{'s' if plan.gke.vms > 1 else ''} of "
        f"{plan.gke.chips_per_vm} chips each), {ROUTE_WORDS[plan.route]}, at full size from "
        f"xpk cluster create until xpk cluster delete"
        + (f" ({plan.slices} x {_money(hourly)})" if plan.slices > 1 else ""),
        total,
        tpu_price_source(plan),
    )


def cluster_bills(plan: HandoverPlan) -> list[Bill]:
    """Everything an xpk-made cluster bills per hour with no job running."""
    return [
        tpu_pool_bill(plan),
        Bill("the GKE cluster's management fee", GKE_FEE_PER_HOUR, GKE_FEE_SOURCE),
        Bill(
            f"its CPU system pool: {CPU_POOL_NODES} x {CPU_POOL_MACHINE} (autoscaling may add "
            "nodes)",
            CPU_POOL_PER_HOUR * CPU_POOL_NODES,
            CPU_POOL_SOURCE,
        ),
    ]


def bill_lines(bills: list[Bill]) -> list[str]:
    """The bills as lines, with their sum (a floor where one figure is unknown)."""
    lines = ["What bills per hour while no job runs:"]
    for bill in bills:
        lines += [f"  - {bill.what}: {_money(bill.usd_per_hour)}", f"    source: {bill.source}"]
    known = [b.usd_per_hour for b in bills if b.usd_per_hour is not None]
    unknown = len(known) < len(bills)
    total = f"${sum(known):.2f}/h" + (" plus what has no price above" if unknown else "")
    lines.append(f"  In all: {total}. Every figure is an estimate; check the pricing pages.")
    return lines


def header(title: str, plan: HandoverPlan, bills: list[Bill], teardown: list[str]) -> list[str]:
    """The header's lines (without comment marks): the plan, the bills, teardown, the guard."""
    s = plan.slice
    copies = (
        f"{plan.slices} slices of {s.name} (Multislice: {plan.slices} data-parallel copies)"
        if plan.slices > 1
        else f"one slice of {s.name}"
    )
    return [
        title,
        f"Plan: {copies}, {s.chips} chips and {plan.gke.vms} VM(s) per slice, topology "
        f"{plan.gke.topology}, {ROUTE_WORDS[plan.route]}, zone {plan.zone}.",
        f"{MARKER}; nothing was created or applied by it.",  # how a re-export knows it
        "",
        *bill_lines(bills),
        "",
        "Teardown (run when done, then check nothing is left):",
        *(f"  {line}" for line in teardown),
        "",
        UNGUARDED,
    ]
