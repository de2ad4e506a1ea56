"""Who ends a node at its deadline, Google or the watchdog, and how, is decided once
(plan/deadline_keeper.py, issue 38): the plan's words and rules, the Kept record, the wizard's
Review and plain mode read that one answer, and its words on disk stay as older ledgers have
them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper, EndedBy
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.session.watchdog import default_watchdog

PACKAGE = Path(__file__).resolve().parents[2] / "tpuwizard"


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
    keeper = DeadlineKeeper(route, backend, watchdog)
    assert keeper.googles == googles and keeper.ended_by is ended_by
    assert keeper.by_max_run_duration is max_run_duration
    plan = LaunchPlan(
        "v6e-4", "us-east5-b", "p", "r1", Path("/tmp/r1"), route, backend=backend, watchdog=watchdog
    )
    assert plan.deadline_keeper == keeper
    # Every front end's switch starts off where Google keeps the deadline.
    assert not (googles and default_watchdog(route, None, backend))


def test_the_words_on_disk_are_the_ledgers_own():
    assert json.dumps({"ended_by": EndedBy.GOOGLE}) == '{"ended_by": "google"}'
    assert {e.value for e in EndedBy} == {"google", "watchdog", "nothing"}


def test_ended_by_is_compared_with_the_typed_value_only():
    # A module comparing or setting ``ended_by`` with its word spelled out would decide again;
    # the event's own default (events sit below the plan) is the one word left.
    words = {e.value for e in EndedBy}
    spelled: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Compare | ast.Assign | ast.AnnAssign | ast.keyword):
                continue
            text = ast.unparse(node)
            if "ended_by" not in text:
                continue
            constants = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant)}
            if constants & words:
                spelled.append(f"{path.relative_to(PACKAGE)}: {text}")
    assert spelled == ["core/launch/events/launch_events.py: ended_by: str = 'nothing'"]
