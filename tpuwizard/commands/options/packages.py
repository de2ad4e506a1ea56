"""``--with SPEC`` and ``--requirements FILE``: packages for the worker venv (launch, up, run).

Like every option of tpuwizard's they come before SCRIPT; whatever follows it is the script's.
The rules (no jax, jaxlib or libtpu; a real requirement) are the plan's (core/launch/
plan/packages.py), checked before anything is created.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from tpuwizard.commands.common import say

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.packages import PackageSpec

F = TypeVar("F", bound=Callable[..., Any])


def packages_options(command: F) -> F:
    """The two options, passed to the command as ``with_specs`` and ``requirements``."""
    command = click.option(
        "--requirements",
        "requirements",
        multiple=True,
        type=click.Path(path_type=Path),
        metavar="FILE",
        help="A requirements file for the worker venv (repeatable). A requirements.txt beside "
        "the script is used without it.",
    )(command)
    return click.option(
        "--with",
        "with_specs",
        multiple=True,
        metavar="SPEC",
        help="A package for the worker venv, as uv run --with (repeatable), e.g. --with optax. "
        "The pinned jax[tpu] never changes.",
    )(command)


def asked_packages(
    with_specs: tuple[str, ...], requirements: tuple[Path, ...], script: Path | None = None
) -> tuple[PackageSpec, ...]:
    """What was asked for, saying so when a requirements.txt beside the script is used."""
    from tpuwizard.core.launch.plan.packages import gather_packages

    request = gather_packages(with_specs, requirements, script)
    words = request.auto_words()
    if words:
        say(words)
    return request.specs


def check_packages(specs: tuple[PackageSpec, ...]) -> None:
    """The plan's package rules, for a run on a kept node (a launch checks its whole plan)."""
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.launch.plan.packages import package_problems
    from tpuwizard.words.choice_words import all_words

    problems = all_words(package_problems(specs), "cli")
    if problems:
        raise BadInput(" ".join(problems))
