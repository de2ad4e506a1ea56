"""A closed terminal, as a person closes one: the command typed into ``bash -i`` on a
pseudo-terminal, the window closed at one point of its work (tests/integration/hangup_drill.py).
The launch during its script runs every time; the other points (and a stdout that is a closed
pipe) rotate, one a run (tests/rotation.py); each is proven at unit level in
tests/unit/test_stop_signals.py."""

from __future__ import annotations

import pytest

from tests.integration.hangup_drill import CASES, hang_up_at
from tests.rotation import rotating

ALWAYS = ("launch at script",)


@pytest.mark.parametrize("case", rotating(CASES, per_run=1, always=ALWAYS))
def test_a_closed_terminal_leaves_nothing_billing_and_exits_129_within_seconds(tmp_path, case):
    outcome = hang_up_at(case, tmp_path / "case")
    assert outcome.problems == [], outcome
