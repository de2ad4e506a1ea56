"""The cloud lifecycle: the sandbox, launch, status and teardown."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.choosing import (
    OTHERS_TITLE,
    confirm_theirs,
    result_data,
    say_preempted,
    say_skipped,
    say_unchecked,
    select,
)
from tpuwizard.commands.common import (
    READY_TIMEOUT,
    Group,
    Number,
    ask_yes_no,
    check_transport,
    cloud_errors,
    kept_now,
    open_session,
    print_json,
    project_option,
    sandbox_option,
    say,
    show,
    stdin_is_terminal,
    transport_option,
)
from tpuwizard.core.deadlines import deadline_bounds_text
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK, EXIT_TEARDOWN

if TYPE_CHECKING:
    from tpuwizard.core.launch.teardown import Billable, Unchecked
    from tpuwizard.session.session import Session


@click.group(cls=Group)
def sandbox() -> None:
    """The local practice stand-in for the Cloud TPU API."""


@sandbox.command("serve")
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--faults", help="Fault spec, e.g. 'stockout=us-central1-a;unavailable=2'.")
@click.option(
    "--delay",
    type=Number(0, unit="seconds"),
    default=2.0,
    show_default=True,
    help="Seconds a node takes to become READY.",
)
def sandbox_serve(port: int, faults: str | None, delay: float) -> None:
    """Run the sandbox in the foreground until Ctrl+C."""
    from tpuwizard.session.practice import make_foreground_sandbox

    if not 0 <= port <= 65535:
        raise BadInput(f"--port must be 0-65535, not {port}.")
    try:
        server = make_foreground_sandbox(port, faults, delay)
    except OSError as err:
        raise BadInput(
            f"Cannot listen on 127.0.0.1:{port} ({err.strerror}): choose another "
            "--port, or 0 for a free one."
        ) from None
    say("[practice] tpuwizard sandbox: a local stand-in for the Cloud TPU API.")
    say("Point tpuwizard at it by exporting these two lines (the token is this server's secret):")
    click.echo(f"TPUWIZARD_TPU_ENDPOINT={server.endpoint}")
    click.echo(f"TPUWIZARD_SANDBOX_TOKEN={server.token}")
    # Stopped by Ctrl+C or by a signal alike: either way its nodes' VMs stop with it.
    for stop_signal in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop_signal, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("Sandbox stopped.")
    finally:
        server.server_close()
        stopped = server.switch_off()
    if stopped:
        say(
            f"The processes on its {stopped} node(s) ended with it (their watchdogs too); the "
            "nodes stay in its state for the next sandbox: tpuwizard status --sandbox."
        )


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@click.command()
@click.option("--accelerator", required=True, help="TPU type, e.g. v5litepod-4.")
@click.option("--zone", help="Zone (default from gcloud config), e.g. us-central1-a.")
@click.option(
    "--route",
    type=click.Choice(["vm", "spot", "flex"]),
    default="vm",
    show_default=True,
    help="On-demand VM, spot, or Flex-start (queued, bounded).",
)
@project_option
@click.option("--name", help="Node name (default tpuwizard-<run id>).")
@click.option(
    "--script", type=click.Path(path_type=Path), help="Your script to run after the verifier."
)
@click.option(
    "--fetch",
    "fetch",
    multiple=True,
    help="Glob of files your script writes, copied back to runs/<run id>/files/ (repeatable).",
)
@click.option("--keep", is_flag=True, help="Leave the node running at the end (it keeps billing).")
@click.option(
    "--max-run",
    type=Number(unit="minutes"),
    help=f"Deadline in minutes, {deadline_bounds_text()} (Flex-start's maxRunDuration; the "
    "watchdog's deadline).",
)
@click.option(
    "--watchdog/--no-watchdog",
    default=None,
    help="vm/spot: a process on the VM deletes it at the deadline, even if this computer is off. "
    "Default: on where a check before create says it can run. --watchdog: on, and exit 2 if "
    "the check says it cannot.",
)
@click.option("--failover", is_flag=True, help="On a stockout, try the next zones offering it.")
@click.option("--precision", is_flag=True, help="The verifier also measures fp32/bf16/int8 error.")
@click.option(
    "--trace", is_flag=True, help="The verifier also saves a profiler trace into the run folder."
)
@transport_option
@click.option(
    "--internal-ips",
    is_flag=True,
    help="No external addresses (then only --transport gcloud, through IAP, reaches the VMs).",
)
@click.option("--run-dir", type=click.Path(path_type=Path), help="Base folder for run folders.")
@click.option(
    "--ready-timeout",
    type=READY_TIMEOUT,
    help="Seconds to wait for the node (or queued resource) to be ready "
    "(default 1800; Flex-start 21600: a waiting request costs nothing).",
)
@click.option(
    "--service-account",
    metavar="EMAIL",
    help="The node's service account (the watchdog deletes with it); default: the project's "
    "Compute Engine default account, which has no roles in organisations made since May 2024.",
)
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event per line.")
# `launch --script train.py -- --lr 3e-4`: after `--`, the script's own arguments, unchanged.
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- SCRIPT_ARGS...]")
def launch(
    accelerator: str,
    zone: str | None,
    route: str,
    project: str | None,
    name: str | None,
    script: Path | None,
    fetch: tuple[str, ...],
    keep: bool,
    max_run: float | None,
    watchdog: bool | None,
    failover: bool,
    precision: bool,
    trace: bool,
    transport: str,
    internal_ips: bool,
    run_dir: Path | None,
    ready_timeout: float | None,
    service_account: str | None,
    sandbox: bool,
    as_json: bool,
    script_args: tuple[str, ...],
) -> None:
    """Create a TPU, verify JAX on it, run your script, copy results back, and tear it down."""
    import json

    from tpuwizard.core import paths
    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.launch.events import Finished
    from tpuwizard.core.launch.plan import DEFAULT_READY_TIMEOUT, LaunchPlan
    from tpuwizard.event_text import describe, json_event, summary_lines
    from tpuwizard.session.signals import exit_code, stop_on_signals
    from tpuwizard.session.watchdog import choose_watchdog

    zone = zone or gcloud_config.discover().zone
    if not zone:
        raise BadInput(
            "No zone: give --zone (tpuwizard zones --accelerator "
            f"{accelerator} lists them) or run `gcloud config set compute/zone ZONE`."
        )
    if ready_timeout is None:
        ready_timeout = DEFAULT_READY_TIMEOUT.get(route, 1800.0)
    if internal_ips and transport != "gcloud":
        raise BadInput(
            "--internal-ips gives the VMs no external address, so SSH from this computer cannot "
            "reach them: add --transport gcloud (it tunnels through IAP)."
        )
    session = open_session(project, sandbox, run_dir)
    check_transport(transport, session.practice)
    run_id = paths.new_run_id()
    plan = LaunchPlan(
        accelerator=accelerator,
        zone=zone,
        project=session.project or "",
        run_id=run_id,
        run_dir=session.run_folder(run_id),
        route=route,
        name=name,
        script=script,
        script_args=script_args,
        fetch=fetch,
        keep=keep,
        max_run_minutes=max_run,
        watchdog=bool(watchdog),
        failover=failover,
        precision=precision,
        trace=trace,
        internal_ips=internal_ips,
        service_account=service_account,
    )
    plan.validate()  # every rule, before any cloud call (or sandbox): exit 2 with all of them
    if keep:  # in practice the sandbox (and a watchdog's endpoint) must outlive this command
        session.prepare_to_keep()
    choice = choose_watchdog(session, plan, watchdog)
    plan = choice.plan
    for line in choice.lines():
        (say if as_json else click.echo)(line)
    handle = session.start_launch(plan, transport, ready_timeout)
    code = EXIT_CLOUD
    with stop_on_signals(handle, say) as received:
        for event in handle.events():  # after a stop signal, Finished says 128 + it already
            if as_json:
                click.echo(json.dumps(json_event(event)))
            for line in describe(event):
                (say if as_json else click.echo)(line)
            if isinstance(event, Finished):
                code = event.exit_code
    for line in summary_lines(handle.summary):
        (say if as_json else click.echo)(line)
    sys.exit(exit_code(received, code))


@click.command()
@project_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def status(project: str | None, sandbox: bool, as_json: bool) -> None:
    """Everything tpuwizard created that may still bill, from the ledger and labels. Exit 3
    when a zone could not be checked, 4 when a preempted kept node could not be deleted."""
    from tpuwizard.core.cloud.diagnose import Context
    from tpuwizard.core.plan import cost

    session = open_session(project, sandbox)
    with cloud_errors(Context(project=session.project)):
        kept = session.kept.check()  # first: a preempted kept node is deleted, not listed
        found = session.find_leftovers()
    say_skipped(found)
    say_preempted(kept.preempted, session.practice)
    if as_json:
        print_json(
            {
                "resources": [b.to_dict() for b in found],
                "kept": [k.to_dict() for k in kept.infos],
                "others": [b.to_dict() for b in found.others],
                "unchecked": [u.to_dict() for u in found.unchecked],
                "preempted": [result_data(r) for r in kept.preempted],
                "skipped_zones": found.skipped,
                "unreadable_ledger_lines": [
                    {"line": number, "why": why} for number, why in found.unreadable
                ],
            }
        )
    else:
        from tpuwizard.render import render_status

        if found:
            render_status(found, cost.label(), practice=session.practice)
        elif not found.unchecked:
            show("Nothing you created with tpuwizard exists any more: nothing of yours is billing.")
        for info in kept.infos:  # kept for iterating: what they cost, when they delete themselves
            show(info.describe())  # checked with the cloud: part of status's answer, so on stdout
        if found.others:
            render_status(found.others, cost.label(), title=OTHERS_TITLE, practice=session.practice)
    say_unchecked(found.unchecked)  # last, after everything that could be checked
    if not all(r.verified for r in kept.preempted):
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    if found.unchecked:
        raise click.exceptions.Exit(EXIT_CLOUD)


@click.command()
@click.argument("name", required=False)
@click.option("--all", "everything", is_flag=True, help="Everything tpuwizard created.")
@click.option("--zone", help="Only in this zone (for a name held in several).")
@project_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--other-owner",
    is_flag=True,
    help="With NAME and --yes: delete it although another tpuwizard user made it.",
)
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def teardown(
    name: str | None,
    everything: bool,
    zone: str | None,
    project: str | None,
    yes: bool,
    other_owner: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Delete what tpuwizard created and verify by listing that it is gone. As ``down`` without
    NAME: the only kept node. Exit 4 if anything could not be verified gone (or checked)."""
    from tpuwizard.core.cloud.diagnose import Context
    from tpuwizard.event_text import teardown_lines

    command = click.get_current_context().info_name or "teardown"  # said back as it was typed
    if bool(name) == everything and not (command == "down" and not name):
        raise BadInput(f"Name one resource (tpuwizard {command} NAME) or use --all.")
    session = open_session(project, sandbox)
    if not name and not everything:
        name = _only_kept_node(session)
    recorded = [r for r in session.recorded(name) if zone in (None, r.zone)] if name else []
    theirs: list[Billable] = []
    unchecked: list[Unchecked] = []
    if len(recorded) == 1:
        # The ledger knows where this install's resource is: act on that record first, so a
        # zone that cannot be surveyed (or a slow survey of all of them) never stands in the way.
        mine = recorded
    else:
        with cloud_errors(Context(project=session.project)):
            found = session.find_leftovers()
        say_skipped(found)
        chosen_mine, theirs, unchecked = select(found, name, everything, zone)
        mine = [b.resource for b in chosen_mine]
        say_unchecked(unchecked)  # each on its own line; everything else is still deleted
        confirm_theirs(theirs, yes, other_owner, command)
    if not mine and not theirs:
        if not unchecked:
            say("Nothing to delete: nothing tpuwizard created exists.")
        if as_json:
            unchecked_data = [u.to_dict() for u in unchecked]
            print_json({"results": [], "unchecked": unchecked_data, "kept": kept_now()})
        if unchecked:
            raise click.exceptions.Exit(EXIT_TEARDOWN)
        return
    listing = ", ".join(f"{r.name} ({r.zone})" for r in mine)
    if mine and not yes:
        if not stdin_is_terminal():
            raise BadInput(f"Would delete {listing}: add --yes to confirm without a terminal.")
        if not ask_yes_no(f"Delete {listing}?"):
            say("Nothing deleted.")  # the user's answer, not a failure: exit 0
            raise click.exceptions.Exit(EXIT_OK)
    results = []
    targets = [(r, False) for r in mine] + [(b.resource, True) for b in theirs]
    for resource, confirmed in targets:
        say(f"Deleting {resource.name} and checking that it is gone...")
        (result,) = session.delete([resource], others_confirmed=confirmed)
        results.append(result)
        for line in teardown_lines(result, session.owner):
            say(line)
    if as_json:
        print_json(
            {
                "results": [result_data(r) for r in results],
                "unchecked": [u.to_dict() for u in unchecked],
                "kept": kept_now(),  # what still bills after this (also said on stderr)
            }
        )
    if unchecked:
        names = ", ".join(f"{u.resource.name} ({u.resource.zone})" for u in unchecked)
        say(f"Not checked, so not verified gone: {names}; see above.")
    if unchecked or not all(r.verified for r in results):
        raise click.exceptions.Exit(EXIT_TEARDOWN)
    say("Nothing tpuwizard deleted is billing any more.")


def _only_kept_node(session: Session) -> str:
    """``down`` without a name: the only kept node (as ``run`` uses it), or why there is none."""
    from tpuwizard.session.kept_lines import node_id

    kept = [node_id(e.resource) for e in session.kept.entries()]
    if len(kept) == 1:
        say(f"The only kept node: {kept[0]}.")
        return kept[0]
    down = "tpuwizard down" + (" --sandbox" if session.practice else "")
    if not kept:
        raise BadInput(
            f"No kept node to end: name what to delete ({down} NAME) or use --all; "
            f"`tpuwizard status{' --sandbox' if session.practice else ''}` lists what exists."
        )
    raise BadInput(
        f"{len(kept)} kept nodes ({', '.join(kept)}): name one ({down} NAME) or use --all."
    )
