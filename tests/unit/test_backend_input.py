"""The backend on the command line and in the plan: an impossible pair, a watchdog or an idle
deadline where Google's deadline is the only one, a queue wait out of Google's bounds: each is
exit 2 before any call, saying why and what to type; and the plan's words say whose deadline it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plans import launch_plan
from tests.unit.test_cli_bad_input import _no_sandbox, here, refused  # noqa: F401 (fixtures)
from tpuwizard.core.launch.plan.backend_rules import queue_wait_seconds
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline, Reach
from tpuwizard.words.choice_words import all_words

V6E = ["--sandbox", "--accelerator", "v6e-4", "--zone", "us-east5-b"]


@pytest.mark.parametrize("command", ["launch", "up"])
def test_v5e_on_compute_engine_is_refused_saying_what_to_type(home, here, command):  # noqa: F811
    args = [command, "--sandbox", "--accelerator", "v5litepod-4", "--zone", "us-central1-a"]
    stderr = refused(home, *args, "--backend", "compute")
    assert "--backend tpu-api" in stderr


@pytest.mark.parametrize("command", ["launch", "up"])
def test_tpu7x_on_the_tpu_api_is_refused(home, here, command):  # noqa: F811
    args = [command, "--sandbox", "--accelerator", "tpu7x-8", "--zone", "us-central1-c"]
    assert "--backend compute" in refused(home, *args, "--backend", "tpu-api")


def test_the_watchdog_on_compute_engine_is_refused_google_deletes_it(home, here):  # noqa: F811
    stderr = refused(home, "launch", *V6E, "--backend", "compute", "--watchdog")
    assert "no on-VM watchdog" in stderr and "--no-watchdog" in stderr


def test_an_idle_deadline_on_compute_engine_is_refused_with_the_deadline_to_give(home, here):  # noqa: F811
    stderr = refused(home, "up", *V6E, "--backend", "compute", "--idle", "10")
    assert "--idle needs the on-VM watchdog" in stderr and "--max-run" in stderr


def test_a_queue_wait_over_two_hours_on_compute_engine_is_refused(home, here):  # noqa: F811
    stderr = refused(
        home, "launch", *V6E, "--route", "flex", "--backend", "compute", "--queue-wait", "121"
    )
    assert "0 to 120 minutes" in stderr


def test_a_queue_wait_without_flex_start_is_refused(home, here):  # noqa: F811
    stderr = refused(home, "launch", *V6E, "--backend", "compute", "--queue-wait", "30")
    assert "Flex-start's wait for capacity" in stderr


def test_the_gcloud_transport_on_compute_engine_is_refused(home, here):  # noqa: F811
    stderr = refused(home, "launch", *V6E, "--backend", "compute", "--transport", "gcloud")
    assert "reaches TPU API nodes only" in stderr


def plan(**fields) -> LaunchPlan:
    base = dict(
        accelerator="v6e-4",
        zone="us-east5-b",
        project="practice-project",
        run_id="r1",
        run_dir=Path("/tmp/r1"),
    )
    return launch_plan(**{**base, **fields})


def test_compute_engines_deadline_is_googles_in_the_words():
    words = plan(backend="compute").deadline_words(0.0)
    assert "Google deletes it at" in words and "Compute Engine's max run duration" in words
    assert "watchdog" not in plan(backend="compute").deadline_words(0.0)


def test_a_compute_engine_slice_s_deadline_is_not_said_to_be_google_s():
    # Its VMs' max run duration ends them, but the MIG may recreate them (compute-engine.md).
    words = plan(backend="compute", accelerator="v6e-16").deadline_words(0.0)
    assert "Not Google's deadline" in words and "tpuwizard deletes the whole slice" in words
    assert "Google deletes" not in words and "Google ends" not in words


def test_a_deadline_under_thirty_seconds_is_refused_on_compute_engine_only():
    assert any(
        "30 seconds" in p
        for p in all_words(plan(backend="compute", deadline=Deadline(0.2)).problems(), "cli")
    )
    assert not plan(backend="tpu-api", deadline=Deadline(0.2)).problems()


def test_the_queue_wait_defaults_to_two_hours_and_only_for_flex_start():
    flex = plan(route="flex").where
    assert queue_wait_seconds(flex, None) == 7200.0
    assert queue_wait_seconds(flex, 0) == 0.0
    assert queue_wait_seconds(plan(route="vm").where, None) is None


def test_zones_narrowed_to_a_backend_lists_only_where_it_offers_the_type_with_a_price():
    import json

    from click.testing import CliRunner

    from tpuwizard.cli import main

    def zones(*args: str):
        return CliRunner().invoke(main, ["zones", "--offline", "--json", *args])

    both = json.loads(zones("--accelerator", "v6e-4").stdout)
    assert both["zones"] and all(p and p > 0 for p in both["price_per_hour_usd"].values())
    on_compute = json.loads(zones("--accelerator", "tpu7x-8", "--backend", "compute").stdout)
    assert list(on_compute["zones"]) == ["us-central1-c"]
    none = zones("--accelerator", "tpu7x-8", "--backend", "tpu-api")
    assert none.exit_code == 1 and json.loads(none.stdout)["zones"] == {}
    assert zones("--backend", "compute").exit_code == 2  # narrows nothing without a type


def test_a_zero_queue_wait_on_compute_engine_says_it_gets_googles_smallest():
    from tpuwizard.session.backend import backend_notes

    (note,) = backend_notes(
        plan(backend="compute", route="flex", deadline=Deadline(queue_wait_minutes=0))
    )
    assert "at least 90 s" in note
    assert (
        backend_notes(
            plan(backend="tpu-api", route="flex", deadline=Deadline(queue_wait_minutes=0))
        )
        == []
    )
    assert (
        backend_notes(
            plan(backend="compute", route="flex", deadline=Deadline(queue_wait_minutes=30))
        )
        == []
    )
    (nat,) = backend_notes(plan(backend="compute", reach=Reach(internal_ips=True)))
    assert "Cloud NAT" in nat


@pytest.mark.parametrize(
    ("args", "ways"),
    [
        (["up", "--accelerator", "v6e-16", "--zone", "us-east5-b"], ["v6e-8", "--backend tpu-api"]),
        (
            ["launch", "--accelerator", "v5p-16", "--zone", "us-east5-a", "--keep"],
            ["v5p-8", "--backend tpu-api"],
        ),
        (["up", "--accelerator", "tpu7x-16", "--zone", "us-central1-c"], ["tpu7x-8"]),
    ],
)
def test_a_kept_slice_on_compute_engine_is_refused_nothing_would_end_its_mig(
    home,
    here,  # noqa: F811
    args,
    ways,
):
    # At its time limit the MIG deletes the VM, but the MIG, template and policy stay.
    stderr = refused(home, *args, "--sandbox", "--backend", "compute", "--max-run", "30")
    assert "the MIG, its template and its workload policy stay until deleted" in stderr
    assert all(way in stderr for way in ways), stderr
    if "tpu7x" in args[2]:
        assert "--backend tpu-api" not in stderr  # the TPU API does not serve TPU7x


def test_an_unkept_slice_on_compute_engine_and_a_kept_single_vm_are_allowed():
    assert plan(backend="compute", accelerator="v6e-16").problems() == []
    assert (
        plan(backend="compute", accelerator="v6e-8", deadline=Deadline(keep=True)).problems() == []
    )
