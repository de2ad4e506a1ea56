"""The ``tpuwizard`` command line. Every command imports what it needs when it runs, so start-up
stays fast: ``tpuwizard fit`` never loads jax, grpc, google.cloud or textual."""

from __future__ import annotations

import click

from tpuwizard import __version__
from tpuwizard.commands import cloud, evidence, planning
from tpuwizard.commands.common import Group


@click.group(
    cls=Group, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="tpuwizard")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run a JAX experiment on a Cloud TPU, prove it ran there, and leave nothing billing."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


for command in (
    planning.fit,
    planning.zones,
    evidence.verify,
    evidence.receipt,
    evidence.notebook,
    cloud.sandbox,
    cloud.launch,
    cloud.status,
    cloud.teardown,
):
    main.add_command(command)
