"""The launch's parts (core/launch/plan/parts.py): each is carried whole from the answers to the
plan, and the kept record holds each part's own record, read back from old ledgers too."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.cloud.backends import Backend, Transport, Via
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_settings, replacement_answers
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.backend_rules import backend_problems, queue_wait_seconds
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.parts import Guards, Reach, Where
from tpuwizard.core.launch.plan.via_rules import refuse_early, via_problems
from tpuwizard.core.launch.plan.zone_rules import fails_over, probes, zones_of, zones_problems
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import Route
from tpuwizard.words.choice_words import all_words


def test_the_answers_parts_reach_the_plan_whole():
    guards = Guards(stall_minutes=12.5, join_timeout_s=40, heartbeat_timeout_s=90)
    reach = Reach(
        Transport.GCLOUD, internal_ips=True, service_account="a@p.iam.gserviceaccount.com"
    )
    where = Where(parse_accelerator("v5litepod-4"), "us-central1-a", zones=("us-central1-a",))
    asked = LaunchAnswers(where, guards=guards, reach=reach)
    plan = plan_for_run("r1", Path("/tmp/r1"), asked, Backend.TPU_API)
    assert plan.guards is guards and plan.reach is reach
    # Where as decided: the same part on the backend the session chose for it.
    assert plan.where == replace(where, backend=Backend.TPU_API)


def test_no_part_s_value_is_also_a_flat_field_of_the_answers_or_the_plan():
    parted = {f.name for part in (Guards, Reach, Where) for f in fields(part)}
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


# -- Where: the node's slice, zones, route, backend and via, and the rules that read it --------
V5E, V6E, V6E_16 = (parse_accelerator(n) for n in ("v5litepod-4", "v6e-4", "v6e-16"))
A, B, C = "us-east5-a", "us-east5-b", "us-central1-b"  # zones that offer v6e
TPU, CE = Backend.TPU_API, Backend.COMPUTE
RESIZE = Via.RESIZE_REQUEST


def said(found) -> str:
    return " | ".join(all_words(found, "cli"))


@pytest.mark.parametrize(
    ("where", "queue_wait", "words"),
    [
        (Where(V6E, A, backend=TPU, zones=(A, B)), None, ""),
        (Where(V6E, A, backend=TPU, zones=(A, A)), None, "listed more than once"),
        (Where(V6E, A, backend=TPU, zones=(B, A)), None, "must be its first"),
        (Where(V6E, A, backend=TPU, zones=(A, "us-west1-c")), None, "not offered in us-west1-c"),
        (Where(V6E, A, backend=TPU, zones=(A,), fan_out=True), None, "give two or more"),
        (Where(V6E, A, "", Route.SPOT, TPU, zones=(A, B)), None, "for creates that fail fast"),
        (Where(V6E, A, "", Route.SPOT, TPU, zones=(A, B), fan_out=True), None, ""),
        (Where(V6E, A, "", Route.FLEX, CE, zones=(A, B)), None, ""),
        (Where(V6E, A, "", Route.FLEX, CE, zones=(A, B)), 30.0, "zero queue wait"),
        (Where(V6E, A, "", Route.FLEX, CE, zones=(A, B), fan_out=True), 30.0, ""),
    ],
)
def test_where_s_zones_are_refused_only_as_their_rule_says(where, queue_wait, words):
    found = said(zones_problems(where, queue_wait))
    assert (words in found) if words else found == "", found


@pytest.mark.parametrize(
    ("where", "zones", "serial", "probe"),
    [
        (Where(V6E, A), (A,), False, False),
        (Where(V6E, A, zones=(A, B)), (A, B), True, False),
        (Where(V6E, A, failover=True), (A,), True, False),
        (Where(V6E, A, zones=(A, B), fan_out=True), (A, B), False, False),
        (Where(V6E, A, "", Route.FLEX, CE, zones=(A, B)), (A, B), True, True),
        (Where(V6E, A, "", Route.FLEX, TPU, zones=(A, B)), (A, B), True, False),
    ],
)
def test_where_says_which_zones_are_tried_and_how(where, zones, serial, probe):
    assert (zones_of(where), fails_over(where), probes(where)) == (zones, serial, probe)


@pytest.mark.parametrize(
    ("where", "keep", "max_run", "words"),
    [
        (Where(V6E, A), True, 5.0, ""),  # the default via: nothing to refuse
        (Where(V6E, A, "", Route.FLEX, CE, via=RESIZE), False, 60.0, ""),
        (Where(V6E, A, "", Route.VM, TPU, via=RESIZE), False, 60.0, "needs --backend compute"),
        (Where(V6E, A, "", Route.VM, CE, via=RESIZE), False, 60.0, "not the vm route"),
        (Where(V5E, A, "", Route.FLEX, CE, via=RESIZE), False, 60.0, "ct5lp-hightpu-4t"),
        (Where(V6E_16, A, "", Route.FLEX, CE, via=RESIZE), False, 60.0, "multi-host slice"),
        (Where(V6E, A, "", Route.FLEX, CE, via=RESIZE), True, 60.0, "Leave out --keep"),
        (Where(V6E, A, "", Route.FLEX, CE, via=RESIZE), False, 5.0, "--max-run 10 or more"),
        (
            Where(V6E, A, "", Route.FLEX, CE, zones=(A, B), fan_out=True, via=RESIZE),
            False,
            60.0,
            "leave out --fan-out",
        ),
    ],
)
def test_where_s_via_is_refused_only_as_its_rule_says(where, keep, max_run, words):
    found = said(via_problems(where, keep, max_run))
    assert (words in found) if words else found == "", found


def test_the_early_via_refusal_judges_the_backend_route_and_type_and_leaves_the_zones():
    fanned = Where(V6E, A, "", Route.FLEX, CE, zones=(A, B), fan_out=True, via=RESIZE)
    refuse_early(fanned)  # the fan-out is the plan's to refuse, beside its other rules
    with pytest.raises(BadInput, match="needs --backend compute"):
        refuse_early(replace(fanned, backend=TPU))


@pytest.mark.parametrize(
    ("where", "keep", "max_run", "queue_wait", "watchdog", "words"),
    [
        (Where(V6E, A, backend=TPU), True, 60.0, None, True, ""),
        (Where(V6E, A, backend=CE), False, 60.0, None, False, ""),
        (Where(V6E_16, A, backend=CE), True, 60.0, None, False, "A kept v6e-16 on Compute"),
        (Where(V6E, A, backend=CE), True, 60.0, None, False, ""),  # one VM Google deletes
        (Where(V6E, A, backend=CE), False, 0.2, None, False, "at least 30 seconds"),
        (Where(V6E, A, backend=CE), False, 60.0, None, True, "no on-VM watchdog"),
        (Where(V6E, A, backend=TPU), False, 60.0, 30.0, False, "the vm route has none"),
        (Where(V6E, A, "", Route.FLEX, CE), False, 60.0, 200.0, False, "0 to 120 minutes"),
        (Where(V6E, A, "", Route.FLEX, CE), False, 60.0, 120.0, False, ""),
    ],
)
def test_where_s_backend_is_refused_only_as_its_rule_says(
    where, keep, max_run, queue_wait, watchdog, words
):
    found = said(backend_problems(where, keep, max_run, queue_wait, watchdog))
    assert (words in found) if words else found == "", found


def test_only_flex_start_waits_for_capacity():
    flex = Where(V6E, A, "", Route.FLEX, CE)
    assert (queue_wait_seconds(flex, None), queue_wait_seconds(flex, 0.0)) == (7200.0, 0.0)
    assert queue_wait_seconds(Where(V6E, A), 30.0) is None


def made(where: Where) -> Resource:
    """The resource record a node of ``where`` was made with (the ledger's own fields)."""
    return Resource(
        "node", where.project, where.zone, "dev", where.slice.name, "r1", where.route,
        backend=where.backend, via=where.via,
    )  # fmt: skip


def test_where_s_record_is_what_it_reads_back():
    where = Where(V6E, A, "p", Route.SPOT, CE, zones=(A, B, C), failover=True)
    assert Where.from_record(where.record(), made(where)) == where
    fanned = Where(V6E, A, "p", Route.FLEX, TPU, zones=(A, B), fan_out=True)
    assert Where.from_record(fanned.record(), made(fanned)) == fanned


def test_where_is_read_back_from_old_ledgers():
    # The settings' keys as every version since --zones wrote them, beside the other parts'.
    old = {"zones": [A, B, C], "failover": True, "fan_out": False, "watchdog": True, "jax": None}
    r = Resource("node", "p", B, "dev", "v6e-4", "r1", "spot")  # before backend and via
    assert Where.from_record(old, r) == Where(V6E, B, "p", Route.SPOT, TPU, zones=(A, B, C),
                                              failover=True)  # fmt: skip
    # A record from before settings were recorded: its one zone, no failover.
    assert Where.from_record({}, r) == Where(V6E, B, "p", Route.SPOT, TPU)
    # The replacement starts in the zone the node was made in, then the zones after it.
    answers = replacement_answers(Entry(r, "kept", 1, 1, {SETTINGS_FIELD: old}))
    assert answers.where == Where(V6E, B, "p", Route.SPOT, TPU, zones=(B, C, A), failover=True)


def test_a_kept_plan_records_where_under_the_keys_old_versions_wrote():
    plan = launch_plan("v6e-4", A, "p", "r1", Path("/tmp/r1"), Route.SPOT, zones=(A, B))
    settings = kept_settings(plan)
    assert {k: settings[k] for k in ("zones", "failover", "fan_out")} == {
        "zones": [A, B],
        "failover": False,
        "fan_out": False,
    }


@pytest.mark.parametrize(
    ("route", "resumes"),
    [(Route.VM, False), (Route.SPOT, True), (Route.FLEX, False), (Route.KAGGLE, False)],
)
def test_the_where_part_says_whether_its_route_resumes_after_a_preemption(route, resumes):
    # `up` offers --checkpoints, and the wizard its Checkpoints question, on these routes only.
    assert Where(parse_accelerator("v5litepod-4"), route=route).resumes is resumes
