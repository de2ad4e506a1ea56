"""When and how ``launch``'s and ``up``'s node ends: its deadline, the on-VM watchdog, a kept
node's idle deadline, the waits for capacity and for READY, and the keep; the groups hand the
command its ``Deadline`` part as ``deadline``. deadline_rules.py checks the values."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import READY_TIMEOUT, Number, queue_wait_option
from tpuwizard.commands.options.group import option_group
from tpuwizard.core.deadlines import READY_TIMEOUT_S, deadline_bounds_text

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Deadline


def asked_deadline(
    keep: bool,
    max_run: float | None,
    watchdog: bool | None,
    ready_timeout: float | None,
    queue_wait: float | None,
) -> Deadline:
    """launch's part as asked: None leaves each to the route's default."""
    from tpuwizard.core.launch.plan.parts import Deadline

    return Deadline(
        max_run, watchdog, queue_wait_minutes=queue_wait, ready_timeout_s=ready_timeout, keep=keep
    )


def up_deadline(
    idle: float | None,
    max_run: float | None,
    no_watchdog: bool,
    ready_timeout: float,
    queue_wait: float | None,
) -> Deadline:
    """up's part as asked: a node kept for runs, its watchdog on unless --no-watchdog (the
    pipeline's defaults give it 30 idle minutes where a watchdog keeps it, and none where
    Google's deadline is the only one)."""
    from tpuwizard.core.launch.plan.parts import Deadline

    return Deadline(
        max_run,
        watchdog=False if no_watchdog else None,
        idle_minutes=idle,
        queue_wait_minutes=queue_wait,
        ready_timeout_s=ready_timeout,
        keep=True,
        iterate=True,
    )


deadline_options = option_group(
    "deadline",
    [
        click.option(
            "--keep", is_flag=True, help="Leave the node running at the end (it keeps billing)."
        ),
        click.option(
            "--max-run",
            type=Number(unit="minutes"),
            help=f"Deadline in minutes, {deadline_bounds_text()} (Flex-start's maxRunDuration; "
            "the watchdog's deadline).",
        ),
        click.option(
            "--watchdog/--no-watchdog",
            default=None,
            help="vm/spot: a process on the VM deletes it at the deadline, even if this computer "
            "is off. Default: on where a check before create says it can run. --watchdog: on, "
            "and exit 2 if the check says it cannot.",
        ),
        click.option(
            "--ready-timeout",
            type=READY_TIMEOUT,
            help="Seconds to wait for the node (or queued resource) to be ready "
            f"(default {READY_TIMEOUT_S:g} on every route; for Flex-start, the wait after "
            "--queue-wait).",
        ),
        queue_wait_option,
    ],
    asked_deadline,
)
up_deadline_options = option_group(
    "deadline",
    [
        click.option(
            "--idle",
            type=Number(unit="minutes"),
            help="Minutes without a run, watch, ssh or open wizard before the node deletes "
            f"itself ({deadline_bounds_text()}; default 30). The on-VM watchdog enforces it: not "
            "on Flex-start or Compute Engine, whose deadline is Google's (--max-run).",
        ),
        click.option(
            "--max-run",
            type=Number(unit="minutes"),
            help=f"Minutes until it deletes itself regardless ({deadline_bounds_text()}).",
        ),
        click.option(
            "--no-watchdog",
            is_flag=True,
            help="Keep it even where no watchdog can be armed: then only `tpuwizard down` ends it.",
        ),
        click.option(
            "--ready-timeout",
            type=READY_TIMEOUT,
            default=int(READY_TIMEOUT_S),  # shown as 1800, not 1800.0
            show_default=True,
            help="Seconds to wait for the node to be ready.",
        ),
        queue_wait_option,
    ],
    up_deadline,
)
