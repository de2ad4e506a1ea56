"""``--jax VERSION``: the worker's ``jax[tpu]``, one of tpuwizard's table (launch, up).

The table and its rule are the core's (core/plan/jax_versions.py); a version outside it is
refused by the plan's check, before anything is created (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def jax_option(command: F) -> F:
    """The option, passed to the command as ``jax``."""
    from tpuwizard.core.plan.jax_versions import DEFAULT, versions

    return click.option(
        "--jax",
        "jax",
        metavar="VERSION",
        help=f"The worker's jax[tpu] version, one of tpuwizard's table: {', '.join(versions())} "
        f"(default {DEFAULT.version}; what was run with each: docs/guides/packages.md).",
    )(command)
