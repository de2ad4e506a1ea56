"""What the wizard's Review asks the look ahead of the backend (session/prepare/outcomes.py's
Outlook), not decided in the screen: whether a backend asked still serves, which backend an
answer makes, and what the Compute Engine switch asks."""

from __future__ import annotations

import pytest

from tpuwizard.core.cloud.backend_choice import BackendChoice
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.routes import Route
from tpuwizard.session.prepare.outcomes import Outlook

AUTO, TPU, GCE = Backend.AUTO, Backend.TPU_API, Backend.COMPUTE
BOTH, TPU_ONLY, GCE_ONLY = (TPU, GCE), (TPU,), (GCE,)


def outlook(decided: Backend | None, serves: tuple[Backend, ...]) -> Outlook:
    choice = BackendChoice(decided, "", "") if decided is not None else None
    return Outlook(Route.SPOT, choice, serves=serves)


@pytest.mark.parametrize(
    ("asked", "serves", "kept"),
    [
        (AUTO, TPU_ONLY, True),  # auto always serves: the session decides
        (AUTO, (), True),
        (GCE, BOTH, True),  # the switch moved for a v6e, a v6e again
        (GCE, TPU_ONLY, False),  # moved for a v6e, now a v5e: back to auto
        (TPU, GCE_ONLY, False),  # TPU7x is Compute Engine's alone
        (TPU, BOTH, True),
    ],
)
def test_a_backend_asked_for_another_type_is_kept_only_where_it_still_serves(asked, serves, kept):
    assert outlook(TPU, serves).serves_asked(asked) is kept


@pytest.mark.parametrize(
    ("decided", "asked", "made"),
    [
        (GCE, AUTO, GCE),  # auto's is the one decided
        (TPU, AUTO, TPU),
        (None, AUTO, TPU),  # refused: the TPU API's, so the screen still shows one
        (GCE, TPU, TPU),  # moved off auto's choice: as asked
        (None, GCE, GCE),
    ],
)
def test_the_backend_an_answer_makes(decided, asked, made):
    assert outlook(decided, BOTH).made_by(asked) is made


@pytest.mark.parametrize(
    ("decided", "on_compute", "asked"),
    [
        (GCE, True, AUTO),  # the switch shows auto's choice: asked as auto
        (TPU, False, AUTO),
        (GCE, False, TPU),  # switched off auto's Compute Engine: the TPU API
        (TPU, True, GCE),  # switched on over auto's TPU API: Compute Engine
        (None, False, AUTO),  # refused: the switch shows the TPU API
    ],
)
def test_review_s_compute_engine_switch_as_asked(decided, on_compute, asked):
    found = outlook(decided, BOTH)
    assert found.asked_by_switch(on_compute) is asked
    assert found.made_by(asked) is (GCE if on_compute else TPU)  # and it makes what it shows
