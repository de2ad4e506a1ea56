"""Where ``launch`` and ``up`` may create: ``--zone``, or ``--zones`` in order (failover), with
``--fan-out`` to ask in all of them at once. Read before any call; the session's pipeline fills
the default (gcloud's zone) and the plan checks the rest."""

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
