"""Who ends a node at its deadline, Google or the watchdog, and how, is decided once
(plan/deadline_keeper.py, issue 38): the plan's words and rules, the Kept record, the wizard's
Review and plain mode read that one answer, and its words on disk stay as older ledgers have
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
from tpuwizard.core.routes import Route
from tpuwizard.session.watchdog import default_watchdog


@pytest.mark.parametrize(
    ("route", "backend", "watchdog", "googles", "ended_by", "max_run_duration"),
    [
        ("vm", "tpu-api", True, None, EndedBy.WATCHDOG, False),
        ("spot", "tpu-api", False, None, EndedBy.NOTHING, False),
        ("flex", "tpu-api", False, "Flex-start", EndedBy.GOOGLE, False),
        ("flex", "compute", False, "Flex-start", EndedBy.GOOGLE, True),
        ("vm", "compute", False, "Compute Engine", EndedBy.GOOGLE, True),
        ("spot", "compute", True, "Compute Engine", EndedBy.GOOGLE, True),
    ],
)
def test_who_ends_a_node_at_its_deadline(
    route, backend, watchdog, googles, ended_by, max_run_duration
):
    keeper = DeadlineKeeper(Route(route), Backend(backend), watchdog)  # the table's words, parsed
    assert keeper.googles == googles and keeper.ended_by is ended_by
    assert keeper.by_max_run_duration is max_run_duration
    plan = launch_plan(
        "v6e-4", "us-east5-b", "p", "r1", Path("/tmp/r1"), route, backend=backend, watchdog=watchdog
    )
    assert plan.deadline_keeper == keeper
    # Every front end's switch starts off where Google keeps the deadline.
    assert not (googles and default_watchdog(keeper.route, None, keeper.backend))


def test_the_words_on_disk_are_the_ledgers_own():
    assert json.dumps({"ended_by": EndedBy.GOOGLE}) == '{"ended_by": "google"}'
    assert {e.value for e in EndedBy} == {"google", "watchdog", "nothing"}


def test_ended_by_is_typed_where_it_is_held():
    # The event, the kept record and the keeper hold an EndedBy, not its word: mypy then refuses
    # a module that spells the word out to decide again (the ast scan this replaces).
    from typing import get_type_hints

    from tpuwizard.core.launch.events.launch_events import Kept
    from tpuwizard.core.launch.kept.record import KeptRecord

    assert get_type_hints(Kept)["ended_by"] is EndedBy
    assert get_type_hints(KeptRecord)["ended_by"] == EndedBy | None
    ended_by = DeadlineKeeper.__dict__["ended_by"]
    assert isinstance(ended_by, property) and ended_by.fget is not None
    assert get_type_hints(ended_by.fget)["return"] is EndedBy


def test_a_kept_record_reads_its_word_as_the_enum():
    from tpuwizard.core.launch.kept.record import _ended_by

    assert _ended_by("google") is EndedBy.GOOGLE
    assert _ended_by(None) is None and _ended_by("someone") is None  # a word this version lacks
