"""The launch's vocabulary is typed: a route, a backend, a transport and a via are parsed once
where a person answers (here, the CLI's options) into the core's enums, the core compares
members, and the words written to the ledger and --json stay the words they always were."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import click
import pytest

from tpuwizard.commands.common import Words
from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.parts import Deadline, Where, Workload
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import CLOUD_ROUTES, Route


def test_an_option_word_becomes_the_enum_member():
    assert Words(Backend).convert("tpu-api", None, None) is Backend.TPU_API
    assert Words(Route).convert("kaggle", None, None) is Route.KAGGLE
    assert Words(Transport).convert("gcloud", None, None) is Transport.GCLOUD
    assert Words(Via).convert("resize-request", None, None) is Via.RESIZE_REQUEST


def test_an_option_takes_the_words_a_user_types_not_the_members_names():
    with pytest.raises(click.BadParameter):
        Words(Backend).convert("TPU_API", None, None)
    with pytest.raises(click.BadParameter):  # `up` makes a node: no free route there
        Words(Route, CLOUD_ROUTES).convert("kaggle", None, None)


def test_the_words_on_disk_and_in_json_are_unchanged():
    written = json.dumps({"route": Route.SPOT, "backend": Backend.COMPUTE, "via": Via.AUTO})
    assert written == '{"route": "spot", "backend": "compute", "via": "auto"}'


def test_a_plan_carries_every_answer_and_the_backend_decided_for_them():
    v6e = parse_accelerator("v6e-4")
    answers = LaunchAnswers(
        Where(v6e, "us-east5-b", "p", Route.FLEX, Backend.AUTO),
        deadline=Deadline(),
        workload=Workload(jax="0.6.2"),
    )
    plan = plan_for_run("r1", Path("runs/r1"), answers, Backend.COMPUTE)
    plan_fields = {f.name for f in fields(LaunchPlan)}
    assert plan.accelerator == "v6e-4" and plan.slice == v6e  # the plan holds its name
    for f in fields(LaunchAnswers):
        assert f.name in plan_fields, f"LaunchPlan has no {f.name}"
        if f.name not in ("where", "deadline"):
            assert getattr(plan, f.name) == getattr(answers, f.name), f.name
    assert plan.where == replace(answers.where, backend=Backend.COMPUTE)
    assert plan.backend is Backend.COMPUTE  # the decided one, never auto
    assert plan.deadline == Deadline(watchdog=False)  # the part as decided
    assert plan.watchdog is False  # None (the default) is decided off until a check says on
