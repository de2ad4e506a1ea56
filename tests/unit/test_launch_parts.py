"""The launch's parts (core/launch/plan/parts.py): each is carried whole from the answers to the
plan, and the kept record holds each part's own record, read back from old ledgers too."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.parts import Guards, Reach
from tpuwizard.core.plan.catalog import parse_accelerator


def test_the_answers_parts_reach_the_plan_whole():
    guards = Guards(stall_minutes=12.5, join_timeout_s=40, heartbeat_timeout_s=90)
    reach = Reach(
        Transport.GCLOUD, internal_ips=True, service_account="a@p.iam.gserviceaccount.com"
    )
    asked = LaunchAnswers(
        parse_accelerator("v5litepod-4"), "us-central1-a", guards=guards, reach=reach
    )
    plan = plan_for_run("r1", Path("/tmp/r1"), asked, Backend.TPU_API)
    assert plan.guards is guards and plan.reach is reach


def test_no_part_s_value_is_also_a_flat_field_of_the_answers_or_the_plan():
    parted = {f.name for part in (Guards, Reach) for f in fields(part)}
    for whole in (LaunchAnswers, LaunchPlan):
        assert parted.isdisjoint(f.name for f in fields(whole)), whole


@pytest.mark.parametrize(
    ("settings", "reach"),
    [
        ({}, Reach()),  # a record from before settings were recorded: the defaults
        ({"internal_ips": False, "service_account": None}, Reach()),
        (
            {"internal_ips": True, "service_account": "a@p.iam.gserviceaccount.com"},
            Reach(internal_ips=True, service_account="a@p.iam.gserviceaccount.com"),
        ),
        ({"service_account": 7}, Reach()),  # not an account: none, as a record we did not write
    ],
)
def test_reach_is_read_back_from_a_kept_record(settings, reach):
    assert Reach.from_record(settings) == reach


def test_reach_s_record_is_what_it_reads_back():
    reach = Reach(internal_ips=True, service_account="a@p.iam.gserviceaccount.com")
    assert Reach.from_record(reach.record()) == reach
    # The transport is the login's (recorded with it), given back by whoever reads the login.
    assert Reach.from_record(reach.record(), Transport.GCLOUD).transport is Transport.GCLOUD
