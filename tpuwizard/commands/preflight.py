"""``tpuwizard preflight``: what would refuse the TPU, found before anything is created; and the
same checks run by ``launch`` and ``up`` before their first create, in the session's pipeline
(``--no-preflight`` skips them), whose answer :func:`checked_or_exit` says. Read-only: each fix
is printed, never applied."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import (
    Words,
    asked_slice,
    open_session,
    print_json,
    project_option,
    sandbox_option,
    say,
    show,
)
from tpuwizard.commands.options.reach import transport_option
from tpuwizard.commands.options.where import backend_option
from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD
from tpuwizard.core.routes import CLOUD_ROUTES, Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.session.preflight import PreflightResult
    from tpuwizard.session.prepare.outcomes import Prepared

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
    from tpuwizard.core.errors import PlanRefused
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.parts import Reach, Where

    slice_ = asked_slice(accelerator)  # --accelerator, parsed once here
    where = Where(slice_, zone or "", route=Route(route), backend=Backend(backend))
    asked = LaunchAnswers(where, reach=Reach(Transport(transport), internal_ips=internal_ips))
    session = open_session(project, sandbox)
    # The zone (gcloud's where none is given) and the backend, as a launch's stages decide
    # them: a refusal there (no zone, an impossible pair) is exit 2 before any call.
    prepared = session.preflight_only(asked)
    result = prepared.preflight
    if result is None:
        raise PlanRefused(list(prepared.reasons))
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


def checked_or_exit(prepared: Prepared, as_json: bool) -> CheckedPlan:
    """The pipeline before create's answer (:meth:`Session.prepare`) on the command line: the
    preflight's lines (a FAIL exits 3, nothing created); a node kept for runs that nothing would
    delete exits 2 (a refusal before any create, answered by the flag it names, as every
    question here; issue 55.11); any other refusal or question exits 2 with each reason in the
    command line's words (a question's names the flag that answers it).
    Else the checked plan a launch starts from."""
    from tpuwizard.core.errors import PlanRefused
    from tpuwizard.session.prepare.outcomes import Ask, Question, Ready
    from tpuwizard.words.choice_words import all_words, choice_words
    from tpuwizard.words.preflight_text import before_create_lines

    echo = say if as_json else click.echo
    if prepared.preflight is not None:
        lines = before_create_lines(prepared.preflight, "--no-preflight skips them")
        if prepared.preflight.failures:
            *checks, why_nothing = lines  # the refusal, on stderr even with --json
            for line in checks:
                echo(line)
            say(why_nothing)
            sys.exit(EXIT_CLOUD)
        for line in lines:
            echo(line)
    outcome = prepared.outcome
    if isinstance(outcome, Ready):
        return outcome.checked
    if isinstance(outcome, Question) and outcome.ask is Ask.KEEP_UNWATCHED:
        for line in all_words(outcome.why, "cli"):
            say(line)
        flag = choice_words(outcome.answer, "cli")
        say(f"(Give {flag} to keep it anyway; then only `tpuwizard down` ends it.)")
        sys.exit(EXIT_BAD_INPUT)
    raise PlanRefused(list(prepared.reasons))
