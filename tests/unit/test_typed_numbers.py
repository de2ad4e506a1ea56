"""Numbers typed into the wizard's fields and plain mode's prompts are read by one parser
(words/typed_numbers.py), which refuses digits outside ASCII in the CLI's words (issue 56, item
7): Python's float() and int() read "１" as 1, so a full-width answer would pass unseen."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.plain.prompt import stall_check
from tpuwizard.plain.walk import _minutes
from tpuwizard.tui.screens.gke_export import write_for
from tpuwizard.tui.screens.review import deadline_typed
from tpuwizard.tui.screens.review_guards import minutes_typed
from tpuwizard.tui.state import WizardState
from tpuwizard.words.typed_numbers import ASCII_DIGITS, typed_number, typed_whole

FULL_WIDTH_ONE = "\uff11"  # "１"
ARABIC_INDIC_FIVE = "\u0665"  # "٥"


def _review_deadline(text: str) -> None:
    """The wizard's Review: the Deadline field's problem, raised as the others' are."""
    minutes, problem = deadline_typed(text)
    if problem is not None:
        assert minutes == -1.0  # the plan refuses it too: Create stays disabled
        raise BadInput(problem)


def _gke_slices(text: str) -> None:
    write_for(WizardState(), "xpk", "v5litepod-16", text)


# Each numeric answer of the two front ends: (where, its check, a prefix its refusal carries).
ANSWERS: list[tuple[str, Callable[[str], object], str]] = [
    ("plain deadline", _minutes, "' is not a number of minutes from 0.1 to 10080"),
    ("plain stall guard", stall_check, "' is not a number of minutes, 0 or more"),
    ("wizard deadline", _review_deadline, "Deadline: '"),
    ("wizard stall guard", minutes_typed, "' is not a number of minutes, 0 or more"),
    ("wizard export slices", _gke_slices, "' is not a whole number of slices"),
]


@pytest.mark.parametrize(("where", "check", "said"), ANSWERS, ids=[a[0] for a in ANSWERS])
@pytest.mark.parametrize("typed", [FULL_WIDTH_ONE * 2, f" {ARABIC_INDIC_FIVE} ", "1" + "\uff10"])
def test_every_numeric_answer_refuses_digits_outside_ascii(where, check, said, typed) -> None:
    with pytest.raises(BadInput) as refused:
        check(typed)
    words = str(refused.value)
    assert said in words and f"'{typed.strip()}' is not " in words, words
    assert words.endswith(f": {ASCII_DIGITS}."), words


@pytest.mark.parametrize(("where", "check", "said"), ANSWERS, ids=[a[0] for a in ANSWERS])
def test_every_numeric_answer_refuses_what_is_no_number_without_the_ascii_words(
    where, check, said
) -> None:
    with pytest.raises(BadInput) as refused:
        check("soon")
    assert "'soon' is not " in str(refused.value) and ASCII_DIGITS not in str(refused.value)


@pytest.mark.parametrize(
    ("where", "check", "typed"),
    [
        ("plain deadline", _minutes, " 30 "),
        ("plain stall guard", stall_check, "0"),
        ("wizard deadline", _review_deadline, "1e2"),
        ("wizard stall guard", minutes_typed, "45"),
    ],
)
def test_ascii_numbers_are_taken(where, check, typed) -> None:
    check(typed)


@pytest.mark.parametrize(
    ("typed", "number"), [("1", 1.0), (" 2.5 ", 2.5), ("1e3", 1000.0), ("-0", 0.0)]
)
def test_typed_number_reads_ascii_numbers(typed: str, number: float) -> None:
    assert typed_number(typed, "a number") == number


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("nan", "'nan' is not a number."),
        ("inf", "'inf' is not a number."),
        ("", "'' is not a number."),
        (FULL_WIDTH_ONE, f"'{FULL_WIDTH_ONE}' is not a number: {ASCII_DIGITS}."),
    ],
)
def test_typed_number_refuses_what_is_no_finite_ascii_number(typed: str, said: str) -> None:
    with pytest.raises(BadInput) as refused:
        typed_number(typed, "a number")
    assert str(refused.value) == said


@pytest.mark.parametrize(("typed", "whole"), [("2", 2), (" 10 ", 10), ("0", 0)])
def test_typed_whole_reads_ascii_digits(typed: str, whole: int) -> None:
    assert typed_whole(typed, "a whole number") == whole


@pytest.mark.parametrize("typed", ["-1", "1.5", "two", "", "²"])
def test_typed_whole_refuses_signs_points_words_and_superscripts(typed: str) -> None:
    with pytest.raises(BadInput):
        typed_whole(typed, "a whole number")
