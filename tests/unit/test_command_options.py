"""The command line's options, command by command, as they were before the option groups
(issue 53 step 2): each group declares its options and builds its part, and ``--help`` still
lists the same names; and the four launch-like commands' callbacks take at most 12 parameters."""

from __future__ import annotations

import inspect

import click
import pytest

from tpuwizard.cli import main

# Each command's option names and arguments, read from main before the groups landed.
BEFORE: dict[str, tuple[list[str], list[str]]] = {
    "down": (
        ["--all", "--json", "--other-owner", "--project", "--sandbox", "--yes", "--zone"],
        ["name"],
    ),
    "export": (
        [
            "--accelerator",
            "--cluster",
            "--force",
            "--image",
            "--jax",
            "--json",
            "--max-restarts",
            "--max-run",
            "--name",
            "--out",
            "--priority",
            "--project",
            "--queue",
            "--requirements",
            "--reservation",
            "--route",
            "--script",
            "--slices",
            "--to",
            "--with",
            "--zone",
        ],
        ["script_args"],
    ),
    "fit": (
        [
            "--accelerator",
            "--even-if-held",
            "--function",
            "--generation",
            "--jax",
            "--json",
            "--max-chips",
            "--measure",
            "--mesh",
            "--method",
            "--no-cache",
            "--node",
            "--params",
            "--program",
            "--receipt",
            "--recipe",
            "--refresh-prices",
            "--route",
            "--sandbox",
            "--single-host",
            "--slices",
            "--usable",
        ],
        ["size"],
    ),
    "launch": (
        [
            "--accelerator",
            "--autocheckpoint",
            "--backend",
            "--budget",
            "--checkpoint-every",
            "--checkpoints",
            "--delete-kernel",
            "--failover",
            "--fan-out",
            "--fetch",
            "--heartbeat-timeout",
            "--internal-ips",
            "--jax",
            "--join-timeout",
            "--json",
            "--keep",
            "--max-restarts",
            "--max-run",
            "--name",
            "--no-autocheckpoint",
            "--no-preflight",
            "--no-watchdog",
            "--precision",
            "--project",
            "--queue-wait",
            "--ready-timeout",
            "--requirements",
            "--resume-from",
            "--route",
            "--run-dir",
            "--sandbox",
            "--script",
            "--service-account",
            "--stall-timeout",
            "--trace",
            "--transport",
            "--via",
            "--watchdog",
            "--with",
            "--zone",
            "--zones",
        ],
        ["script_args"],
    ),
    "notebook": (["--accelerator", "--force", "--out", "--platform"], []),
    "preflight": (
        [
            "--accelerator",
            "--backend",
            "--internal-ips",
            "--json",
            "--project",
            "--route",
            "--sandbox",
            "--transport",
            "--zone",
        ],
        [],
    ),
    "run": (
        [
            "--checkpoint-every",
            "--checkpoints",
            "--even-if-held",
            "--fetch",
            "--heartbeat-timeout",
            "--join-timeout",
            "--json",
            "--max-restarts",
            "--node",
            "--project",
            "--requirements",
            "--sandbox",
            "--stall-timeout",
            "--wait",
            "--with",
        ],
        ["script", "args"],
    ),
    "ssh": (["--node", "--project", "--sandbox", "--worker"], []),
    "status": (["--json", "--project", "--sandbox"], []),
    "teardown": (
        ["--all", "--json", "--other-owner", "--project", "--sandbox", "--yes", "--zone"],
        ["name"],
    ),
    "up": (
        [
            "--accelerator",
            "--backend",
            "--failover",
            "--fan-out",
            "--idle",
            "--internal-ips",
            "--jax",
            "--json",
            "--max-run",
            "--name",
            "--no-preflight",
            "--no-watchdog",
            "--project",
            "--queue-wait",
            "--ready-timeout",
            "--requirements",
            "--route",
            "--sandbox",
            "--service-account",
            "--transport",
            "--with",
            "--zone",
            "--zones",
        ],
        [],
    ),
    "verify": (
        ["--devices", "--expect", "--perf", "--precision", "--receipt", "--run-dir", "--trace"],
        [],
    ),
    "watch": (
        ["--debounce", "--even-if-held", "--fetch", "--json", "--node", "--project", "--sandbox"],
        ["script", "args"],
    ),
    "zones": (
        [
            "--accelerator",
            "--backend",
            "--json",
            "--live",
            "--offline",
            "--project",
            "--refresh",
            "--refresh-prices",
            "--route",
            "--sandbox",
        ],
        [],
    ),
}


def _command(name: str) -> click.Command:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    return command


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_each_command_takes_the_options_it_took_before_the_groups(name):
    params = _command(name).params
    options = sorted(
        word for p in params if isinstance(p, click.Option) for word in (*p.opts, *p.secondary_opts)
    )
    arguments = [p.name for p in params if isinstance(p, click.Argument)]
    assert (options, arguments) == BEFORE[name]


def test_every_command_is_in_the_table():
    ctx = click.Context(main)
    plain = [n for n in main.list_commands(ctx) if not isinstance(_command(n), click.Group)]
    assert sorted(plain) == sorted(BEFORE)
