"""The typed questions of plain mode (``tpuwizard --plain``): a validator from a check that
raises BadInput, and a text question whose default is a greyed placeholder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import questionary
from prompt_toolkit.formatted_text import FormattedText

from tpuwizard.core.errors import BadInput


def validator(check: Callable[[str], object]) -> Callable[[str], bool | str]:
    """A questionary validator from a function that raises BadInput."""

    def validate(text: str) -> bool | str:
        try:
            check(text)
        except (BadInput, ValueError) as err:
            return str(err) or "not valid"
        return True

    return validate


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
    return questionary.text(message, **kwargs, **io)
