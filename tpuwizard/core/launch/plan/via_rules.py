"""``--via resize-request``: the course's Route 2B (a FLEX_START instance template, a zonal MIG of
size 0, a resize request for one VM) as a launch, and the plans it does not fit, refused before
any call.

Google's bounds (docs/guides/compute-engine.md, "The course's Route 2B"): a resize request's run
duration is 10 minutes to 7 days (about-resize-requests-mig); it is Compute Engine's (a MIG's);
the course asks for one VM. v5e, the course's machine type (``ct5lp-hightpu-4t``), has no
Compute Engine instance (core/cloud/backend_choice.py's v5e row): its course words offer v6e-4,
the course's other single-host slice, or v5e through the TPU API's Flex-start.
"""

from __future__ import annotations

from dataclasses import replace

from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.backends import COMPUTE, VIA_AUTO, VIAS
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.parts import Where
from tpuwizard.core.routes import Route

MIN_RUN_MINUTES = 10.0  # about-resize-requests-mig: "between 10 minutes and 7 days"
COURSE_OTHER = "v6e-4"  # the course's other single-host slice; ct6e-standard-4t on Compute Engine


def via_problems(where: Where, keep: bool = False, max_run: float = MIN_RUN_MINUTES) -> list[Said]:
    """Why ``where``'s --via cannot be, on a node kept or not (``keep``) for ``max_run``
    minutes; empty when it can (always for the default)."""
    if where.via == VIA_AUTO:
        return []
    if where.via not in VIAS:
        return [f"Unknown --via '{where.via}'. Choose one of: {', '.join(VIAS)}."]
    found: list[Said] = []
    if where.backend != COMPUTE:
        found.append(
            "--via resize-request is the course's Route 2B on Compute Engine (a MIG's resize "
            f"request), which needs --backend compute (not {where.backend}): add it, or leave "
            "--via out."
        )
    if where.route != Route.FLEX:
        found.append(
            f"--via resize-request asks for a Flex-start VM (the course's Route 2B), not the "
            f"{where.route} route: use --route flex, or leave --via out."
        )
    s = where.slice
    if s.generation.key == "v5e":
        found.append(course_v5e_words(s.name))
    elif not s.single_host:
        found.append(
            f"--via resize-request asks for one VM (the course's Route 2B); {s.name} is a "
            f"multi-host slice of {s.vms} VMs, which tpuwizard makes in bulk mode, its default "
            "and Google's recommendation: leave --via out."
        )
    if keep:
        found.append(
            "A kept TPU made by resize request would outlive its deadline: the MIG deletes the "
            "VM at the request's run duration, but the MIG and its template stay until deleted, "
            "and nothing but a running tpuwizard deletes them. Leave out --keep, or --via."
        )
    if max_run < MIN_RUN_MINUTES:
        found.append(
            "A resize request's run duration is 10 minutes to 7 days (Google's "
            "about-resize-requests-mig page): give --max-run 10 or more."
        )
    if where.fan_out:
        found.append(
            "--via resize-request makes one MIG in one zone: leave out --fan-out (--zones "
            "with --failover tries the zones one at a time)."
        )
    return found


def course_v5e_words(accelerator: str) -> str:
    """The course prints Route 2B with ``ct5lp-hightpu-4t`` (v5e): Compute Engine does not serve
    it as an instance. What to type instead."""
    return (
        f"The course's Route 2B asks for v5e ({accelerator}; machine type ct5lp-hightpu-4t), "
        "which Compute Engine does not serve as an instance: Google refuses it with a 403, "
        "'This user agent is not allowed to use the machine type' (users' reports; Google's TPU "
        "Builders "
        "guide lists v5e as legacy API only). Run Route 2B with the course's other slice, "
        f"--accelerator {COURSE_OTHER} (ct6e-standard-4t), or v5e through the TPU API's "
        "Flex-start: --backend tpu-api --route flex, without --via."
    )


def refuse_early(where: Where) -> None:
    """BadInput (exit 2, no call) for --via with a backend, route or type it does not fit, said
    before the backend is decided: v5e with --backend compute gets the course's words. The
    zones are the plan's to judge, with every other rule."""
    found = via_problems(replace(where, fan_out=False))
    if found:
        raise BadInput(" ".join(str(f) for f in found))
