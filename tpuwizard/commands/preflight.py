"""``tpuwizard preflight``: what would refuse the TPU, found before anything is created; and the
same checks run by ``launch`` and ``up`` before their first create (``--no-preflight`` skips
them). Read-only: each fix is printed, never applied."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import (
    Words,
    backend_option,
    open_session,
    print_json,
    project_option,
    sandbox_option,
    say,
    show,
    transport_option,
)
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.routes import CLOUD_ROUTES, Route

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.session.preflight import PreflightResult
    from tpuwizard.session.session import Session

no_preflight_option = click.option(
    "--no-preflight",
    is_flag=True,
    help="Skip the checks before create (credentials, APIs, billing, quota, OS Login, "
    "external IPs, the zone's offer); `tpuwizard preflight` runs them alone.",
)


@click.command()
@click.option("--accelerator", required=True, help="TPU type, e.g. v6e-4.")
@click.option("--zone", help="Zone (default from gcloud config), e.g. us-east5-a.")
@click.option(
    "--route",
    type=Words(Route, CLOUD_ROUTES),
    default="vm",
    show_default=True,
    help="The route the launch would take: its quota bucket differs.",
)
@project_option
@backend_option
@transport_option
@click.option(
    "--internal-ips",
    is_flag=True,
    help="The launch would give its VMs no external address: check Cloud NAT (and IAP).",
)
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON document: every check.")
def preflight(
    accelerator: str,
    zone: str | None,
    route: str,
    project: str | None,
    backend: str,
    transport: str,
    internal_ips: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Check what would refuse a launch, before anything is created (exit 3 on any FAIL)."""
    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.plan import catalog
    from tpuwizard.session.backend import decide_backend
    from tpuwizard.session.preflight import run_preflight

    try:
        catalog.parse_accelerator(accelerator)
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None
    zone = zone or gcloud_config.discover().zone
    if not zone:
        raise BadInput(
            "No zone: give --zone (tpuwizard zones --accelerator "
            f"{accelerator} lists them) or run `gcloud config set compute/zone ZONE`."
        )
    gcloud_config.validate_zone(zone)
    decide_backend(accelerator, route, backend)  # an impossible pair: exit 2 before any call
    session = open_session(project, sandbox)
    result = run_preflight(
        session,
        accelerator,
        zone,
        route,
        backend,
        internal_ips,
        transport,
        compute_ok=transport != Transport.GCLOUD,
    )
    if as_json:
        print_json(result.as_json())
    else:
        for line in lines(result):
            show(line)
    if result.failures:
        sys.exit(EXIT_CLOUD)


def lines(result: PreflightResult) -> list[str]:
    """The backend decided (and why), then one line per check."""
    head = [f"Backend: {result.choice.reason}"] if result.choice and result.choice.reason else []
    return head + [c.line() for c in result.checks]


def preflight_before_create(
    session: Session,
    plan: LaunchPlan,
    asked: str,
    transport: str,
    compute_ok: bool,
    as_json: bool,
) -> tuple[BackendChoice | None, LaunchPlan]:
    """Run the preflight for ``plan`` (:func:`~tpuwizard.session.preflight.before_create`, as
    the wizard's Create does); any FAIL ends the command here, before any create (exit 3, its
    lines said). Returns the backend decided (``auto`` may move to Compute Engine where its quota
    covers the slice), or None when none was decided; and ``plan`` on that backend, importing its
    key into the OS Login profile where the preflight found OS Login on."""
    from tpuwizard.session.preflight import before_create
    from tpuwizard.words.preflight_text import before_create_lines

    before = before_create(session, plan, asked, transport, compute_ok)
    echo = say if as_json else click.echo
    lines = before_create_lines(before, "--no-preflight skips them")
    if before.refused:
        *checks, why_nothing = lines  # the refusal, on stderr even with --json
        for line in checks:
            echo(line)
        say(why_nothing)
        sys.exit(EXIT_CLOUD)
    for line in lines:
        echo(line)
    return before.result.choice, before.plan
