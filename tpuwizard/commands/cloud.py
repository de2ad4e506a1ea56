"""The cloud lifecycle: the sandbox and launch (``status`` and ``teardown`` are in cleanup.py)."""

from __future__ import annotations

import functools
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tpuwizard.commands.common import (
    Group,
    Number,
    Whole,
    at_command_end,
    open_session,
    sandbox_option,
    say,
    show_event,
    show_summary,
)
from tpuwizard.commands.options.deadline import deadline_options
from tpuwizard.commands.options.group import Command
from tpuwizard.commands.options.guards import guard_options
from tpuwizard.commands.options.reach import reach_options
from tpuwizard.commands.options.resume import resume_options
from tpuwizard.commands.options.where import where_options
from tpuwizard.commands.options.workload import workload_options
from tpuwizard.commands.preflight import checked_or_exit, no_preflight_option
from tpuwizard.commands.script_args import ScriptArgsCommand, warn_own_options
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from collections.abc import Callable

    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Resume, Where, Workload
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


def free_routes_apart(command: Command) -> Command:
    """``--route kaggle`` and ``--route colab`` take none of a TPU's parts: they run from the
    options as typed, before any group builds its part (so that a TPU route's bad input is
    never theirs), and ``--delete-kernel`` is Kaggle's alone."""

    @functools.wraps(command)
    def routed(**options: Any) -> Any:
        warn_own_options(options["script_args"], "--")
        if options["route"] in (Route.KAGGLE, Route.COLAB):
            return launch_free(**options)
        if options.pop("delete_kernel"):
            raise BadInput(
                "--delete-kernel goes with --route kaggle only: a TPU VM is always deleted."
            )
        return command(**options)

    return click.option(
        "--delete-kernel",
        is_flag=True,
        help="--route kaggle: delete the kernel once its output is back (default: it stays in "
        "your Kaggle account as the run's record; it costs nothing).",
    )(routed)


@click.command(cls=ScriptArgsCommand)
@free_routes_apart
@where_options
@workload_options
@deadline_options
@resume_options
@reach_options
@guard_options
@click.option("--run-dir", type=click.Path(path_type=Path), help="Base folder for run folders.")
@no_preflight_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event per line.")
def launch(
    where: Where,
    workload: Workload,
    deadline: Deadline,
    resume: Resume,
    reach: Reach,
    guards: Guards,
    run_dir: Path | None,
    no_preflight: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Create a TPU, verify JAX on it, run your script, copy results back, and tear it down."""
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.session.prices import PricesBeside
    from tpuwizard.session.signals import exit_code

    answers = LaunchAnswers(where, workload, deadline, reach, resume, guards)
    session = open_session(where.project or None, sandbox, run_dir)
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
