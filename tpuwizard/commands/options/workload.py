"""What runs on ``launch``'s and ``up``'s workers: the script and its own arguments, the files
that come home, the packages and JAX of the worker venv, the verifier's extras; the groups hand
the command its ``Workload`` part as ``workload``. workload_rules.py says which are refused."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.options.group import option_group
from tpuwizard.commands.options.jax import jax_option
from tpuwizard.commands.options.packages import asked_packages, packages_options

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Workload


def asked_workload(
    script: Path | None,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    with_specs: tuple[str, ...],
    requirements: tuple[Path, ...],
    jax: str | None,
    precision: bool,
    trace: bool,
) -> Workload:
    """launch's part as asked, its packages gathered here (a requirements.txt beside the
    script said when it is used; exit 2 for a file that cannot be read)."""
    from tpuwizard.core.launch.plan.parts import Workload

    packages = asked_packages(with_specs, requirements, script)
    return Workload(script, script_args, fetch, packages, jax, precision, trace)


def up_workload(
    with_specs: tuple[str, ...], requirements: tuple[Path, ...], jax: str | None
) -> Workload:
    """up's part: the kept node's venv (each run brings its own script)."""
    from tpuwizard.core.launch.plan.parts import Workload

    return Workload(packages=asked_packages(with_specs, requirements), jax=jax)


SCRIPT = click.option(
    "--script", type=click.Path(path_type=Path), help="Your script to run after the verifier."
)
# `launch --script train.py -- --lr 3e-4`: after `--`, the script's own arguments, unchanged.
SCRIPT_ARGS = click.argument(
    "script_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- SCRIPT_ARGS...]"
)

workload_options = option_group(
    "workload",
    [
        SCRIPT,
        click.option(
            "--fetch",
            "fetch",
            multiple=True,
            help="Glob of files your script writes, copied back to runs/<run id>/files/ "
            "(repeatable).",
        ),
        packages_options,
        jax_option,
        click.option(
            "--precision", is_flag=True, help="The verifier also measures fp32/bf16/int8 error."
        ),
        click.option(
            "--trace",
            is_flag=True,
            help="The verifier also saves a profiler trace into the run folder.",
        ),
        SCRIPT_ARGS,
    ],
    asked_workload,
)
up_workload_options = option_group("workload", [packages_options, jax_option], up_workload)
