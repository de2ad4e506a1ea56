"""Where ``launch`` and ``up`` create, and what: the slice, ``--zone`` or ``--zones`` in order
(failover, with ``--fan-out`` to ask in all of them at once), the route, the project, the node's
name, the API that makes it and how Compute Engine is asked; the groups hand the command its
``Where`` part as ``where``. Read before any call; the session's pipeline fills the defaults
(gcloud's zone and project, the backend ``auto`` becomes) and the plan checks the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from tpuwizard.commands.common import Words, asked_slice, project_option
from tpuwizard.commands.options.group import option_group
from tpuwizard.core.cloud.backends import VIA_AUTO, Backend, Via
from tpuwizard.core.errors import BadInput
from tpuwizard.core.routes import CLOUD_ROUTES, Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Where

F = TypeVar("F", bound=Callable[..., object])

# Here, not in commands/common.py beside the other shared options: every command's start imports
# that module, and the backends' words only the commands that create (and preflight).
backend_option = click.option(
    "--backend",
    type=Words(Backend),
    default=Backend.AUTO.value,
    show_default=True,
    help="Which Google API makes the TPU: the Cloud TPU API, or Compute Engine (v5p, v6e, "
    "TPU7x; Google deletes the VM at its deadline itself). auto: by generation (the "
    "documentation's Compute Engine guide).",
)


def zones_options(command: F) -> F:
    """``--zones`` and ``--fan-out``, shared by launch and up."""
    command = click.option(
        "--fan-out",
        is_flag=True,
        help="With --zones: ask in every zone at once; the first READY is kept, the others are "
        "deleted and verified gone (until then each may bill).",
    )(command)
    return click.option(
        "--zones",
        metavar="Z1,Z2,...",
        help="Zones to try in this order, the next after a stockout (implies --failover); "
        "not with --zone.",
    )(command)


def zones_asked(zone: str | None, zones: str | None) -> tuple[str, tuple[str, ...]]:
    """(the zone asked, or "": the session's pipeline takes gcloud's; the --zones list): exit 2
    for --zone with --zones, or a list with an empty entry. ``--zones`` implies failover, and
    its first zone is the first tried (the pipeline's defaults)."""
    if zones is None:
        return zone or "", ()
    if zone is not None:
        raise BadInput(
            "Give either --zone (one zone) or --zones (zones to try in order), not both: "
            f"--zones {zone},{zones} tries {zone} first."
        )
    listed = tuple(z.strip() for z in zones.split(","))
    if not all(listed):
        raise BadInput(
            f"--zones {zones!r} has an empty entry: list zones separated by commas, such as "
            "--zones us-central1-a,us-west1-c."
        )
    return "", listed


def asked_where(
    accelerator: str | None,
    zone: str | None,
    zones: str | None,
    route: Route,
    project: str | None,
    name: str | None,
    failover: bool,
    fan_out: bool,
    backend: Backend,
    via: Via = VIA_AUTO,
) -> Where:
    """The part as asked: exit 2 for no --accelerator (it is optional in click for the free
    routes, which take no part), --zone with --zones, or a name that is no TPU type."""
    from tpuwizard.core.launch.plan.parts import Where

    if accelerator is None:
        raise BadInput("Missing option '--accelerator' (a TPU type, e.g. v5litepod-4).")
    zone, zone_list = zones_asked(zone, zones)
    return Where(
        asked_slice(accelerator),
        zone,
        project or "",
        route,
        backend,
        name,
        zone_list,
        failover,
        fan_out,
        via,
    )


def up_where(
    accelerator: str,
    zone: str | None,
    zones: str | None,
    route: Route,
    project: str | None,
    name: str | None,
    failover: bool,
    fan_out: bool,
    backend: Backend,
) -> Where:
    """up's part as asked: Compute Engine is asked its own way (``via`` auto)."""
    return asked_where(accelerator, zone, zones, route, project, name, failover, fan_out, backend)


ZONE = click.option("--zone", help="Zone (default from gcloud config), e.g. us-central1-a.")
NAME = click.option("--name", help="Node name (default tpuwizard-<run id>).")
FAILOVER = click.option(
    "--failover", is_flag=True, help="On a stockout, try the next zones offering it."
)

where_options = option_group(
    "where",
    [
        click.option(
            "--accelerator",
            help="TPU type, e.g. v5litepod-4 (required, except with --route kaggle or colab).",
        ),
        ZONE,
        click.option(
            "--route",
            type=Words(Route),
            default="vm",
            show_default=True,
            help="On-demand VM, spot, Flex-start (queued, bounded), kaggle: your script as a "
            "private Kaggle kernel on Kaggle's free TPU, or colab: your script on a Colab TPU "
            "runtime through Google's colab CLI.",
        ),
        project_option,
        NAME,
        FAILOVER,
        zones_options,
        backend_option,
        click.option(
            "--via",
            type=Words(Via),
            default=VIA_AUTO.value,  # shown as typed ("auto"), not as the enum's name
            show_default=True,
            help="How Compute Engine's Flex-start VM is asked for. auto: one instance for a "
            "single-host type, bulk mode (a BULK MIG, Google's recommendation) for a slice. "
            "resize-request: the course's Route 2B, a FLEX_START template, a MIG of size 0 and "
            "a resize request for one VM (needs --backend compute --route flex; tpuwizard "
            "deletes all three).",
        ),
    ],
    asked_where,
)
up_where_options = option_group(
    "where",
    [
        click.option("--accelerator", required=True, help="TPU type, e.g. v5litepod-4."),
        ZONE,
        click.option(
            "--route",
            type=Words(Route, CLOUD_ROUTES),
            default="vm",
            show_default=True,
            help="On-demand VM, spot (cheaper; Google may preempt it), or Flex-start (kept "
            "until its Flex-start deadline).",
        ),
        project_option,
        NAME,
        FAILOVER,
        zones_options,
        backend_option,
    ],
    up_where,
)
