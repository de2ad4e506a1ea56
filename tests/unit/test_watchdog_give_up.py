"""When the on-VM watchdog gives up on an API that does not answer (issue 22, item 15): on
Google never before its deadline, and past it only after --give-up-after seconds with no answer;
in practice (--give-up-before-deadline) soon after the practice cloud is switched off."""

from __future__ import annotations

from argparse import Namespace

from tpuwizard_verify import tpu_watchdog

DEADLINE = 10_000.0


def args(last_answer: float, before_deadline: bool = False, after: float = 600.0) -> Namespace:
    return Namespace(
        deadline=DEADLINE,
        give_up_after=after,
        give_up_before_deadline=before_deadline,
        last_answer=last_answer,
    )


def test_on_google_an_api_that_does_not_answer_never_ends_the_wait_before_the_deadline():
    # Silent since long before the deadline: it keeps trying until the deadline, and after it.
    assert not tpu_watchdog.lost_api(args(last_answer=0.0), now=DEADLINE - 1)
    assert not tpu_watchdog.lost_api(args(last_answer=0.0), now=DEADLINE + 599)


def test_on_google_it_stops_once_the_api_has_not_answered_for_the_window_past_the_deadline():
    assert tpu_watchdog.lost_api(args(last_answer=0.0), now=DEADLINE + 600)
    # An answer past the deadline (a refused delete is an answer) starts the window again.
    assert not tpu_watchdog.lost_api(args(last_answer=DEADLINE + 500), now=DEADLINE + 900)


def test_in_practice_a_switched_off_sandbox_ends_it_before_its_deadline():
    practice = args(last_answer=1_000.0, before_deadline=True, after=120.0)
    assert not tpu_watchdog.lost_api(practice, now=1_119.0)
    assert tpu_watchdog.lost_api(practice, now=1_120.0)


def test_no_window_means_it_never_gives_up():
    assert not tpu_watchdog.lost_api(args(last_answer=0.0, after=0.0), now=DEADLINE * 100)
