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
