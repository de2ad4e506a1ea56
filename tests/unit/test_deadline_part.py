"""The Deadline part (core/launch/plan/parts.py): when and how the node ends, carried whole from
the answers to the plan (its watchdog decided on the way), checked by deadline_rules.py, and
written to and read from a kept node's record by itself, old ledgers' records too."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_settings, replacement_answers
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
from tpuwizard.core.launch.plan.deadline_rules import deadline_problems, watchdog_problems
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.parts import Deadline, Where
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import Route
from tpuwizard.words.choice_words import all_words

V5E = parse_accelerator("v5litepod-4")


@pytest.mark.parametrize(("asked", "decided"), [(None, False), (False, False), (True, True)])
def test_the_answers_deadline_reaches_the_plan_whole_with_its_watchdog_decided(asked, decided):
    deadline = Deadline(
        max_run_minutes=45.0,
        watchdog=asked,
        idle_minutes=20.0,
        queue_wait_minutes=5.0,
        ready_timeout_s=600.0,
        keep=True,
        iterate=True,
    )
    answers = LaunchAnswers(Where(V5E, "us-central1-a"), deadline=deadline)
    plan = plan_for_run("r1", Path("/tmp/r1"), answers, Backend.TPU_API)
    assert plan.deadline == Deadline(45.0, decided, 20.0, 5.0, 600.0, keep=True, iterate=True)
    assert plan.watchdog is decided and plan.keep and plan.max_run == 45.0


def test_no_deadline_value_is_also_a_flat_field_of_the_answers_or_the_plan():
    parted = {f.name for f in fields(Deadline)}
    for whole in (LaunchAnswers, LaunchPlan):
        assert parted.isdisjoint(f.name for f in fields(whole)), whole


FLEX_IDLE = "which Flex-start does not have"
COMPUTE_IDLE = "which Compute Engine does not have"
UNWATCHED_IDLE = "which this plan goes without"
DEADLINE_BOUNDS = "The deadline must be between"
IDLE_BOUNDS = "The idle time must be between"


@pytest.mark.parametrize(
    ("deadline", "route", "backend", "said"),
    [
        (Deadline(), "vm", "tpu-api", []),
        (Deadline(30.0, watchdog=True, idle_minutes=10.0), "spot", "tpu-api", []),
        (Deadline(idle_minutes=10.0), "flex", "tpu-api", [FLEX_IDLE]),
        (Deadline(watchdog=True, idle_minutes=10.0), "vm", "compute", [COMPUTE_IDLE]),
        (Deadline(idle_minutes=10.0), "vm", "tpu-api", [UNWATCHED_IDLE]),
        (Deadline(watchdog=False, idle_minutes=10.0), "spot", "tpu-api", [UNWATCHED_IDLE]),
        (Deadline(-1.0), "vm", "tpu-api", [DEADLINE_BOUNDS]),
        (Deadline(20000.0), "flex", "compute", [DEADLINE_BOUNDS]),
        (Deadline(watchdog=True, idle_minutes=0.05), "vm", "tpu-api", [IDLE_BOUNDS]),
        (
            Deadline(20000.0, idle_minutes=20000.0),
            "vm",
            "tpu-api",
            [UNWATCHED_IDLE, DEADLINE_BOUNDS, IDLE_BOUNDS],
        ),
    ],
)
def test_the_deadline_rules(deadline, route, backend, said):
    found = all_words(deadline_problems(deadline, Route(route), Backend(backend)), "cli")
    assert len(found) == len(said), found
    for words, expected in zip(found, said, strict=True):
        assert expected in words


@pytest.mark.parametrize(
    ("watchdog", "route", "backend", "refused"),
    [
        (True, "flex", "tpu-api", True),
        (True, "flex", "compute", True),
        (None, "flex", "tpu-api", False),
        (False, "flex", "tpu-api", False),
        (True, "vm", "tpu-api", False),
        (True, "spot", "tpu-api", False),
    ],
)
def test_a_watchdog_is_refused_where_flex_start_keeps_the_deadline(
    watchdog, route, backend, refused
):
    deadline = Deadline(watchdog=watchdog)
    found = watchdog_problems(
        deadline, DeadlineKeeper(Route(route), Backend(backend), bool(watchdog))
    )
    assert bool(found) is refused
    assert all("Flex-start already ends at its deadline" in str(p) for p in found)


KEPT = Deadline(60.0, watchdog=True, idle_minutes=30.0, queue_wait_minutes=15.0, keep=True)


def test_the_deadline_s_record_is_what_it_reads_back():
    assert Deadline.from_record(KEPT.record(60.0)) == KEPT
    # The plan's deadline is recorded (the route's where none was asked), under the old keys.
    assert Deadline(keep=True).record(120.0) == {
        "watchdog": False,
        "idle_minutes": None,
        "max_run_minutes": 120.0,
        "queue_wait_minutes": None,
    }
    # The wait for READY and up's defaults are the launch's: not recorded.
    asked = Deadline(60.0, True, 30.0, 15.0, ready_timeout_s=600.0, keep=True, iterate=True)
    assert Deadline.from_record(asked.record(60.0)) == KEPT


@pytest.mark.parametrize(
    ("settings", "idle_s", "deadline"),
    [
        # A record from before settings were recorded: the watchdog on where it had an idle
        # time (as up armed it), the route's deadline and queue wait.
        ({}, None, Deadline(watchdog=False, keep=True)),
        ({}, 1800.0, Deadline(watchdog=True, idle_minutes=30.0, keep=True)),
        # An old ledger's settings (only the deadline recorded), and one with every flat key.
        (
            {"max_run_minutes": 60, "zones": ["us-central1-a"]},
            None,
            Deadline(60.0, False, keep=True),
        ),
        (
            {
                "zones": [],
                "failover": False,
                "fan_out": False,
                "watchdog": True,
                "idle_minutes": 30,
                "max_run_minutes": 120,
                "internal_ips": False,
                "service_account": None,
                "queue_wait_minutes": None,
                "packages": [],
                "jax": None,
            },
            1800.0,
            Deadline(120.0, watchdog=True, idle_minutes=30.0, keep=True),
        ),
        # Its recorded settings win over the idle time beside them (up --idle 0: none).
        ({"watchdog": False, "idle_minutes": None}, 1800.0, Deadline(watchdog=False, keep=True)),
        # Not numbers: none, as for a record we did not write.
        (
            {"max_run_minutes": "2h", "queue_wait_minutes": True},
            None,
            Deadline(watchdog=False, keep=True),
        ),
    ],
)
def test_the_deadline_is_read_back_from_a_kept_record(settings, idle_s, deadline):
    assert Deadline.from_record(settings, idle_s) == deadline


def test_a_kept_node_s_replacement_is_asked_with_the_deadline_its_old_record_holds():
    """An older version's ledger entry: its flat settings and the idle time beside them."""
    old = {"watchdog": True, "idle_minutes": 20, "max_run_minutes": 90, "queue_wait_minutes": None}
    r = Resource("node", "p", "us-central1-a", "dev", "v5litepod-4", "r1", "spot", "dev")
    entry = Entry(r, "kept", 1, 1, {SETTINGS_FIELD: old, "idle_s": 1200.0})
    answers = replacement_answers(entry)
    assert answers.deadline == Deadline(90.0, True, 20.0, keep=True)
    plan = plan_for_run("r2", Path("/tmp/r2"), answers, answers.where.backend)
    assert {key: kept_settings(plan)[key] for key in old} == {**old, "max_run_minutes": 90.0}


@pytest.mark.parametrize(
    ("asked", "route", "minutes"),
    [
        (None, "vm", 120),
        (None, "spot", 120),
        (None, "flex", 240),  # Flex-start's own default, not spot's
        (45.0, "vm", 45.0),
        (45.0, "flex", 45.0),
        (None, "kaggle", None),  # a free route's deadline is its own
        (None, "notebook", None),  # the wizard's first step, before a cloud route
        (30.0, "kaggle", 30.0),
    ],
)
def test_the_deadline_part_says_how_long_a_node_may_run_on_a_route(asked, route, minutes):
    # The wizard's Deadline field, its quit guard and plain mode's question show this; the
    # plan's deadline is the same rule.
    assert Deadline(asked).max_run(route) == minutes
    if minutes is not None and route in ("vm", "spot", "flex"):
        asked_where = Where(V5E, "us-central1-a", route=Route(route))
        answers = LaunchAnswers(asked_where, deadline=Deadline(asked))
        plan = plan_for_run("r1", Path("/tmp/r1"), answers, Backend.TPU_API)
        assert plan.max_run == minutes
