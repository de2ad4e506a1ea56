"""The one zone order every front end shows (the wizard's Zones step, plain mode's zone question,
``tpuwizard zones --route``): ``ZoneAnswer.route_rows``, asked of the session's survey answer."""

from __future__ import annotations

import time

import pytest

from tpuwizard.core.cloud import zones
from tpuwizard.core.launch.records.attempts import NO_CAPACITY, READY, Attempt
from tpuwizard.core.plan import catalog
from tpuwizard.session.decision import ZoneAnswer

V6E = catalog.parse_accelerator("v6e-4")
FLEX_ONLY = "no Flex-start here (only asia-northeast1-b, us-east5-a)"


def tried(zone: str, outcome: str, minutes_ago: float) -> Attempt:
    return Attempt(zone, "v6e-4", "vm", "tpu-api", outcome, time.time() - minutes_ago * 60)


CASES = [
    # The documented catalog: equal prices keep the survey's order, the unconfirmed zone last.
    (
        "vm",
        (),
        None,
        [
            ("europe-west4-a", ""),
            ("us-central1-b", ""),
            ("us-east1-d", ""),
            ("us-east5-a", ""),
            ("us-east5-b", ""),
            ("asia-northeast1-b", ""),
        ],
    ),
    # A zone that lately had capacity comes first among equal prices, one that lately had none
    # after the untried.
    (
        "vm",
        (tried("us-east5-b", READY, 5), tried("europe-west4-a", NO_CAPACITY, 10)),
        None,
        [
            ("us-east5-b", ""),
            ("us-central1-b", ""),
            ("us-east1-d", ""),
            ("us-east5-a", ""),
            ("europe-west4-a", ""),
            ("asia-northeast1-b", ""),
        ],
    ),
    # Flex-start: its own zones first (the unconfirmed after), the rest last with why.
    (
        "flex",
        (tried("us-east1-d", READY, 5),),
        None,
        [
            ("us-east5-a", ""),
            ("asia-northeast1-b", ""),
            ("us-east1-d", FLEX_ONLY),
            ("europe-west4-a", FLEX_ONLY),
            ("us-central1-b", FLEX_ONLY),
            ("us-east5-b", FLEX_ONLY),
        ],
    ),
    # Zones already narrowed (to one backend): only those, in the same order.
    (
        "vm",
        (tried("us-east5-a", READY, 5),),
        ["us-central1-b", "asia-northeast1-b", "us-east5-a"],
        [("us-east5-a", ""), ("us-central1-b", ""), ("asia-northeast1-b", "")],
    ),
]


@pytest.mark.parametrize(("route", "attempts", "narrowed", "expected"), CASES)
def test_the_zone_order_is_recent_success_then_the_route_s_usable_cheapest(
    route, attempts, narrowed, expected
):
    answer = ZoneAnswer(zones.documented(), practice=True, attempts=attempts)
    rows = answer.route_rows(V6E, route, narrowed)
    assert [(r.zone, r.unusable) for r in rows] == expected
    assert [r.zone for r in rows if r.unconfirmed] == ["asia-northeast1-b"]


def test_a_survey_that_offers_nothing_gives_no_rows():
    assert (
        ZoneAnswer(zones.ZoneSurvey("documented", {}), practice=False).route_rows(V6E, "vm") == []
    )
