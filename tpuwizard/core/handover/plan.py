"""The plan handed over: a checked slice, how many of it, the route, the packages, the script.

Everything a user typed is checked here before any text is written, with the rules ``launch``
uses (script name, deadline bounds), plus what the engines themselves refuse (xpk's and
Kubernetes' names are DNS labels of at most 40 characters).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tpuwizard.core.deadlines import deadline_problem
from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.handover import admission
from tpuwizard.core.handover.gke import GkeSlice, gke_slice
from tpuwizard.core.launch.plan.workload_rules import safe_script_name
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.jax_versions import jax_problems
from tpuwizard.core.routes import Route

TARGETS = ("xpk", "jobset", "skypilot", "gcluster")
ROUTES = ("vm", "spot", "flex")
MAX_SLICES = 64
# xpk's name_type (xpk/parser/validators.py): a DNS label of at most 40 characters.
_NAME_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_NAME_MAX = 40


@dataclass(frozen=True)
class HandoverPlan:
    """One checked plan for the hand-over; ``script`` is a file name in the folder shipped."""

    gke: GkeSlice
    slices: int
    route: str  # vm (on-demand), spot or flex
    packages: tuple[str, ...]  # requirement texts, each checked by the plan's package rules
    script: str | None
    script_args: tuple[str, ...]
    max_run_minutes: float | None
    max_restarts: int
    cluster: str
    workload: str
    zone: str
    project: str | None
    jax: str | None = None  # the worker's jax[tpu] from tpuwizard's table; None: its default
    # Where Kueue and GKE admit the job (core/handover/admission.py); None: not asked for.
    queue: str | None = None  # a Kueue LocalQueue
    priority: str | None = None  # a Kubernetes PriorityClass
    reservation: str | None = None  # a Compute Engine reservation of the project
    # The export's own folder, relative to the folder shipped (core/handover/place.py): where the
    # job and the verifier are found from the script's folder.
    folder: str = "."

    @property
    def slice(self) -> catalog.Slice:
        return self.gke.slice

    @property
    def processes(self) -> int:
        """Every VM of every slice runs one process of the job."""
        return self.gke.vms * self.slices

    @property
    def deadline_seconds(self) -> int | None:
        if self.max_run_minutes is None:
            return None
        return max(1, round(self.max_run_minutes * 60))


def check_name(value: str, option: str) -> str:
    if not _NAME_RE.fullmatch(value) or len(value) > _NAME_MAX:
        raise BadInput(
            f"{option} {value!r} is not a name GKE and xpk take: lower-case letters, digits and "
            f"'-', starting with a letter, not ending with '-', at most {_NAME_MAX} characters "
            "(e.g. tpuwizard-run)."
        )
    return value


def _is_text(value: str) -> bool:
    """Whether ``value`` is text: Python keeps a non-UTF-8 byte of the command line as a lone
    surrogate, which no file can hold as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def default_zone(s: catalog.Slice, route: str) -> str:
    """The first documented zone offering the slice on the route (Flex-start's own list)."""
    zones = s.generation.flex_start_zones if route == Route.FLEX else s.zones
    return (zones or s.zones)[0]


def make_plan(
    accelerator: str,
    *,
    slices: int = 1,
    route: str = "vm",
    packages: Sequence[str] = (),
    script: str | None = None,
    script_args: Sequence[str] = (),
    max_run_minutes: float | None = None,
    max_restarts: int = 0,
    cluster: str = "tpuwizard",
    workload: str = "tpuwizard-run",
    zone: str | None = None,
    project: str | None = None,
    jax: str | None = None,
    queue: str | None = None,
    priority: str | None = None,
    reservation: str | None = None,
) -> HandoverPlan:
    """Check every input (export's options, the wizard's answers); the first wrong one raises
    :class:`BadInput` saying what to type."""
    try:
        gke = gke_slice(catalog.parse_accelerator(accelerator))
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None
    if route not in ROUTES:
        raise BadInput(f"Unknown route {route!r}: the routes are {', '.join(ROUTES)}.")
    if not 1 <= slices <= MAX_SLICES:
        raise BadInput(f"--slices must be 1 to {MAX_SLICES}, not {slices}.")
    if max_restarts < 0:
        raise BadInput(f"--max-restarts must be 0 or more, not {max_restarts}.")
    problem = deadline_problem(max_run_minutes)
    if problem:
        raise BadInput(f"{problem} Give --max-run in minutes, e.g. --max-run 120.")
    if route == Route.FLEX and zone is None and not gke.slice.generation.flex_start_zones:
        raise BadInput(
            f"tpuwizard's catalog lists no Flex-start zone for {gke.slice.generation.key}: "
            "choose --route vm or spot, or give --zone where you know Flex-start serves it."
        )
    if zone is not None and not re.fullmatch(r"[a-z]+-[a-z]+[0-9]+-[a-z]", zone):
        raise BadInput(f"--zone {zone!r} is not a zone name such as us-central1-a.")
    problems = jax_problems(jax)
    if problems:
        raise BadInput(problems[0])
    if project is not None and not re.fullmatch(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", project):
        raise BadInput(f"--project {project!r} is not a project ID such as my-project-123.")
    queue = admission.check_queue(queue) if queue is not None else None
    priority = admission.check_priority(priority) if priority is not None else None
    reservation = admission.check_reservation(reservation) if reservation is not None else None
    admission.check_route(reservation, route)
    for at, arg in enumerate(script_args, 1):
        if not _is_text(arg):
            raise BadInput(
                f"Script argument {at} ({shown(arg)}) holds bytes that are not UTF-8 text (typed "
                "in another encoding): retype it as plain text."
            )
    return HandoverPlan(
        gke=gke,
        slices=slices,
        route=route,
        packages=tuple(packages),
        script=safe_script_name(script) if script is not None else None,
        script_args=tuple(script_args),
        max_run_minutes=max_run_minutes,
        max_restarts=max_restarts,
        cluster=check_name(cluster, "--cluster"),
        workload=check_name(workload, "--name"),
        zone=zone or default_zone(gke.slice, route),
        project=project,
        jax=jax,
        queue=queue,
        priority=priority,
        reservation=reservation,
    )
