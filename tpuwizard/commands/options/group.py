"""One option group: a decorator that declares a part's click options and hands the command the
part built from them, as one parameter.

The group's builder names the options it takes by its own parameters (click's names for them:
``--with`` is ``with_specs``); the group pops those from what click passes, builds the part
(parsing each value once, here, at the edge: exit 2 for what cannot be read) and passes it on
under the part's name. Groups stack like options: the outermost builds first, so the order of
the decorators is the order in which bad input is said.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

Command = Callable[..., Any]
Decorator = Callable[[Command], Command]


def option_group(
    part: str, options: Sequence[Decorator], build: Callable[..., object]
) -> Decorator:
    """The decorator that declares ``options`` (in this order in ``--help``) and passes the
    command ``part=build(**the options' values)`` in their place."""
    taken = tuple(inspect.signature(build).parameters)

    def group(command: Command) -> Command:
        @functools.wraps(command)  # click reads the options gathered so far from it
        def handed(*args: Any, **values: Any) -> Any:
            values[part] = build(**{name: values.pop(name) for name in taken})
            return command(*args, **values)

        declared: Command = handed
        for option in reversed(options):
            declared = option(declared)
        return declared

    return group
