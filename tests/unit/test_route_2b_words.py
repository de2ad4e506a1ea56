"""The wizard's Flex-start route on Compute Engine shows the course's Route 2B, the three gcloud
commands it stands for, with the plan's own names, and says what tpuwizard does in their place
(issue 32); the TPU API's Flex-start is not Route 2B and says nothing of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pytest

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import plan_for_run
from tpuwizard.core.launch.plan.parts import Where
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import Route
from tpuwizard.words.course_text import route_2b_lines

if TYPE_CHECKING:
    from tpuwizard.tui.screens.run import ProvisionScreen


def test_the_three_commands_carry_the_plan_s_names_and_the_course_s_flags():
    lines = route_2b_lines("tpuwizard-r1", "us-east5-a", parse_accelerator("v6e-4"), 240, "auto")
    template, mig, request = lines[1:4]
    assert "instance-templates create tpuwizard-r1-it --machine-type=ct6e-standard-4t" in template
    for flag in ("--provisioning-model=FLEX_START", "--max-run-duration=4h"):
        assert flag in template
    assert "--instance-termination-action=DELETE" in template
    assert (
        "managed create tpuwizard-r1 --zone=us-east5-a --template=tpuwizard-r1-it --size=0" in mig
    )
    assert "resize-requests create tpuwizard-r1 --zone=us-east5-a" in request
    assert "--resize-request=tpuwizard-r1-rr --resize-by=1" in request
    assert "one instance create" in lines[-1] and "verified" in lines[-1]


def test_what_tpuwizard_does_instead_follows_via_and_the_slice():
    assert (
        "these same three"
        in route_2b_lines("n", "z", parse_accelerator("v6e-4"), 60, "resize-request")[-1]
    )
    assert "bulk mode" in route_2b_lines("n", "z", parse_accelerator("v6e-16"), 60, "auto")[-1]


class SaidScreen:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def checking(self) -> None:
        pass

    def say(self, lines: list[str]) -> None:
        self.lines += lines


@pytest.mark.parametrize(("backend", "shown"), [("compute", True), ("tpu-api", False)])
def test_create_on_the_flex_route_says_route_2b_only_on_compute_engine(backend, shown):
    from tests.fakes import checked
    from tpuwizard.session.prepare.outcomes import Prepared, Ready
    from tpuwizard.tui.before_create import checked_plan

    answers = LaunchAnswers(Where(parse_accelerator("v6e-4"), "us-east5-a", "p", Route.FLEX))
    plan = plan_for_run("r1", Path("runs/r1"), answers, Backend(backend))
    passed = Prepared(answers, Ready(checked(plan)))  # what the session's pipeline let through

    def prepare(asked, found):
        assert asked is answers and found is None
        return passed

    app = SimpleNamespace(session=SimpleNamespace(prepare=prepare))
    screen = SaidScreen()
    # The stand-in has the two calls checked_plan makes of a ProvisionScreen.
    let_through = asyncio.run(checked_plan(app, cast("ProvisionScreen", screen), answers, None))
    assert let_through is not None and let_through.plan is plan
    said = "\n".join(screen.lines)
    assert ("Route 2B" in said) is shown
    assert ("resize-requests create tpuwizard-r1 --zone=us-east5-a" in said) is shown
