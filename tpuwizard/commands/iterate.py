"""Create once, iterate, tear down at the end: ``up``, ``run``, ``watch`` and ``ssh``.

``down`` is ``teardown`` under its iterating name (cli.py registers it). Everything here reaches
the kept node through the session (``session.kept``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import (
    Number,
    Whole,
    at_command_end,
    check_script,
    cloud_errors,
    kept_said,
    open_session,
    project_option,
    sandbox_option,
    say,
    show_event,
)
from tpuwizard.commands.kept_nodes import delete_kept, open_kept
from tpuwizard.commands.kept_nodes import offer_teardown as _offer_teardown
from tpuwizard.commands.options.deadline import up_deadline_options
from tpuwizard.commands.options.guards import guard_options
from tpuwizard.commands.options.packages import asked_packages, check_packages, packages_options
from tpuwizard.commands.options.reach import up_reach_options
from tpuwizard.commands.options.resume import checkpoint_options, run_checkpoints
from tpuwizard.commands.options.where import up_where_options
from tpuwizard.commands.options.workload import up_workload_options
from tpuwizard.commands.preflight import checked_or_exit, no_preflight_option
from tpuwizard.commands.script_args import ScriptArgsCommand, warn_own_options
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK, EXIT_TEARDOWN, for_signal
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Where, Workload

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.launch.plan.packages import PackageSpec
    from tpuwizard.core.remote.sync import LocalFolder
    from tpuwizard.session.kept.nodes import KeptNode
    from tpuwizard.session.kept.resume import CheckpointsAsked
    from tpuwizard.session.launch_handle import LaunchHandle
    from tpuwizard.session.session import Session

node_option = click.option("--node", help="The kept node (optional when exactly one is kept).")
# tpuwizard's options come before SCRIPT; everything after it is the script's own, unchanged
# (`run train.py --help --fetch x` gives the script both), so no later option of tpuwizard
# can ever swallow a flag of the script's.
SCRIPT_LAST = {"allow_interspersed_args": False}


@click.command()
@up_where_options
@up_deadline_options
@up_reach_options
@up_workload_options
@no_preflight_option
@sandbox_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per event per line, as launch --json; the last is the kept node's.",
)
def up(
    where: Where,
    deadline: Deadline,
    reach: Reach,
    workload: Workload,
    no_preflight: bool,
    sandbox: bool,
    as_json: bool,
) -> None:
    """Create a TPU, set it up and verify it once, and keep it for `tpuwizard run`."""
    import json

    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.session.prices import PricesBeside
    from tpuwizard.words.event_text import json_event

    answers = LaunchAnswers(where, workload, deadline, reach)
    session = open_session(where.project or None, sandbox)
    prices = PricesBeside(session)  # as launch's: the cached read's or the offline table's now
    click.get_current_context().call_on_close(prices.finish)  # none lands after the command
    # Every rule before any call (exit 2); the checks before create (a FAIL exits 3; auto may
    # move to Compute Engine, then without --idle); a node nothing would delete: exit 2.
    prepared = session.prepare(answers, preflight=not no_preflight, prices=prices)
    checked = checked_or_exit(prepared, as_json)
    for line in prepared.notes:
        say(line)
    kept, unrecorded, stopped = keep_when_up(session, session.start_launch(checked), as_json)
    if as_json:  # the node is handed over: its Kept event is the stream's last line
        click.echo(json.dumps(json_event(kept)))
    if stopped is not None:  # a stop signal after the hand-over: kept, and 128 + N
        sys.exit(stopped)
    if unrecorded:
        sys.exit(EXIT_TEARDOWN)


def keep_when_up(
    session: Session, handle: LaunchHandle, as_json: bool
) -> tuple[ev.Kept, bool, int | None]:
    """Follow up's launch to its kept node and hand it over: its first heartbeat, and the lines
    that say how to use it and how it ends. The hand-over is the launch's Kept event
    (``handle.handed_over``): a launch that did not keep it, or a stop signal before it,
    deletes what it made and exits; a stop after it keeps the node, says so, and the lines
    still come before the exit (128 + N). Returns its Kept event, whether the disk refused its
    kept record (kept all the same: said, exit 4), and the code a stop signal after the
    hand-over ends the command with (None: none came)."""
    from tpuwizard.session.signals import exit_code, stop_on_signals
    from tpuwizard.words.event_text import handed_over_stop_words

    plan = handle.plan
    hold = at_command_end()
    with stop_on_signals(handle, say, handed_over_stop_words, hold) as received:
        unrecorded, code = _up_events(handle, as_json)
        handed = handle.handed_over
        if handed is None:  # not kept, or a stop came first: nothing of it may stay
            delete_kept(session, plan.node_name, plan.run_id)
            sys.exit(exit_code(received, code if code != EXIT_OK else EXIT_FAILED))
        if not received and not unrecorded:  # (a refusing disk: no beat's book)
            kept_node = open_kept(session, plan.node_name)  # preempted already: deleted, said
            with cloud_errors():
                kept_node.heartbeat()  # the idle time counts from now
        kept_said(handed.node or handed.name)  # its Kept line said how it ends and what ends it
        for line in _kept_lines(plan, session.practice, unrecorded):
            say(line)
    # A stop after the hand-over: kept, said; the command exits 128 + N once it has said all.
    return handed, unrecorded, exit_code(received, code) if received else None


def _up_events(handle: LaunchHandle, as_json: bool) -> tuple[bool, int]:
    """Each event said as it comes (Kept's JSON line waits for the hand-over; a Kept a stop
    came before is not said: it is deleted); a watchdog that could not be armed deletes the
    node. Returns whether the disk refused its kept record, and the launch's exit code."""
    from tpuwizard.core.launch.events import launch_events as ev

    unrecorded = False  # the disk refused its kept record: kept all the same, said, exit 4
    code = EXIT_CLOUD
    for event in handle.events():
        if isinstance(event, ev.Kept) and handle.handed_over is not event:
            continue  # a stop came first: not handed over, deleted after the stream
        # Kept's JSON line is the last one, printed once the node is handed over.
        show_event(event, as_json and not isinstance(event, ev.Kept), result=False)
        if isinstance(event, ev.Watchdog) and not event.armed:
            say("Refusing to keep a node that nothing would delete: deleting it now.")
            say("(Give --no-watchdog to keep it anyway; then only `tpuwizard down` ends it.)")
            handle.delete_now("the idle-deadline watchdog could not be armed")
        elif isinstance(event, ev.LedgerRecordHeld) and event.op == "kept":
            unrecorded = True
        elif isinstance(event, ev.Finished):
            code = event.exit_code
    return unrecorded, code


def _kept_lines(plan: LaunchPlan, practice: bool, unrecorded: bool) -> list[str]:
    """How to use the kept node. How it ends and the command that ends it were said once, in
    its Kept line (words/kept_end.py), and are not said again here."""
    sandbox_flag = " --sandbox" if practice else ""
    script = next_script(Path.cwd())
    lines = [
        f"\n{plan.node_name} is up and kept.",
        f"  run your script:  tpuwizard run{sandbox_flag} {script}",
        f"  re-run on save:   tpuwizard watch{sandbox_flag} {script}",
    ]
    if plan.where.resumes:
        lines.append(
            f"  survive preemption: tpuwizard run{sandbox_flag} --checkpoints DIR {script}"
        )
    if unrecorded:
        lines.append(f"  Its record is not in the ledger (said above): exit {EXIT_TEARDOWN}.")
    return lines


def next_script(folder: Path) -> str:
    """The script a next step names: one that is in ``folder`` (train.py, main.py, or its only
    Python file), else ``SCRIPT`` for the user to fill in."""
    try:
        found = sorted(p.name for p in folder.glob("*.py") if p.is_file())
    except OSError:  # an unreadable folder: name none
        return "SCRIPT"
    for usual in ("train.py", "main.py"):
        if usual in found:
            return usual
    return found[0] if len(found) == 1 else "SCRIPT"


def _run_once(
    kept: KeptNode,
    script: Path,
    args: tuple[str, ...],
    fetch: tuple[str, ...],
    folder: LocalFolder,
    cancel: CancelToken,
    as_json: bool,
    wait: bool = False,
    packages: tuple[PackageSpec, ...] = (),
    checkpoints: CheckpointsAsked | None = None,
    guards: Guards | None = None,
    even_if_held: bool = False,
) -> int:
    """One run on the kept node, its events shown as launch's are; returns its exit code."""
    from tpuwizard.core.cancel import Cancelled
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.kept.iterate import EXIT_STOPPED
    from tpuwizard.core.launch.kept.run_lock import NodeBusy
    from tpuwizard.core.launch.workers.held_chip import ChipHeld
    from tpuwizard.words.held_chip_text import chip_held_lines

    def show(event: ev.Event) -> None:  # the script's own lines are the result, on stdout
        show_event(event, as_json, result=isinstance(event, ev.ScriptLine))

    try:
        with cloud_errors(passes=(NodeBusy, ChipHeld, Cancelled)):
            return kept.run(
                script,
                args,
                fetch,
                folder,
                show,
                cancel,
                wait,
                packages,
                checkpoints,
                guards,
                even_if_held,
            )
    except NodeBusy as busy:  # nothing was copied or started: the other run goes on
        say(str(busy))
        return EXIT_FAILED
    except ChipHeld as held:  # nothing was copied or started: as a busy node, exit 1
        for line in chip_held_lines(held):
            say(line)
        return EXIT_FAILED
    except Cancelled:  # stopped while waiting for the node: nothing was started
        return cancel.exit_code or EXIT_STOPPED


@click.command(cls=ScriptArgsCommand, context_settings=SCRIPT_LAST)
@node_option
@click.option("--fetch", multiple=True, help="Glob of files to copy back into runs/<id>/files/.")
@click.option(
    "--wait", is_flag=True, help="If another run is using the node, wait for it to end first."
)
@click.option(
    "--even-if-held",
    is_flag=True,
    help="Run even when a process tpuwizard did not start holds the node's TPU (your script may "
    "then fail to start JAX). One an earlier run of tpuwizard's left is ended either way.",
)
@packages_options
@checkpoint_options
@guard_options
@project_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    node: str | None,
    fetch: tuple[str, ...],
    wait: bool,
    even_if_held: bool,
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    checkpoints: str | None,
    checkpoint_every: str,
    max_restarts: int | None,
    guards: Guards,
    project: str | None,
    sandbox: bool,
    as_json: bool,
    script: Path,
    args: tuple[str, ...],
) -> None:
    """Copy what changed in SCRIPT's folder to the kept node and run it on every worker; with
    --checkpoints (a spot node), survive its preemption on a new one."""
    from tpuwizard.core.remote.sync import LocalFolder
    from tpuwizard.session.signals import StopScriptOnSignals
    from tpuwizard.words.course_text import fetch_note

    check_script(script)
    warn_own_options(args, str(script))
    resume = run_checkpoints(checkpoints, checkpoint_every, max_restarts)
    if note := fetch_note(fetch):
        say(note)
    packages = asked_packages(with_specs, requirements, script)
    check_packages(packages)  # a jax line is refused before the node is touched
    session = open_session(project, sandbox)
    kept = open_kept(session, node)
    if note := kept.check_packages(packages):  # refused: exit 2, nothing copied
        say(note)
    with StopScriptOnSignals(say) as stop:
        folder = LocalFolder.of_script(script)
        code = stop.exit_code(
            _run_once(
                kept,
                script,
                args,
                fetch,
                folder,
                stop.token,
                as_json,
                wait,
                packages,
                resume,
                guards,
                even_if_held,
            )
        )
    sys.exit(code)  # then cli.py says what each kept node has cost and when it deletes itself


@click.command(cls=ScriptArgsCommand, context_settings=SCRIPT_LAST)
@node_option
@click.option("--fetch", multiple=True, help="Glob of files to copy back into runs/<id>/files/.")
@click.option(
    "--debounce",
    type=Number(0, 10, unit="seconds"),
    default=0.3,
    show_default=True,
    help="Seconds of quiet.",
)
@click.option(
    "--even-if-held",
    is_flag=True,
    help="Run even when a process tpuwizard did not start holds the node's TPU (your script may "
    "then fail to start JAX). One an earlier run of tpuwizard's left is ended either way.",
)
@project_option
@sandbox_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per event per line.")
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def watch(
    node: str | None,
    fetch: tuple[str, ...],
    debounce: float,
    even_if_held: bool,
    project: str | None,
    sandbox: bool,
    as_json: bool,
    script: Path,
    args: tuple[str, ...],
) -> None:
    """Run SCRIPT on the kept node now and again each time a file in its folder is saved."""
    from tpuwizard.commands.watching import watch_loop

    check_script(script)
    warn_own_options(args, str(script))
    session = open_session(project, sandbox)
    kept = open_kept(session, node)
    ended_by = watch_loop(
        kept,
        script,
        # A save while another command runs on the node waits for it rather than failing; a
        # held chip refuses that run only: the watch goes on, and the next save checks again.
        lambda folder, token: _run_once(
            kept, script, args, fetch, folder, token, as_json, True, even_if_held=even_if_held
        ),
        debounce,
    )
    import signal

    _offer_teardown(session, kept.name, ask=ended_by != signal.SIGHUP)
    if ended_by is not None:
        sys.exit(for_signal(ended_by))  # ended by a signal, as every command says it


@click.command()
@node_option
@click.option("--worker", type=Whole(), default=0, show_default=True, help="Which VM of the slice.")
@project_option
@sandbox_option
def ssh(node: str | None, worker: int, project: str | None, sandbox: bool) -> None:
    """An interactive shell on a worker of the kept node (heartbeats while it is open)."""
    import subprocess

    from tpuwizard.session.signals import StopSignals

    kept = open_kept(open_session(project, sandbox), node)
    argv, cwd, env = kept.shell_command(worker)
    say(f"Shell on {kept.name} worker {worker}; exit to come back. The node keeps running.")
    shell: list[subprocess.Popen[bytes]] = []  # the one shell, once started

    def end_shell(_signum: int) -> None:  # a stop signal (a closed terminal): the shell ends
        for proc in shell:
            proc.terminate()

    ending = StopSignals(say, "ending the shell (the node stays).", end_shell)
    with cloud_errors(), kept.keep_alive(say), ending as stop:
        shell.append(subprocess.Popen(argv, cwd=cwd, env=env))
        if stop.first is not None:  # the stop came as the shell started
            end_shell(stop.first)
        code = shell[0].wait()
    sys.exit(stop.exit_code(code))  # the shell's own exit status (then cli.py: the kept nodes)
