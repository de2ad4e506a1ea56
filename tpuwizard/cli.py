"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any

import click

from tpuwizard import __version__
from tpuwizard.commands.common import Group, say_kept_nodes
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


class LazyGroup(Group):
    """The top-level group: its commands imported by name when first asked for (see COMMANDS).
    They are kept apart from ``commands`` so that a tool reading that dict (mkdocs-click) asks
    :meth:`list_commands` and :meth:`get_command` for all of them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if cmd_name not in self._loaded:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"tpuwizard.commands.{module}"), attribute)
            if cmd_name not in WITHOUT_KEPT_LINES:
                command = _then_kept_nodes(command)
            self._loaded[cmd_name] = command
        return self._loaded[cmd_name]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as err:
            # click (8.4 on) suggests a close name from ``commands``, which holds none of ours.
            name = getattr(err, "command_name", None)  # only click's NoSuchCommand has it
            if name is None:
                raise
            names = self.list_commands(ctx)
            raise click.exceptions.NoSuchCommand(name, possibilities=names, ctx=ctx) from None


@click.group(
    cls=LazyGroup,
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
