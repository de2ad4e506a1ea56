"""The stall guard's and the join's options, shared by ``launch`` and ``run``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from tpuwizard.commands.common import Number, Whole
from tpuwizard.core.deadlines import HEARTBEAT_TIMEOUT_S, INIT_TIMEOUT_S, STALL_TIMEOUT_MIN

F = TypeVar("F", bound=Callable[..., Any])


def guard_options(command: F) -> F:
    options = [
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
    for option in reversed(options):
        command = option(command)
    return command
