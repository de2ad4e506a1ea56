"""The guards' options (the stall guard, the join's and the heartbeat's timeouts), shared by
``launch`` and ``run``: the group hands the command its ``Guards`` part as ``guards``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import Number, Whole
from tpuwizard.commands.options.group import option_group
from tpuwizard.core.deadlines import HEARTBEAT_TIMEOUT_S, INIT_TIMEOUT_S, STALL_TIMEOUT_MIN

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Guards


def asked_guards(
    stall_timeout: float | None, join_timeout: int | None, heartbeat_timeout: int | None
) -> Guards:
    """The part as asked; guard_rules.py says which values a plan refuses."""
    from tpuwizard.core.launch.plan.parts import Guards

    return Guards(stall_timeout, join_timeout, heartbeat_timeout)


GUARD_OPTIONS = [
    click.option(
        "--stall-timeout",
        type=Number(0, 7 * 24 * 60, unit="minutes"),
        help="End the run when a worker has printed nothing and its processes have used no "
        f"CPU time for this many minutes (default {STALL_TIMEOUT_MIN}; 0: never). It then "
        "shows each worker's last lines and Python stack; a launch deletes its node, a kept "
        "node is kept.",
    ),
    click.option(
        "--join-timeout",
        type=Whole(1, 7 * 24 * 3600),
        help="Seconds jax.distributed.initialize() waits for every worker to join, given "
        f"where your script passes none (default {INIT_TIMEOUT_S}; JAX's own is 300).",
    ),
    click.option(
        "--heartbeat-timeout",
        type=Whole(1, 7 * 24 * 3600),
        help="Seconds without a worker's heartbeat before JAX ends the slice, given where "
        f"your script passes none (default {HEARTBEAT_TIMEOUT_S}; JAX's own is 100).",
    ),
]
guard_options = option_group("guards", GUARD_OPTIONS, asked_guards)
