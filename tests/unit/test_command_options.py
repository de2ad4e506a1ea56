"""The command line's options, command by command, as they were before the option groups
(issue 53 step 2): each group declares its options and builds its part, and ``--help`` still
lists the same names; and the four launch-like commands' callbacks take at most 12 parameters."""

from __future__ import annotations

import inspect
import re

import click
import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.commands.options.deadline import deadline_options, up_deadline_options
from tpuwizard.commands.options.guards import guard_options
from tpuwizard.commands.options.reach import reach_options, up_reach_options
from tpuwizard.commands.options.resume import resume_options
from tpuwizard.commands.options.where import up_where_options, where_options
from tpuwizard.commands.options.workload import up_workload_options, workload_options
from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Resume, Where, Workload
from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import Route

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


@pytest.mark.parametrize("name", ["launch", "up", "fit", "export"])
def test_the_launch_like_commands_take_at_most_twelve_parameters(name):
    # Each option group hands its part as one parameter (issue 53): the callback click calls
    # wraps the command's own function, whose parameters are the parts and the command's own.
    callback = _command(name).callback
    assert callback is not None
    assert len(inspect.signature(callback).parameters) <= 12


def _handed(group, *args: str) -> object:
    """The part ``group`` hands a command given ``args``."""
    seen: list[object] = []

    @click.command()
    @group
    def command(**parts: object) -> None:
        (part,) = parts.values()
        seen.append(part)

    result = CliRunner().invoke(command, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


V5E_4 = catalog.parse_accelerator("v5litepod-4")


@pytest.mark.parametrize(
    ("group", "args", "part"),
    [
        (where_options, ["--accelerator", "v5litepod-4"], Where(V5E_4)),
        (
            where_options,
            ["--accelerator", "v5litepod-4", "--zones", "a-b1-c, d-e2-f", "--fan-out"],
            Where(V5E_4, zones=("a-b1-c", "d-e2-f"), fan_out=True),
        ),
        (
            where_options,
            [
                "--accelerator",
                "v5litepod-4",
                "--route",
                "flex",
                "--backend",
                "compute",
                "--via",
                "resize-request",
                "--project",
                "my-project",
                "--name",
                "n1",
            ],
            Where(
                V5E_4,
                project="my-project",
                route=Route.FLEX,
                backend=Backend.COMPUTE,
                name="n1",
                via=Via.RESIZE_REQUEST,
            ),
        ),
        (
            up_where_options,
            ["--accelerator", "v5litepod-4", "--failover"],
            Where(V5E_4, failover=True),
        ),
        (
            deadline_options,
            ["--keep", "--max-run", "30", "--no-watchdog"],
            Deadline(30.0, False, keep=True),
        ),
        (up_deadline_options, [], Deadline(ready_timeout_s=1800, keep=True, iterate=True)),
        (
            up_deadline_options,
            ["--no-watchdog", "--idle", "5"],
            Deadline(
                watchdog=False, idle_minutes=5.0, ready_timeout_s=1800, keep=True, iterate=True
            ),
        ),
        (reach_options, ["--transport", "gcloud", "--internal-ips"], Reach(Transport.GCLOUD, True)),
        (up_reach_options, ["--service-account", "a@b.c"], Reach(service_account="a@b.c")),
        (resume_options, ["--checkpoints", "ck", "--checkpoint-every", "30s"], Resume("ck", 30.0)),
        (
            resume_options,
            ["--max-restarts", "0", "--budget", "2.5", "--no-autocheckpoint"],
            Resume(max_restarts=0, budget_usd=2.5, autocheckpoint=False),
        ),
        (guard_options, ["--stall-timeout", "0", "--join-timeout", "60"], Guards(0.0, 60)),
        (
            workload_options,
            ["--precision", "--fetch", "out/*", "--jax", "0.4.35", "--", "-v"],
            Workload(None, ("-v",), ("out/*",), (), "0.4.35", precision=True),
        ),
        (
            up_workload_options,
            ["--with", "optax"],
            Workload(packages=(PackageSpec("optax", "--with"),)),
        ),
    ],
)
def test_each_group_hands_its_part_parsed(group, args, part):
    assert _handed(group, *args) == part


@pytest.mark.parametrize(
    ("group", "args", "words"),
    [
        (where_options, [], "Missing option '--accelerator'"),
        (where_options, ["--accelerator", "v5litepod-3"], "v5litepod-3"),
        (
            where_options,
            ["--accelerator", "v5litepod-4", "--zone", "a", "--zones", "b"],
            "Give either --zone",
        ),
        (resume_options, ["--checkpoint-every", "soon"], "soon"),
    ],
)
def test_a_group_refuses_what_it_cannot_read(group, args, words):
    with pytest.raises(BadInput, match=re.escape(words)):
        _handed(group, *args)
