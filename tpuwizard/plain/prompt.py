"""The typed questions of plain mode (``tpuwizard --plain``): a validator from a check that
raises BadInput, and a text question whose default is a greyed placeholder."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import questionary
from prompt_toolkit.formatted_text import FormattedText

from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.resume_rules import checkpoints_problem
from tpuwizard.core.plan import fit
from tpuwizard.words.choice_words import words
from tpuwizard.words.text_wrap import wrap_paragraph

if TYPE_CHECKING:
    from tpuwizard.core.cloud.zones import RouteZone


def validator(check: Callable[[str], object]) -> Callable[[str], bool | str]:
    """A questionary validator from a function that raises BadInput. Its message is fitted to
    the terminal at word boundaries (a rule such as a TPU name's is longer than a line)."""

    def validate(text: str) -> bool | str:
        try:
            check(text)
        except (BadInput, ValueError) as err:
            return wrap_paragraph(str(err) or "not valid", _columns())
        return True

    return validate


def _columns() -> int:
    from prompt_toolkit.application import get_app_or_none

    app = get_app_or_none()
    # One column short of the edge: a line that fills the last column makes terminals wrap.
    return (app.output.get_size().columns if app is not None else 80) - 1


def _tall_validation_toolbar(question: Any) -> Any:
    """prompt_toolkit draws a validation message in one row, cutting it at the terminal's edge;
    this lets that row grow to the wrapped message's lines."""
    from prompt_toolkit.filters import has_validation_error
    from prompt_toolkit.layout.containers import ConditionalContainer, Window

    for container in question.application.layout.walk():
        content = getattr(container, "content", None)
        toolbar = isinstance(container, ConditionalContainer) and isinstance(content, Window)
        if toolbar and container.filter is has_validation_error:  # type: ignore[union-attr]
            content.height = None  # type: ignore[union-attr]  # its message's own height
    return question


def text_question(
    message: str, default: str, check: Callable[[str], object] | None, io: dict[str, Any]
) -> Any:
    """A question for typed text. A default is shown greyed, not put in the field as text: what
    is typed replaces it (48 typed is 48, not 4848), and Enter alone answers it (the caller
    takes ``answer or default``)."""
    kwargs: dict[str, Any] = {"validate": validator(lambda t: check(t or default))} if check else {}
    if default:
        kwargs["placeholder"] = FormattedText([("fg:ansibrightblack", default)])
        message = f"{message} [Enter: {default}]"
    return _tall_validation_toolbar(questionary.text(message, **kwargs, **io))


def size_or_params(text: str) -> None:
    """A size, or what looks like a parameter count (the next question offers to switch)."""
    with contextlib.suppress(fit.LooksLikeParams):
        fit.parse_size_gib(text)


def is_file(text: str) -> None:
    if not Path(text).expanduser().is_file():
        raise BadInput(f"{text} is not a file.")


def checkpoints_check(text: str) -> None:
    """The checkpoints folder typed (empty: no resume), checked by the plan's own rule."""
    problem = checkpoints_problem(text) if text.strip() else None
    if problem is not None:
        raise BadInput(words(problem, "plain"))


def stall_check(text: str) -> None:
    """The stall guard's minutes typed (0: off), checked by the plan's own rule."""
    from tpuwizard.core.launch.plan.guard_rules import guard_problems
    from tpuwizard.core.launch.plan.parts import Guards
    from tpuwizard.words.choice_words import all_words
    from tpuwizard.words.typed_numbers import typed_number

    minutes = typed_number(text, "a number of minutes, 0 or more (0 turns the stall guard off)")
    problems = all_words(guard_problems(Guards(stall_minutes=minutes)), "plain")
    if problems:
        raise BadInput(problems[0])


def packages_check(text: str) -> None:
    """Packages typed for the worker venv (as Review's Packages field): the first reason one
    cannot go there, said as plain mode says it."""
    from tpuwizard.core.launch.plan.packages import package_problems, specs_from_field
    from tpuwizard.words.choice_words import all_words

    problems = all_words(package_problems(specs_from_field(text)), "plain")
    if problems:
        raise BadInput(problems[0])


def zone_choices(rows: list[RouteZone]) -> list[questionary.Choice]:
    """A route's zones as choices, each with its price and, where the catalog's source leaves it
    unconfirmed, said so; one the route cannot use is shown with why and cannot be chosen."""
    from tpuwizard.words.figures import price_cell

    return [
        questionary.Choice(
            f"{r.zone:<18} {price_cell(r.price.hourly, r.price.note, r.price.at_most)}/h"
            + (" (unconfirmed)" if r.unconfirmed else ""),
            r.zone,
            disabled=r.unusable or None,
        )
        for r in rows
    ]
