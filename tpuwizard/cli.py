"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import functools
import importlib
import sys

import click

from tpuwizard import __version__
from tpuwizard.commands.common import LazyGroup, say_kept_nodes
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT

# Each command by name: (its module under tpuwizard.commands, its attribute). A command's module
# is imported when that command runs, or when help lists them all, so that a start pays for its
# own command alone (`fit 48 --json` never loads launch's options, the wizard none of them).
COMMANDS: dict[str, tuple[str, str]] = {
    "fit": ("planning", "fit"),
    "zones": ("zones", "zones"),
    "preflight": ("preflight", "preflight"),
    "verify": ("evidence", "verify"),
    "receipt": ("evidence", "receipt"),
    "notebook": ("evidence", "notebook"),
    "sandbox": ("cloud", "sandbox"),
    "launch": ("cloud", "launch"),
    "status": ("cleanup", "status"),
    "teardown": ("cleanup", "teardown"),
    # Iterating on a kept node ends with `down`: the same verified teardown under its pair's name.
    "down": ("cleanup", "down"),
    "up": ("iterate", "up"),
    "run": ("iterate", "run"),
    "watch": ("iterate", "watch"),
    "ssh": ("iterate", "ssh"),
    "export": ("handover", "export"),
}
# No kept-nodes lines after these: status shows them itself, checked with the cloud; the sandbox
# server holds practice ones; export only writes files (no cloud, no ledger).
WITHOUT_KEPT_LINES = frozenset({"status", "sandbox", "export"})


def _load(name: str) -> click.Command:
    """A top-level command, imported by name (see COMMANDS), with its kept-node lines."""
    module, attribute = COMMANDS[name]
    command = getattr(importlib.import_module(f"tpuwizard.commands.{module}"), attribute)
    return command if name in WITHOUT_KEPT_LINES else _then_kept_nodes(command)


@click.group(
    cls=LazyGroup,
    lazy=(tuple(COMMANDS), _load),
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="tpuwizard")
@click.option("--sandbox", is_flag=True, help="Practise against the local sandbox.")
@click.option("--plain", is_flag=True, help="Plain prompts instead of the full-screen wizard.")
@click.pass_context
def main(ctx: click.Context, sandbox: bool, plain: bool) -> None:
    """Run a JAX experiment on a Cloud TPU, prove it ran there, and leave nothing billing.

    Without a command, the wizard starts (in a terminal).
    """
    from tpuwizard.session.collector import collect_from_here
    from tpuwizard.session.gone_terminal import drop_output_to_gone_terminals

    collect_from_here()  # the command's module is loaded by now (click resolves it first)
    # A terminal closed (or a pipe's reader gone) while a command runs costs its lines only:
    # never the stop that deletes what it created, nor the exit code.
    drop_output_to_gone_terminals()
    if ctx.invoked_subcommand is not None:
        if sandbox:  # `tpuwizard --sandbox launch ...` is the command's own --sandbox
            ctx.default_map = {ctx.invoked_subcommand: {"sandbox": True}}
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
