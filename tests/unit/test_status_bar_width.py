"""The status bar at 80 columns keeps the node's name: the step is shortened to its number (a
step without a number, to nothing) before the names go (issue 55, item 10: the bar said
"RUNNING 25s ~$0.03 if real", naming nothing)."""

from __future__ import annotations

import time

import pytest

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.tui.widgets.status_bar import bar_text

NAME = "tpuwizard-20261206-074240-1f47"  # a run id's name: the longest the wizard makes
AT_80 = 80 - 2 - 2  # StatusBar's room: 80 columns less its padding, less its margin of 2


def running(seconds: float) -> BillingState:
    billing = BillingState()
    billing.apply(ev.ResourceExists(NAME, "node", "us-central1-a", "v5litepod-4", "vm", "r"))
    billing.apply(ev.BillingStarted(NAME, time.time() - seconds, 4.8))
    return billing


def created_not_running() -> BillingState:
    billing = BillingState()
    billing.apply(ev.ResourceExists(NAME, "node", "us-central1-a", "v5litepod-4", "vm", "r"))
    return billing


@pytest.mark.parametrize(
    ("make", "step", "practice", "expected"),
    [
        (
            lambda: running(25),
            "6 Provision",
            True,
            "PRACTICE | 6 | RUNNING " + NAME + " 25s ~$0.03 if real",
        ),
        (lambda: running(25), "8 Your script", True, "PRACTICE | 8 | RUNNING " + NAME + " 25s"),
        (lambda: running(25), "8 Your script", False, "8 Your script | BILLING " + NAME + " 25s"),
        (lambda: running(5000), "9 Teardown", True, "PRACTICE | 9 | RUNNING " + NAME + " 5000s"),
        (created_not_running, "6 Provision", True, "PRACTICE | 6 | EXISTS " + NAME),
        (lambda: running(25), "Notebook", True, "PRACTICE | RUNNING " + NAME),
        (BillingState, "1 Route", True, "PRACTICE | 1 Route | Nothing is billing"),
    ],
)
def test_the_bar_at_80_columns_keeps_the_name(make, step, practice, expected):
    text = bar_text(make(), step, practice, AT_80)  # made now: its seconds are the test's
    assert text.startswith(expected) and len(text) <= AT_80, (len(text), text)


def test_the_whole_step_stays_where_it_fits_and_the_names_go_last():
    wide = bar_text(running(25), "8 Your script", True, 100 - 4)
    assert wide.startswith("PRACTICE | 8 Your script | RUNNING " + NAME)
    narrow = bar_text(running(25), "8 Your script", True, 60)  # no room for the name at all
    assert narrow == "PRACTICE | 8 Your script | RUNNING 25s ~$0.03 if real"
    unnumbered = bar_text(running(25), "Kaggle", True, 60)
    assert unnumbered == "PRACTICE | Kaggle | RUNNING 25s ~$0.03 if real"
