"""The cloud lifecycle: the sandbox and launch (``status`` and ``teardown`` are in cleanup.py)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import (
    READY_TIMEOUT,
    Group,
    Number,
    Whole,
    Words,
    asked_slice,
    at_command_end,
    backend_option,
    open_session,
    project_option,
    queue_wait_option,
    sandbox_option,
    say,
    show_event,
    show_summary,
    transport_option,
)
from tpuwizard.commands.guard_options import guard_options
from tpuwizard.commands.jax_option import jax_option
from tpuwizard.commands.packages import asked_packages, packages_options
from tpuwizard.commands.preflight import checked_or_exit, no_preflight_option
from tpuwizard.commands.resume_options import (
    checkpoint_every_seconds,
    max_restarts_or_default,
    resume_options,
)
from tpuwizard.commands.script_args import ScriptArgsCommand, warn_own_options
from tpuwizard.commands.zone_options import zones_asked, zones_options
from tpuwizard.core.cloud.backends import VIA_AUTO, Backend, Transport, Via
from tpuwizard.core.deadlines import READY_TIMEOUT_S, deadline_bounds_text
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from collections.abc import Callable

    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.session.launch_handle import LaunchHandle
    from tpuwizard.session.prepare.outcomes import Prepared


@click.group(cls=Group)
def sandbox() -> None:
    """The local practice stand-in for the Cloud TPU API."""


@sandbox.command("serve")
@click.option(
    "--port", type=Whole(0, 65535), default=0, help="Port on 127.0.0.1 (default: a free one)."
)
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
    from tpuwizard.session.practice.sandbox import make_foreground_sandbox

    if not 0 <= port <= 65535:
        raise BadInput(f"--port must be 0-65535, not {port}.")
    try:
        server = make_foreground_sandbox(port, faults, delay)
    except OSError as err:
        raise BadInput(
            f"Cannot listen on 127.0.0.1:{port} ({err.strerror}): choose another "
            "--port, or 0 for a free one."
        ) from None
    try:
        # Stopped by Ctrl+C or by a signal alike: either way its nodes' VMs stop with it. Asked
        # for before the lines a user waits on are printed, and SIGINT too: started with it
        # ignored (a script's `&`, a test runner), Python would leave it so.
        for stop_signal in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(stop_signal, _interrupt)
        say("[practice] tpuwizard sandbox: a local stand-in for the Cloud TPU API.")
        say(
            "Point tpuwizard at it by exporting these two lines "
            "(the token is this server's secret):"
        )
        click.echo(f"TPUWIZARD_TPU_ENDPOINT={server.endpoint}")
        click.echo(f"TPUWIZARD_SANDBOX_TOKEN={server.token}")
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


@click.command(cls=ScriptArgsCommand)
@click.option(
    "--accelerator",
    help="TPU type, e.g. v5litepod-4 (required, except with --route kaggle or colab).",
)
@click.option("--zone", help="Zone (default from gcloud config), e.g. us-central1-a.")
@click.option(
    "--route",
    type=Words(Route),
    default="vm",
    show_default=True,
    help="On-demand VM, spot, Flex-start (queued, bounded), kaggle: your script as a private "
    "Kaggle kernel on Kaggle's free TPU, or colab: your script on a Colab TPU runtime through "
    "Google's colab CLI.",
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
@packages_options
@jax_option
@click.option("--keep", is_flag=True, help="Leave the node running at the end (it keeps billing).")
@click.option(
    "--delete-kernel",
    is_flag=True,
    help="--route kaggle: delete the kernel once its output is back (default: it stays in your "
    "Kaggle account as the run's record; it costs nothing).",
)
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
@zones_options
@resume_options
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
    f"(default {READY_TIMEOUT_S:g} on every route; for Flex-start, the wait after --queue-wait).",
)
@click.option(
    "--service-account",
    metavar="EMAIL",
    help="The node's service account (the watchdog deletes with it); default: the project's "
    "Compute Engine default account, which has no roles in organisations made since May 2024.",
)
@backend_option
@queue_wait_option
@click.option(
    "--via",
    type=Words(Via),
    default=VIA_AUTO.value,  # shown as typed ("auto"), not as the enum's name
    show_default=True,
    help="How Compute Engine's Flex-start VM is asked for. auto: one instance for a single-host "
    "type, bulk mode (a BULK MIG, Google's recommendation) for a slice. resize-request: the "
    "course's Route 2B, a FLEX_START template, a MIG of size 0 and a resize request for one VM "
    "(needs --backend compute --route flex; tpuwizard deletes all three).",
)
@guard_options
@no_preflight_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event per line.")
# `launch --script train.py -- --lr 3e-4`: after `--`, the script's own arguments, unchanged.
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- SCRIPT_ARGS...]")
def launch(
    accelerator: str | None,
    zone: str | None,
    route: Route,
    project: str | None,
    name: str | None,
    script: Path | None,
    fetch: tuple[str, ...],
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    jax: str | None,
    keep: bool,
    delete_kernel: bool,
    max_run: float | None,
    watchdog: bool | None,
    failover: bool,
    zones: str | None,
    fan_out: bool,
    checkpoints: str | None,
    checkpoint_every: str,
    max_restarts: int | None,
    autocheckpoint: bool | None,
    budget: float | None,
    resume_from: str | None,
    precision: bool,
    trace: bool,
    transport: Transport,
    internal_ips: bool,
    run_dir: Path | None,
    ready_timeout: float | None,
    service_account: str | None,
    backend: Backend,
    queue_wait: float | None,
    via: Via,
    stall_timeout: float | None,
    join_timeout: int | None,
    heartbeat_timeout: int | None,
    no_preflight: bool,
    sandbox: bool,
    as_json: bool,
    script_args: tuple[str, ...],
) -> None:
    """Create a TPU, verify JAX on it, run your script, copy results back, and tear it down."""
    from tpuwizard.session.prices import PricesBeside
    from tpuwizard.session.signals import exit_code

    warn_own_options(script_args, "--")
    options = click.get_current_context().params
    if route in (Route.KAGGLE, Route.COLAB):
        launch_free(**options)
        return
    if delete_kernel:
        raise BadInput("--delete-kernel goes with --route kaggle only: a TPU VM is always deleted.")
    answers = launch_answers(**options)
    session = open_session(project, sandbox, run_dir)
    # The cached catalog read's prices, or the offline table's (labelled), from the first line;
    # the catalog's for every figure after a cold read lands beside the launch.
    prices = PricesBeside(session)
    click.get_current_context().call_on_close(prices.finish)  # none lands after the command
    # Every rule before any call (exit 2 with all of them), then the checks before create (a
    # FAIL exits 3, nothing created; auto may move to Compute Engine), then the watchdog.
    prepared = session.prepare(answers, preflight=not no_preflight, prices=prices)
    checked = checked_or_exit(prepared, as_json)
    for line in before_create_notes(prepared, checked):
        (say if as_json else click.echo)(line)
    handle = session.start_launch(checked)
    received, code = follow_launch(handle, as_json, prices.finish)
    sys.exit(exit_code(received, code))


def launch_free(
    *,
    route: Route,
    accelerator: str | None,
    zone: str | None,
    script: Path | None,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    keep: bool,
    checkpoints: str | None,
    delete_kernel: bool,
    max_run: float | None,
    run_dir: Path | None,
    sandbox: bool,
    as_json: bool,
    **_tpu_options: object,
) -> None:
    """``--route kaggle`` or ``--route colab``: the script on a free platform's TPU; the TPU
    routes' options given with it are bad input."""
    if route == Route.KAGGLE:
        from tpuwizard.commands.kaggle_launch import launch_on_kaggle

        refused = {"--keep": keep, "--zone": zone is not None, "--checkpoints": bool(checkpoints)}
        launch_on_kaggle(
            accelerator,
            script,
            script_args,
            fetch,
            max_run,
            run_dir,
            sandbox,
            as_json,
            refused,
            delete_kernel,
            with_specs,
            requirements,
        )
        return
    from tpuwizard.commands.colab_launch import launch_on_colab
    from tpuwizard.session.free.packages import takes_packages

    packages_asked = bool(with_specs or requirements)
    refused = {
        "--accelerator": accelerator is not None,
        "--zone": zone is not None,
        "--keep": keep,
        "--checkpoints": bool(checkpoints),
        "--delete-kernel": delete_kernel,
        "--with/--requirements": packages_asked and not takes_packages(route),
    }
    launch_on_colab(script, script_args, fetch, max_run, run_dir, sandbox, as_json, refused)


def launch_answers(
    *,
    accelerator: str | None,
    zone: str | None,
    zones: str | None,
    route: Route,
    project: str | None,
    name: str | None,
    script: Path | None,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    jax: str | None,
    keep: bool,
    max_run: float | None,
    watchdog: bool | None,
    failover: bool,
    fan_out: bool,
    checkpoints: str | None,
    checkpoint_every: str,
    max_restarts: int | None,
    autocheckpoint: bool | None,
    budget: float | None,
    resume_from: str | None,
    precision: bool,
    trace: bool,
    transport: Transport,
    internal_ips: bool,
    ready_timeout: float | None,
    service_account: str | None,
    backend: Backend,
    queue_wait: float | None,
    via: Via,
    stall_timeout: float | None,
    join_timeout: int | None,
    heartbeat_timeout: int | None,
    **_command_options: object,
) -> LaunchAnswers:
    """launch's options as the answers the session's pipeline takes, each parsed here once
    (the command line's edge): exit 2 for what cannot be read."""
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Resume, Where, Workload

    if accelerator is None:
        raise BadInput("Missing option '--accelerator' (a TPU type, e.g. v5litepod-4).")
    zone, zone_list = zones_asked(zone, zones)
    return LaunchAnswers(
        where=Where(
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
        ),
        workload=Workload(
            script,
            script_args,
            fetch,
            asked_packages(with_specs, requirements, script),
            jax,
            precision,
            trace,
        ),
        deadline=Deadline(
            max_run,
            watchdog,
            queue_wait_minutes=queue_wait,
            ready_timeout_s=ready_timeout,
            keep=keep,
        ),
        resume=Resume(
            checkpoints,
            checkpoint_every_seconds(checkpoint_every),
            max_restarts_or_default(max_restarts),
            budget,
            resume_from,
            autocheckpoint,
        ),
        reach=Reach(transport, internal_ips, service_account),
        guards=Guards(stall_timeout, join_timeout, heartbeat_timeout),
    )


def before_create_notes(prepared: Prepared, checked: CheckedPlan) -> list[str]:
    """What launch says before its create: the backend and why (as preflight says it), what
    comes back, Autocheckpoint's note, how the backend treats the plan, the watchdog and the
    deadline."""
    from tpuwizard.words.course_text import autocheckpoint_note, fetch_note

    plan = checked.plan
    notes = [f"Backend: {checked.backend.reason}"] if checked.backend.reason else []
    notes += [note] if (note := fetch_note(plan.workload.fetch)) else []
    notes += [autocheckpoint_note(plan.resume)] if plan.autocheckpoint_on else []
    notes += prepared.notes
    return notes + (prepared.watchdog.lines() if prepared.watchdog is not None else [])


def follow_launch(
    handle: LaunchHandle, as_json: bool, priced: Callable[[], None]
) -> tuple[list[int], int]:
    """Each event said as it comes (its Finished last), then the summary (``priced`` first: it
    names the prices its figures were priced at). A stop signal before the hand-over deletes
    what --keep kept as it landed; one after it keeps the node, and the summary still comes.
    Returns the stop signals received and the launch's exit code."""
    from tpuwizard.core.launch.events.launch_events import Finished, Kept
    from tpuwizard.session.signals import stop_on_signals
    from tpuwizard.words.event_text import handed_over_stop_words

    code = EXIT_CLOUD
    hold = at_command_end()
    with stop_on_signals(handle, say, handed_over_stop_words, hold) as received:
        for event in handle.events():
            if isinstance(event, Kept) and handle.handed_over is not event:
                continue  # a stop came first: not kept (deleted below)
            if not isinstance(event, Finished):  # said last: a stop may yet delete what --keep kept
                show_event(event, as_json)
        # --keep hands the node over with its Kept event: a stop before it deletes, as during
        # the launch and as `up`'s does, so "deleting what this run created" holds.
        for event in handle.delete_kept_after_stop():
            if not isinstance(event, Finished):
                show_event(event, as_json)
        handle.settle_stop_after_hand_over()
        if handle.finished is not None:
            show_event(handle.finished, as_json)
            code = handle.finished.exit_code
        priced()
        handle.settle_stop_after_hand_over()  # one that landed meanwhile: the summary says it
        show_summary(handle.summary, as_json, [k.name for k in handle.summary.kept])
    return received, code
