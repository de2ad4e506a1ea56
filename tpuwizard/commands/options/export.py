"""``export``'s option groups: what the job runs (the ``Workload`` part), where its slices are
asked, the job's name and bounds, the export's target, and how the cluster admits it; each hands
the command its part. The values are checked as the wizard's GKE answers are, by the core's
``make_plan``; what only the command line can get wrong (a script that is no file, ``--image``
with a target that builds its own) is said here, exit 2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import Number, Whole
from tpuwizard.commands.options.group import option_group
from tpuwizard.commands.options.jax import jax_option
from tpuwizard.commands.options.packages import asked_packages, check_packages, packages_options
from tpuwizard.commands.options.workload import SCRIPT, SCRIPT_ARGS
from tpuwizard.core.deadlines import deadline_bounds_text
from tpuwizard.core.errors import BadInput, shown

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Workload

TARGETS = ("xpk", "jobset", "skypilot", "gcluster")


@dataclass(frozen=True)
class ExportTarget:
    """What the export writes and where: the target's text (``--to``), the image a JobSet
    runs, the folder (None: export-TARGET beside the script, the text printed too), and
    whether a file of the user's there may be overwritten."""

    to: str
    image: str | None
    out: Path | None
    force: bool


@dataclass(frozen=True)
class ExportWhere:
    """The slices the job asks for: one slice's type, how many of them (Multislice), the
    capacity route, and the zone and project (None: the engine's own)."""

    accelerator: str
    slices: int
    route: str
    zone: str | None
    project: str | None


@dataclass(frozen=True)
class ExportJob:
    """The job's name and bounds: one attempt's deadline and how many restarts."""

    name: str
    max_run: float | None
    max_restarts: int


@dataclass(frozen=True)
class Admission:
    """How the cluster admits the job: the cluster, Kueue's LocalQueue, the Pods' priority
    class and the reservation its TPUs come from."""

    cluster: str
    queue: str | None
    priority: str | None
    reservation: str | None


def export_workload(
    script: Path | None,
    script_args: tuple[str, ...],
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    jax: str | None,
) -> Workload:
    """The job's workload: exit 2 for arguments without a script, a script that is no file, or
    a package the plan refuses."""
    from tpuwizard.core.launch.plan.parts import Workload

    if script_args and script is None:
        raise BadInput("Arguments after -- are the script's: give --script FILE too.")
    if script is not None and not _is_file(script):
        raise BadInput(f"No file {shown(str(script), 80)}: give --script the path of your script.")
    specs = asked_packages(with_specs, requirements, script)
    check_packages(specs)
    return Workload(script, script_args, packages=specs, jax=jax)


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name too long or otherwise unreadable is not one."""
    try:
        return path.is_file()
    except OSError:
        return False


def export_target(target: str, image: str | None, out: Path | None, force: bool) -> ExportTarget:
    if image is not None and target != "jobset":
        raise BadInput(
            "--image is for --to jobset (xpk and gcluster build their image from the folder)."
        )
    return ExportTarget(target, image, out, force)


def export_where(
    accelerator: str, slices: int, route: str, zone: str | None, project: str | None
) -> ExportWhere:
    return ExportWhere(accelerator, slices, route, zone, project)


def export_job(name: str, max_run: float | None, max_restarts: int) -> ExportJob:
    return ExportJob(name, max_run, max_restarts)


def export_admission(
    cluster: str, queue: str | None, priority: str | None, reservation: str | None
) -> Admission:
    return Admission(cluster, queue, priority, reservation)


workload_options = option_group(
    "workload", [SCRIPT, packages_options, jax_option, SCRIPT_ARGS], export_workload
)
target_options = option_group(
    "target",
    [
        click.option(
            "--to",
            "target",
            type=click.Choice(TARGETS),
            default="xpk",
            show_default=True,
            help="xpk commands (and the JobSet they apply), a JobSet YAML for GKE, a SkyPilot "
            "task, or a Cluster Toolkit gcluster job submit (and the JobSet it stands for).",
        ),
        click.option("--image", help="--to jobset: a container image holding your folder."),
        click.option(
            "--out",
            type=click.Path(path_type=Path),
            metavar="FOLDER",
            help="The folder the export writes its three files into (the target's text, "
            "tpu_verify.py, tpuwizard_job.sh), inside the script's folder, which the engine "
            "ships. Default: export-TARGET there; without --out the text is also printed.",
        ),
        click.option(
            "--force",
            is_flag=True,
            help="Overwrite a file of yours in the export's folder that tpuwizard did not "
            "write. Never your script, never through a link.",
        ),
    ],
    export_target,
)
where_options = option_group(
    "where",
    [
        click.option(
            "--accelerator", required=True, help="TPU type of one slice, e.g. v5litepod-16."
        ),
        click.option(
            "--slices",
            type=Whole(),
            default=1,
            show_default=True,
            help="Slices joined by Multislice: data-parallel copies, not room for a larger state.",
        ),
        click.option(
            "--route",
            type=click.Choice(["vm", "spot", "flex"]),
            default="vm",
            show_default=True,
            help="On-demand, spot, or Flex-start capacity.",
        ),
        click.option(
            "--zone", help="Zone (default: the first documented zone offering the slice)."
        ),
        click.option("--project", help="Project (default: xpk's and gcloud's own)."),
    ],
    export_where,
)
job_options = option_group(
    "job",
    [
        click.option("--name", default="tpuwizard-run", show_default=True, help="Workload name."),
        click.option(
            "--max-run",
            type=Number(unit="minutes"),
            help=f"Deadline of one attempt in minutes, {deadline_bounds_text()} (the JobSet's "
            "activeDeadlineSeconds; xpk and SkyPilot have none, and the header says so).",
        ),
        click.option(
            "--max-restarts",
            type=Whole(),
            default=0,
            show_default=True,
            help="How many times the engine restarts a failed run (xpk's --max-restarts, "
            "gcluster's --restarts, the JobSet's failurePolicy.maxRestarts).",
        ),
    ],
    export_job,
)
admission_options = option_group(
    "admission",
    [
        click.option("--cluster", default="tpuwizard", show_default=True, help="GKE cluster name."),
        click.option(
            "--queue",
            metavar="NAME",
            help="Kueue LocalQueue to submit to: the JobSet's kueue.x-k8s.io/queue-name label. "
            "Without it, a cluster whose Kueue manages every job never starts the JobSet. "
            "--to jobset only (xpk always names its own queue; SkyPilot's TPU VMs have none).",
        ),
        click.option(
            "--priority",
            metavar="CLASS",
            help="Kubernetes PriorityClass of the Pods (priorityClassName), which Kueue takes as "
            "the workload's priority; --to xpk takes very-low, low, medium, high or very-high "
            "(its --priority). Not for SkyPilot.",
        ),
        click.option(
            "--reservation",
            metavar="NAME",
            help="Compute Engine reservation of the project to take the TPUs from (with --route "
            "vm): the JobSet's reservation node selectors, xpk's --reservation. Not for "
            "SkyPilot (its TPU VMs take none).",
        ),
    ],
    export_admission,
)
