"""--autocheckpoint (issue 47 item 5): on by default where a run has --checkpoints on a TPU-API
node of v2-v4 or v5e; off with --no-autocheckpoint; asked where it cannot be, refused (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Resume


def plan(**fields) -> LaunchPlan:
    base = dict(
        accelerator="v5litepod-4",
        zone="us-central1-a",
        project="practice-project",
        run_id="r1",
        run_dir=Path("/tmp/r1"),
        route="spot",
        backend="tpu-api",
        resume=Resume("ckpt"),
    )
    return launch_plan(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "on"),
    [
        ({}, True),
        ({"accelerator": "v4-8", "zone": "us-central2-b"}, True),
        ({"resume": Resume("ckpt", autocheckpoint=False)}, False),
        ({"resume": Resume()}, False),
        ({"accelerator": "v6e-4", "zone": "us-east5-b"}, False),
        ({"backend": "compute"}, False),
    ],
)
def test_autocheckpoint_is_on_by_default_only_where_google_offers_it(fields, on):
    assert plan(**fields).autocheckpoint_on is on


def test_the_front_ends_offer_it_by_the_plans_one_rule():
    """What the wizard (LaunchPlan.autocheckpoint_offered) and plain mode (the look ahead's
    Outlook.offers_autocheckpoint, the same rule) offer is the rule the CLI refuses
    --autocheckpoint by."""
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.core.launch.plan.launch_plan import autocheckpoint_serves
    from tpuwizard.core.plan.catalog import parse_accelerator

    assert (
        plan().autocheckpoint_offered
        and plan(resume=Resume("ckpt", autocheckpoint=False)).autocheckpoint_offered
    )
    assert not plan(resume=Resume()).autocheckpoint_offered  # nothing to save into
    for name in ("v2-8", "v3-8", "v4-8", "v5litepod-1"):
        assert autocheckpoint_serves(parse_accelerator(name), Backend.TPU_API), name
    for name in ("v5p-8", "v6e-4"):
        assert not autocheckpoint_serves(parse_accelerator(name), Backend.TPU_API), name
    assert not autocheckpoint_serves(parse_accelerator("v5litepod-1"), Backend.COMPUTE)
    assert not autocheckpoint_serves(None, Backend.TPU_API)
    for fields in ({}, {"accelerator": "v6e-4", "zone": "us-east5-b"}, {"backend": "compute"}):
        offered = plan(**fields).autocheckpoint_offered
        refused = any(
            "--autocheckpoint is for" in str(p)
            for p in plan(**fields, resume=Resume("ckpt", autocheckpoint=True)).problems()
        )
        assert offered is not refused, fields


def test_asking_for_it_where_it_cannot_be_is_refused_saying_why():
    said = " ".join(
        str(p)
        for p in plan(accelerator="v6e-4", resume=Resume("ckpt", autocheckpoint=True)).problems()
    )
    assert "--autocheckpoint is for TPU-API nodes of v2, v3, v4 and v5e only" in said
    said = " ".join(str(p) for p in plan(resume=Resume(autocheckpoint=True)).problems())
    assert "--autocheckpoint needs --checkpoints DIR" in said
    assert not any(
        "autocheckpoint" in str(p)
        for p in plan(resume=Resume("ckpt", autocheckpoint=True)).problems()
    )


def test_the_launch_says_autocheckpoint_is_on_and_what_the_script_must_do():
    from tpuwizard.words.course_text import autocheckpoint_note

    said = autocheckpoint_note(plan().resume)
    assert "Autocheckpoint: on" in said and "--no-autocheckpoint" in said
    assert "SIGTERM" in said and "ckpt/" in said


@pytest.mark.parametrize(
    ("accelerator", "backend", "resume", "offered"),
    [
        ("v5litepod-4", "tpu-api", Resume("ckpt"), True),
        ("v4-8", "tpu-api", Resume("ckpt", autocheckpoint=False), True),  # offered, turned off
        ("v5litepod-4", "tpu-api", Resume(), False),  # nothing to save into
        ("v6e-4", "tpu-api", Resume("ckpt"), False),  # a generation Google does not serve
        ("v5litepod-4", "compute", Resume("ckpt"), False),  # not on Compute Engine
        ("v5litepod-4", None, Resume("ckpt"), False),  # the backend refused: nothing to offer
    ],
)
def test_the_look_ahead_offers_it_by_the_plans_rule_on_the_backend_it_decided(
    accelerator, backend, resume, offered
):
    """Plain mode asks Autocheckpoint before the plan is made: the look ahead answers it on
    the backend it decided (the answers' own is still auto), as the plan will."""
    from dataclasses import replace

    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.core.routes import Route
    from tpuwizard.session.prepare.outcomes import Outlook

    asked = plan(accelerator=accelerator, backend="auto", resume=resume)
    choice = BackendChoice(Backend(backend), "", "") if backend else None
    outlook = Outlook(Route.SPOT, choice)
    assert outlook.offers_autocheckpoint(asked.where, resume) is offered
    if choice is not None:
        decided = replace(asked, where=replace(asked.where, backend=choice.backend))
        assert decided.autocheckpoint_offered is offered
