"""The on-VM watchdog meets Google as it is (google-behaviour.md "On the VM"): a 200 on DELETE
means accepted, not gone; a named service account goes on the node. Real client, real sandbox."""

import json
import time

import pytest
from tpuwizard_verify import tpu_watchdog

from tests.waiting import wait_until
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE = "us-central1-a"
RUN = "20261130-011500-ab12"


def reports(capsys):
    out = capsys.readouterr().out
    return [json.loads(line[10:]) for line in out.splitlines() if line.startswith("TPUWIZARD ")]


def run_watchdog(server, resource):
    return tpu_watchdog.main(
        [
            "--resource",
            resource,
            "--deadline",
            str(time.time()),
            "--endpoint",
            server.endpoint,
            "--iam-endpoint",
            server.endpoint,
            "--token",
            "none",
            "--retry",
            "0.1",
        ]
    )


def test_the_watchdog_reports_deleted_only_once_the_node_is_really_gone(sandbox, capsys):
    server, cloud = sandbox(delay=0)
    request = NodeRequest(
        zone=ZONE, node_id="wd", slice=parse_accelerator("v5litepod-1"), run_id=RUN
    )
    cloud.wait_for_node(ZONE, "wd", cloud.create_node(request), poll=0.05)
    assert run_watchdog(server, cloud.node_path(ZONE, "wd")) == 0
    # The sandbox, like Google, takes a moment to delete after accepting: the watchdog waited.
    assert cloud.get_node(ZONE, "wd") is None
    actions = [r["action"] for r in reports(capsys)]
    assert actions == ["check", "armed", "delete_accepted", "deleted"]


def test_a_spot_request_is_deleted_with_force_and_read_back_until_gone(sandbox, capsys):
    server, cloud = sandbox(delay=0)
    request = NodeRequest(
        zone=ZONE, node_id="wds", slice=parse_accelerator("v5litepod-1"), run_id=RUN, spot=True
    )
    cloud.create_queued(request, "wds-qr", "spot")
    wait_until(
        lambda: getattr(cloud.get_queued(ZONE, "wds-qr"), "state", None) == "ACTIVE",
        30,
        "the queued resource ACTIVE",
    )
    resource = f"projects/{cloud.project}/locations/{ZONE}/queuedResources/wds-qr"
    assert run_watchdog(server, resource) == 0
    assert cloud.get_queued(ZONE, "wds-qr") is None and cloud.get_node(ZONE, "wds") is None


@pytest.mark.parametrize("route", ["vm", "spot"])
def test_a_named_service_account_goes_on_the_node(sandbox, route):
    server, cloud = sandbox(delay=0)
    email = "tpu-runner@practice-project.iam.gserviceaccount.com"
    request = NodeRequest(
        zone=ZONE,
        node_id="sa",
        slice=parse_accelerator("v5litepod-1"),
        run_id=RUN,
        spot=route == "spot",
        service_account=email,
    )
    if route == "spot":
        cloud.create_queued(request, "sa-qr", "spot")
        queued = f"projects/{cloud.project}/locations/{ZONE}/queuedResources/sa-qr"
        stored = server.state.data["queued"][queued]["tpu"]["nodeSpec"][0]["node"]
    else:
        cloud.create_node(request)
        stored = server.state.data["nodes"][cloud.node_path(ZONE, "sa")]
    assert stored["serviceAccount"]["email"] == email
    assert stored["serviceAccount"]["scope"] == ["https://www.googleapis.com/auth/cloud-platform"]


def test_before_arming_the_launch_says_the_default_account_may_have_no_roles(tmp_path, home):
    from tests.integration.launch_helpers import launch

    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--watchdog",
        # The check before create cannot read the policy: armed, and the VM's check refuses.
        TPUWIZARD_SANDBOX_FAULTS="sa_no_delete=1;policy_unreadable=1",
    )
    assert code == 0, stderr
    kinds = [e["event"] for e in events]
    assert kinds.index("watchdog_account") < kinds.index("watchdog")
    notice = next(e for e in events if e["event"] == "watchdog_account")
    assert "since May 2024" in notice["detail"] and "--service-account EMAIL" in notice["detail"]
    refused = next(e for e in events if e["event"] == "watchdog")
    assert not refused["armed"] and "--service-account EMAIL" in refused["detail"]


def test_a_named_account_is_used_and_named_in_the_advice(tmp_path, home):
    from tests.integration.launch_helpers import launch

    email = "runner@tpuwizard-practice.iam.gserviceaccount.com"
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--watchdog",
        "--service-account",
        email,
        TPUWIZARD_SANDBOX_FAULTS="sa_no_delete=1;policy_unreadable=1",
    )
    assert code == 0, stderr
    notice = next(e for e in events if e["event"] == "watchdog_account")
    assert notice["account"] == email
    refused = next(e for e in events if e["event"] == "watchdog")
    assert f"--member=serviceAccount:{email}" in refused["detail"]


def test_a_service_account_that_is_not_an_email_is_refused_before_any_call(tmp_path):
    from tests.integration.launch_helpers import launch

    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--service-account", "runner"
    )
    assert code == 2 and events == [] and "not a service account email" in stderr


@pytest.mark.parametrize("practice", [False, True])
def test_a_watchdog_whose_api_stops_answering_gives_up_after_a_bounded_time(
    sandbox, capsys, practice
):
    """Issue 22, item 15: it retried for ever. On Google it waits out its deadline whatever the
    API does and then tries for --give-up-after; in practice it ends once the sandbox is off."""
    import threading

    server, cloud = sandbox(delay=0)
    request = NodeRequest(
        zone=ZONE, node_id="wd", slice=parse_accelerator("v5litepod-1"), run_id=RUN
    )
    cloud.wait_for_node(ZONE, "wd", cloud.create_node(request), poll=0.05)
    # Practice: far from its deadline; Google: a deadline soon, so the give-up window follows it.
    deadline = time.time() + (7200 if practice else 0.5)
    arguments = ["--resource", cloud.node_path(ZONE, "wd"), "--deadline", str(deadline)]
    arguments += ["--endpoint", server.endpoint, "--iam-endpoint", server.endpoint]
    arguments += ["--token", "none", "--retry", "0.05", "--give-up-after", "0.5"]
    arguments += ["--give-up-before-deadline"] if practice else []
    codes: list[int] = []
    seen: list[dict] = []  # capsys hands each printed line over once
    watchdog = threading.Thread(target=lambda: codes.append(tpu_watchdog.main(arguments)))
    watchdog.start()

    def armed_or_ended() -> bool:
        seen.extend(reports(capsys))
        return "armed" in [r["action"] for r in seen] or not watchdog.is_alive()

    wait_until(armed_or_ended, 30, "the watchdog armed")
    assert "armed" in [r["action"] for r in seen]
    server.shutdown()  # the API stops answering: nothing listens on its port any more
    server.server_close()
    watchdog.join(timeout=60)
    assert not watchdog.is_alive(), "the watchdog retried an API that never answers for ever"
    assert codes == [4]
    gave_up = [r for r in seen + reports(capsys) if r["action"] == "gave_up"]
    assert gave_up and not gave_up[0]["ok"] and "has not answered" in gave_up[0]["error"]
