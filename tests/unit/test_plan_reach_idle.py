"""How the workers are reached and a kept node's idle deadline are the plan's rules
(plan/reach_rules.py, plan/idle_rules.py): every front end refuses the same plans with the same
facts, each in its own words, and the CLI exits 2 before any call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plans import launch_plan
from tests.unit.test_cli_bad_input import UP, _no_sandbox, here, refused  # noqa: F401 (fixtures)
from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline, Reach
from tpuwizard.core.routes import Route
from tpuwizard.words.choice_words import all_words


def plan(**fields) -> LaunchPlan:
    base = dict(
        accelerator="v6e-4",
        zone="us-east5-b",
        project="practice-project",
        run_id="r1",
        run_dir=Path("/tmp/r1"),
    )
    return launch_plan(**{**base, **fields})


def cli(p: LaunchPlan) -> str:
    return " ".join(all_words(p.problems(), "cli"))


def test_gcloud_s_ssh_on_compute_engine_is_refused_with_both_ways_on():
    words = cli(plan(backend="compute", reach=Reach(Transport.GCLOUD)))
    assert "reaches TPU API nodes only" in words
    assert "--transport ssh" in words and "--backend tpu-api" in words
    assert plan(backend="compute").problems() == []
    assert plan(reach=Reach(Transport.GCLOUD)).problems() == []  # the TPU API: gcloud reaches it


def test_internal_ips_need_iap_on_the_tpu_api_and_are_refused_on_compute_engine():
    assert "add --transport gcloud" in cli(plan(reach=Reach(internal_ips=True)))
    assert plan(reach=Reach(Transport.GCLOUD, internal_ips=True)).problems() == []
    # Nothing here reaches a Compute Engine VM without an external address: refused.
    assert "no IAP transport for Compute Engine" in cli(
        plan(reach=Reach(internal_ips=True), backend="compute")
    )


def test_an_unknown_transport_is_refused_where_it_is_read(home, here):  # noqa: F811
    # The Reach part holds a Transport: a word that is none is refused at the edge, exit 2.
    stderr = refused(home, *UP, "--transport", "telnet")
    assert "telnet" in stderr and "ssh" in stderr and "gcloud" in stderr


@pytest.mark.parametrize(
    ("fields", "whose"),
    [
        ({"route": "flex", "zone": "us-east5-a"}, "Flex-start"),
        ({"backend": "compute"}, "Compute Engine"),
    ],
)
def test_an_idle_deadline_where_google_s_is_the_only_one_is_refused(fields, whose):
    words = cli(plan(deadline=Deadline(idle_minutes=10.0), **fields))
    assert f"--idle needs the on-VM watchdog, which {whose} does not have" in words
    assert "--max-run MINUTES" in words and "leave --idle out" in words
    assert plan(**fields).problems() == []  # without it the plan may run


def test_an_idle_deadline_without_the_watchdog_is_refused_and_with_it_allowed():
    assert "which this plan goes without" in cli(plan(deadline=Deadline(idle_minutes=10.0)))
    assert plan(deadline=Deadline(watchdog=True, idle_minutes=10.0)).problems() == []


def test_whose_deadline_is_said_once():
    assert DeadlineKeeper(Route.FLEX, Backend.TPU_API).googles == "Flex-start"
    assert DeadlineKeeper(Route.FLEX, Backend.COMPUTE).googles == "Flex-start"
    assert DeadlineKeeper(Route.SPOT, Backend.COMPUTE).googles == "Compute Engine"
    assert DeadlineKeeper(Route.VM, Backend.TPU_API, watchdog=True).googles is None


def test_up_refuses_an_idle_deadline_on_flex_start_before_any_call(home, here):  # noqa: F811
    args = ["up", "--sandbox", "--accelerator", "v6e-4", "--zone", "us-east5-a"]
    stderr = refused(home, *args, "--route", "flex", "--idle", "10")
    assert "--idle needs the on-VM watchdog, which Flex-start does not have" in stderr


def test_up_refuses_an_idle_deadline_with_no_watchdog(home, here):  # noqa: F811
    stderr = refused(home, *UP, "--no-watchdog", "--idle", "10")
    assert "--idle needs the on-VM watchdog, which this plan goes without" in stderr
