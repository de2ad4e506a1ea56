"""``--zones`` (failover in order), its rules before any call, the probe's queue wait, and the
attempt history that orders zones by recent success."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tests.plans import changed, launch_plan
from tests.unit.test_cli_bad_input import LAUNCH, UP, refused
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.cli import main
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import Launch, run_launch
from tpuwizard.core.launch.lifecycle.launch_state import LaunchState
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.attempts import (
    CUT_SHORT,
    NO_CAPACITY,
    READY,
    Attempt,
    AttemptHistory,
    last_tried_words,
    order_zones,
)
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.words.choice_words import all_words

RUN = "20261201-120000-zz01"


def plan(tmp_path, zones=("us-central1-a", "us-west1-c", "us-east5-a"), **changes) -> LaunchPlan:
    made = launch_plan(
        accelerator="v5litepod-1",
        zone=zones[0] if zones else "us-central1-a",
        project="practice-project",
        run_id=RUN,
        run_dir=tmp_path / "runs" / RUN,
        name="tpu-z",
        zones=tuple(zones),
        failover=bool(zones),
    )
    return changed(made, **changes)


def problems(p: LaunchPlan) -> str:
    return " ".join(all_words(p.problems(), "cli"))


# -- the rules, before any call ------------------------------------------------------------
def test_a_good_list_has_no_problems(tmp_path):
    assert plan(tmp_path).problems() == []
    assert plan(tmp_path, fan_out=True).problems() == []


def test_each_zone_is_checked_as_zone_is_and_must_offer_the_type(tmp_path):
    said = problems(plan(tmp_path, zones=("us-central1-a", "Us_Bad", "europe-west1-b")))
    assert "Us_Bad" in said  # the zone rule's own words
    assert "not offered in europe-west1-b" in said and "us-central1-a" in said
    assert "europe-west4-b" in said  # where it is offered, to choose from


def test_a_zone_listed_twice_and_a_fan_out_of_one_are_refused(tmp_path):
    said = problems(plan(tmp_path, zones=("us-central1-a", "us-central1-a")))
    assert "listed more than once" in said
    assert "two or more" in problems(plan(tmp_path, zones=("us-central1-a",), fan_out=True))
    assert "two or more" in problems(plan(tmp_path, zones=(), fan_out=True))


def test_queued_routes_on_the_tpu_api_fan_out_but_do_not_fail_over(tmp_path):
    said = problems(plan(tmp_path, route="spot"))
    assert "fail fast" in said and "fan-out" in said
    assert plan(tmp_path, route="spot", fan_out=True).problems() == []


def test_compute_engine_spot_and_flex_fail_over(tmp_path):
    zones = ("us-east5-a", "us-east5-b", "us-central1-b")
    spot = plan(tmp_path, zones=zones, accelerator="v6e-4", route="spot", backend="compute")
    assert spot.problems() == []
    flex_zones = ("us-east5-a", "asia-northeast1-b")
    flex = plan(tmp_path, zones=flex_zones, accelerator="v6e-4", route="flex", backend="compute")
    assert flex.problems() == []
    # Each zone is probed with a zero queue wait: a longer one has no place.
    assert "zero queue wait" in problems(replace(flex, deadline=Deadline(queue_wait_minutes=30.0)))
    # Every zone of a Flex-start list must offer Flex-start on the plan's backend: on Compute
    # Engine wherever the machine type is, on the TPU API only in its own Flex-start zones.
    more = changed(flex, zones=(*flex_zones, "us-east5-b"))
    assert "Flex-start" not in problems(more)
    said = problems(changed(more, backend="tpu-api", deadline=Deadline(watchdog=None)))
    assert "Flex-start is not offered for v6e-4 in us-east5-b" in said


# -- what each attempt sends ---------------------------------------------------------------
def sent_queue_wait(tmp_path, p: LaunchPlan) -> float | None:
    cloud = MemoryCloud(backend=Backend.COMPUTE)
    sent = []
    original = cloud.create_node

    def create_node(req, on_part=None):
        sent.append(req.queue_wait_s)
        return original(req)

    cloud.create_node = create_node  # type: ignore[method-assign]
    launch = Launch(p, make_runtime(tmp_path, cloud), lambda e: None, CancelToken())
    launch.provisioner.create_in(p.zone, LaunchState(p.zone))
    return sent[0]


def test_a_flex_start_probe_on_compute_engine_asks_for_a_zero_queue_wait(tmp_path):
    zones = ("us-east5-a", "asia-northeast1-b")
    flex = plan(tmp_path, zones=zones, accelerator="v6e-4", route="flex", backend="compute")
    assert sent_queue_wait(tmp_path, flex) == 0.0  # compute/body.py sends it as Google's 90 s
    # One zone, --queue-wait 0: "only if capacity is there now", sent as zero too (was the
    # ready wait, 1800 s, before).
    alone = plan(
        tmp_path, zones=(), zone="us-east5-a", accelerator="v6e-4", route="flex", backend="compute"
    )
    assert (
        sent_queue_wait(tmp_path / "b", replace(alone, deadline=Deadline(queue_wait_minutes=0.0)))
        == 0.0
    )
    assert sent_queue_wait(tmp_path / "c", alone) == 7200.0  # the default, 2 h


# -- serial failover follows the list ------------------------------------------------------
def test_failover_tries_the_zones_in_the_order_given(tmp_path):
    zones = ("us-east5-a", "us-central1-a", "us-west1-c")
    cloud = MemoryCloud.faulty("stockout=us-east5-a,us-central1-a", delay=0.01)
    events: list[ev.Event] = []
    rt = make_runtime(tmp_path, cloud)
    run_launch(plan(tmp_path, zones=zones), rt, events.append, CancelToken())
    moves = [(e.from_zone, e.to_zone) for e in events if isinstance(e, ev.ZoneFailover)]
    # Not the diagnosis' alternatives (the catalog's order): the user's list.
    assert moves == [("us-east5-a", "us-central1-a"), ("us-central1-a", "us-west1-c")]
    assert [n.zone for n in cloud.created] == list(zones) and cloud.nodes == {}
    assert all(e.op == "gone" for e in Ledger(rt.ledger.path).entries())
    history = AttemptHistory.beside(rt.ledger).attempts("v5litepod-1")
    assert [(a.zone, a.outcome) for a in history] == [
        ("us-east5-a", NO_CAPACITY),
        ("us-central1-a", NO_CAPACITY),
        ("us-west1-c", READY),
    ]


def test_the_list_ends_the_failover_even_where_other_zones_offer_it(tmp_path):
    zones = ("us-east5-a", "us-central1-a")
    cloud = MemoryCloud.faulty("stockout=us-east5-a,us-central1-a", delay=0.01)
    events: list[ev.Event] = []
    code = run_launch(plan(tmp_path, zones=zones), make_runtime(tmp_path, cloud), events.append)
    assert code == 3 and [n.zone for n in cloud.created] == list(zones)


# -- the history ---------------------------------------------------------------------------
NOW = 1_800_000_000.0


def tried(zone: str, outcome: str, minutes_ago: float) -> Attempt:
    return Attempt(zone, "v6e-4", "vm", "tpu-api", outcome, NOW - minutes_ago * 60)


def test_zones_are_ordered_by_recent_success(tmp_path):
    history = [
        tried("b", NO_CAPACITY, 12),
        tried("c", READY, 90),
        tried("d", READY, 5),
        tried("e", NO_CAPACITY, 300),
        tried("f", CUT_SHORT, 1),
        tried("g", READY, 60 * 24 * 8),  # over a week ago: says nothing now
        tried("b", READY, 600),  # older than its failure: the failure is b's news
    ]
    order = order_zones(["a", "b", "c", "d", "e", "f", "g"], history, now=NOW)
    # Successes newest first; then the untried and the cut short as given; then the failures,
    # the one that failed longest ago first.
    assert order == ["d", "c", "a", "f", "g", "e", "b"]


def test_last_tried_words():
    assert last_tried_words(tried("z", NO_CAPACITY, 12), now=NOW) == "no capacity 12 min ago"
    assert last_tried_words(tried("z", READY, 150), now=NOW) == "ready 2 h ago"
    assert last_tried_words(None, now=NOW) == ""


def test_the_history_survives_a_torn_line_and_keeps_the_newest(tmp_path, monkeypatch):
    from tpuwizard.core.launch.records import attempts

    monkeypatch.setattr(attempts, "KEEP", 5)
    book = AttemptHistory(tmp_path / "attempts.jsonl")
    now = time.time()  # read back against this computer's clock: NOW may be ahead of it

    def at(zone: str, minutes_ago: float) -> Attempt:
        return Attempt(zone, "v6e-4", "vm", "tpu-api", READY, now - minutes_ago * 60)

    for i in range(30):  # past the size at which it trims itself (KEEP lines of ~400 bytes)
        book.record(at(f"zone-{i}", 30 - i))
    with open(book.path, "ab") as f:
        f.write(b'{"zone": "torn')
    book.record(at("last", 0))
    zones = [a.zone for a in book.attempts("v6e-4")]
    assert zones[-1] == "last" and "zone-0" not in zones and len(zones) < 30


# -- the command line ----------------------------------------------------------------------
@pytest.mark.parametrize("command", [LAUNCH, UP])
def test_zone_with_zones_is_exit_2_before_any_call(home, command):
    said = refused(home, *command, "--zones", "us-west1-c,us-east5-a")
    assert "either --zone" in said and "not both" in said


@pytest.mark.parametrize("command", [LAUNCH, UP])
def test_a_zone_that_does_not_offer_the_type_is_named(home, command):
    base = [a for a in command if a not in ("--zone", "us-central1-a")]
    said = refused(home, *base, "--zones", "us-central1-a,europe-west1-b,asia-east1-c")
    assert "not offered in europe-west1-b, asia-east1-c" in said


def test_fan_out_without_zones_is_exit_2(home):
    assert "two or more" in refused(home, *LAUNCH, "--fan-out")


def test_up_takes_failover(home):
    result = CliRunner().invoke(main, ["up", "--help"])
    assert "--failover" in result.output and "--zones" in result.output


def test_zones_puts_recent_success_first_and_says_when_each_was_tried(home):
    import json
    import time

    book = AttemptHistory(home / "attempts.jsonl")
    now = time.time()
    book.record(Attempt("us-central1-a", "v5litepod-4", "vm", "tpu-api", NO_CAPACITY, now - 720))
    book.record(Attempt("us-east5-b", "v5litepod-4", "vm", "tpu-api", READY, now - 7200))
    args = ["zones", "--offline", "--accelerator", "v5litepod-4"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    zones = list(doc["zones"])
    assert zones[0] == "us-east5-b" and zones[-2] == "us-central1-a"  # of the $4.80 zones
    assert zones[-1] == "europe-west4-b"  # $6.24: after every cheaper zone
    assert doc["last_tried"] == {
        "us-central1-a": "no capacity 12 min ago",
        "us-east5-b": "ready 2 h ago",
    }
    table = " ".join(CliRunner().invoke(main, args).stdout.split())  # a table or paragraphs
    assert "last tried" in table and "no capacity 12 min ago" in table
    # A dearer zone that lately had capacity stays after the cheaper ones.
    book.record(Attempt("europe-west4-b", "v5litepod-4", "vm", "tpu-api", READY, now - 60))
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    ordered = list(doc["zones"])
    assert ordered[0] == "us-east5-b" and ordered[-1] == "europe-west4-b"


# -- zones --route ---------------------------------------------------------------------------
def test_zones_route_prices_the_route_orders_the_usable_cheapest_first_and_says_why_not():
    import json

    result = CliRunner().invoke(
        main, ["zones", "--offline", "--accelerator", "v6e-4", "--route", "flex", "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    zones = list(doc["zones"])
    usable = [z for z in zones if not doc["unusable"][z]]
    assert usable and zones[: len(usable)] == usable  # the route's own zones first
    assert all("no Flex-start here" in doc["unusable"][z] for z in zones[len(usable) :])
    # Flex-start has no published price: null, and at most on-demand's, never spot's.
    assert all(doc["price_per_hour_usd"][z] is None for z in zones)
    assert all(doc["price_at_most_usd"][z] for z in zones)
    human = CliRunner().invoke(
        main, ["zones", "--offline", "--accelerator", "v5litepod-4", "--route", "vm"]
    )
    text = human.stdout
    # The dearer, unconfirmed europe-west4-b comes after every confirmed $4.80 zone.
    assert text.index("us-central1-a") < text.index("europe-west4-b (unconfirmed)")
    assert "for on" in text and "usable" in text


def test_zones_route_without_an_accelerator_is_bad_input():
    result = CliRunner().invoke(main, ["zones", "--offline", "--route", "spot"])
    assert result.exit_code == 2 and "add --accelerator TYPE" in result.output
