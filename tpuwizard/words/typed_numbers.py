"""Numbers typed into a front end (plain mode's prompts, the wizard's fields, the CLI's options),
read one way and refused in the same words everywhere.

ASCII digits only: Python's ``float`` and ``int`` also read full-width and other scripts' digits
("１"), so a value pasted from a full-width keyboard would pass unseen.
"""

from __future__ import annotations

import math

from tpuwizard.core.errors import BadInput

ASCII_DIGITS = (
    "type it with the digits 0-9 (it holds characters outside ASCII, such as full-width digits)"
)


def not_ascii_words(shown: str, wanted: str) -> str:
    """What is said of a number typed with characters outside ASCII: ``shown`` is the value as
    the front end quotes it, ``wanted`` what it asks for ("a number of minutes")."""
    return f"{shown} is not {wanted}: {ASCII_DIGITS}."


def typed_number(text: str, wanted: str) -> float:
    """The finite number typed in ``text`` (spaces around it dropped); BadInput says what was
    typed, that it is not ``wanted``, and, for other digits than 0-9, what to type instead."""
    typed = text.strip()
    if not typed.isascii():
        raise BadInput(not_ascii_words(f"'{typed}'", wanted))
    try:
        number = float(typed)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise BadInput(f"'{typed}' is not {wanted}.")
    return number


def typed_whole(text: str, wanted: str) -> int:
    """The whole number typed in ``text``, in digits 0-9 only (no sign, no point), as
    :func:`typed_number` refuses what is not one."""
    typed = text.strip()
    if not typed.isascii():
        raise BadInput(not_ascii_words(f"'{typed}'", wanted))
    if not typed.isdigit():
        raise BadInput(f"'{typed}' is not {wanted}.")
    return int(typed)
