"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import functools
import sys

import click

from tpuwizard import __version__
from tpuwizard.commands import (
    cleanup,
    cloud,
    evidence,
    handover,
    iterate,
    planning,
    preflight,
    zones,
)
from tpuwizard.commands.common import Group, say_kept_nodes
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT


@click.group(
    cls=Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="tpuwizard")
@click.option("--sandbox", is_flag=True, help="Practise against the local sandbox.")
@click.option("--plain", is_flag=True, help="Plain prompts instead of the full-screen wizard.")
@click.pass_context
def main(ctx: click.Context, sandbox: bool, plain: bool) -> None:
    """Run a JAX experiment on a Cloud TPU, prove it ran there, and leave nothing billing.

    Without a command, the wizard starts (in a terminal).
    """
    from tpuwizard.session.gone_terminal import drop_output_to_gone_terminals

    # A terminal closed (or a pipe's reader gone) while a command runs costs its lines only:
    # never the stop that deletes what it created, nor the exit code.
    drop_output_to_gone_terminals()
    if ctx.invoked_subcommand is not None:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # Nothing to ask questions on: say so in one line (bad input, exit 2), not the help.
        what = "Plain mode asks questions and needs" if plain else "The wizard needs"
        click.echo(
            f"Error: {what} a terminal; the commands work anywhere (tpuwizard --help lists them).",
            err=True,
        )
        raise click.exceptions.Exit(EXIT_BAD_INPUT)
    if plain:
        from tpuwizard.plain.walk import run_plain

        sys.exit(run_plain(sandbox))
    from tpuwizard.tui.app import run_wizard

    sys.exit(run_wizard(sandbox))


def _then_kept_nodes(command: click.Command) -> click.Command:
    """After the command ends (normally or by its exit code; not on bad input or a crash), one
    line per kept node: it bills until deleted, whatever this command was about."""
    callback = command.callback
    if callback is None or isinstance(command, click.Group):
        return command

    @functools.wraps(callback)
    def wrapped(*args: object, **kwargs: object) -> object:
        ended = False
        try:
            result = callback(*args, **kwargs)
            ended = True
            return result
        except (SystemExit, click.exceptions.Exit):
            ended = True
            raise
        finally:
            if ended:
                say_kept_nodes()

    command.callback = wrapped
    return command


for command in (
    planning.fit,
    zones.zones,
    preflight.preflight,
    evidence.verify,
    evidence.receipt,
    evidence.notebook,
    cloud.sandbox,
    cloud.launch,
    cleanup.status,
    cleanup.teardown,
    iterate.up,
    iterate.run,
    iterate.watch,
    iterate.ssh,
):
    # status shows them itself, checked with the cloud; the sandbox server holds practice ones.
    main.add_command(
        command if command in (cleanup.status, cloud.sandbox) else _then_kept_nodes(command)
    )
# Iterating on a kept node ends with `down`: the same verified teardown under its pair's name.
main.add_command(_then_kept_nodes(cleanup.down), name="down")
# Only writes files: no cloud, no ledger, so no kept-nodes lines after it.
main.add_command(handover.export)
