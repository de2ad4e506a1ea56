"""Where ``launch`` and ``up`` may create: ``--zone``, or ``--zones`` in order (failover), with
``--fan-out`` to ask in all of them at once. Read before any call; the plan checks the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from tpuwizard.core.errors import BadInput

F = TypeVar("F", bound=Callable[..., object])


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


def where_to_create(
    accelerator: str, zone: str | None, zones: str | None, failover: bool
) -> tuple[str, tuple[str, ...], bool]:
    """(the first zone, the --zones list, failover): exit 2 for --zone with --zones, or none."""
    from tpuwizard.core.cloud import gcloud_config

    if zones is not None:
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
        return listed[0], listed, True
    zone = zone or gcloud_config.discover().zone
    if not zone:
        raise BadInput(
            "No zone: give --zone or --zones (tpuwizard zones --accelerator "
            f"{accelerator} lists them) or run `gcloud config set compute/zone ZONE`."
        )
    return zone, (), failover
