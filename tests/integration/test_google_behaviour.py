"""The sandbox behaves as Google does by default (reference/google-behaviour.md), and the real
client survives it. Every test drives ``TpuCloud`` (the real google-cloud-tpu client) or the CLI."""

import json
import subprocess
from typing import Any

import pytest
import requests
from google.api_core import exceptions as gx

from tests.conftest import clean_env, tpuwizard_cmd
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed, QueueExpired, Unreachable
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.reach import check_reachable
from tpuwizard.words.choice_words import all_words

ZONE = "us-central1-a"
RUN = "20261129-152500-ab12"


def request(node_id="tpu-a", accelerator="v5litepod-4", zone=ZONE, **kw):
    return NodeRequest(
        zone=zone, node_id=node_id, slice=parse_accelerator(accelerator), run_id=RUN, **kw
    )


def stored_qr(server, qr_id, zone=ZONE):
    return server.state.data["queued"][
        f"projects/practice-project/locations/{zone}/queuedResources/{qr_id}"
    ]


def test_external_addresses_only_when_the_create_asks(sandbox):
    _, cloud = sandbox(delay=0)
    # A raw API create without networkConfig: internal addresses only (gb:11-16).
    cloud.client.create_node(
        parent=cloud.parent(ZONE),
        node_id="raw",
        node=cloud.tpu_v2.Node(
            accelerator_type="v5litepod-16", runtime_version="v2-alpha-tpuv5-lite"
        ),
    )
    raw = cloud.wait_for_node(ZONE, "raw", poll=0.05)
    assert raw.internal_only == (0, 1, 2, 3)
    assert all(a.startswith("127.") and a != "127.0.0.1" for a in raw.addresses)
    with pytest.raises(Unreachable) as caught:
        check_reachable(raw, None)
    assert caught.value.workers == [0, 1, 2, 3]
    # tpuwizard asks for external addresses, as gcloud does; each worker is reached by its own.
    ours = cloud.wait_for_node(ZONE, "ours", cloud.create_node(request("ours", "v5litepod-16")))
    assert ours.internal_only == ()
    assert ours.addresses == ("127.0.0.1",) * 4 and len(ours.endpoints) == 4
    assert ours.uid.isdigit() and ours.uid != raw.uid


def test_a_worker_without_external_address_fails_fast_with_a_diagnosis(sandbox):
    _, cloud = sandbox(delay=0)
    op = cloud.create_node(request(external_ips=False))
    node = cloud.wait_for_node(ZONE, "tpu-a", op, poll=0.05)
    # The internal address is loopback where nothing listens: refused at once, never routed.
    with pytest.raises(Unreachable) as caught:
        check_reachable(node, 22, timeout=2)
    d = diagnose(caught.value)
    assert d.kind == "unreachable_workers"
    assert any("--transport gcloud" in s for s in all_words(d.next_steps, "cli"))


def test_locations_hide_ai_zones_until_visible_and_list_one_the_project_may_not_use(sandbox):
    _, cloud = sandbox()
    zones = cloud.list_zones()
    assert "europe-west1-b" in zones and not any("-ai1" in z for z in zones)
    # Hidden, yet served when named: Google's visibility "doesn't restrict API endpoints".
    assert "v6e-4" in cloud.accelerator_types("us-south1-ai1b")
    _, visible = sandbox("ai_zones_visible=1", folder="visible")
    ai = {"us-central1-ai1a", "us-central1-ai1", "us-south1-ai1b"}
    assert ai <= set(visible.list_zones())
    with pytest.raises(gx.Forbidden) as caught:
        cloud.list_nodes("europe-west1-b")
    assert caught.value.message.endswith(
        ": Location europe-west1-b is not found or access is unauthorized."
    )
    d = diagnose(caught.value, Context(project="practice-project", zone="europe-west1-b"))
    assert d.kind == "zone_unavailable" and "not available to your project" in d.title
    assert "role" not in " ".join(all_words(d.next_steps, "cli")).lower()


def test_tpu7x_is_not_an_accelerator_type_of_this_api(sandbox):
    _, cloud = sandbox()
    assert not any(t.startswith("tpu7x") for t in cloud.accelerator_types("us-central1-c"))
    with pytest.raises(gx.BadRequest):
        cloud.create_node(request("seven", "tpu7x-8", zone="us-central1-c"))


def test_launch_refuses_tpu7x_on_the_tpu_api_saying_to_use_compute_engine(tmp_path):
    args = ("--accelerator", "tpu7x-8", "--zone", "us-central1-c", "--backend", "tpu-api")
    proc = subprocess.run(
        tpuwizard_cmd("launch", *args, "--sandbox"),
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Compute Engine or GKE" in proc.stderr and "--backend compute" in proc.stderr


def test_flex_start_only_where_google_offers_it_and_only_in_v2alpha1(sandbox):
    server, cloud = sandbox()
    with pytest.raises(gx.BadRequest) as caught:
        cloud.create_queued(request("f1", zone="us-west1-c"), "f1-qr", "flex", 3600)
    assert "not offered" in caught.value.message
    with pytest.raises(gx.BadRequest):  # serving (1/4/8 chips) only in us-central1-a
        cloud.create_queued(request("f2", "v5litepod-16"), "f2-qr", "flex", 3600)
    node = {"acceleratorType": "v5litepod-4", "runtimeVersion": "v2-alpha-tpuv5-lite"}
    body: dict[str, Any] = {
        "tpu": {"nodeSpec": [{"parent": cloud.parent(ZONE), "nodeId": "f3", "node": node}]},
        "provisioningModel": "FLEX_START",
        "runDuration": {"maxRunDuration": "60s"},
    }
    v2 = requests.post(
        f"{server.endpoint}/v2/{cloud.parent(ZONE)}/queuedResources?queuedResourceId=f3-qr",
        json=body,
        timeout=10,
    )
    assert v2.status_code == 400 and "v2alpha1" in v2.json()["error"]["message"]


def test_quota_arrives_as_google_words_it_and_is_diagnosed_by_name_and_region(sandbox):
    _, cloud = sandbox(faults="quota=1")
    with pytest.raises(gx.TooManyRequests) as caught:
        cloud.create_node(request())
    err = caught.value
    assert isinstance(err, gx.ResourceExhausted)  # never retried as a transient 429
    assert err.message.endswith(
        ": Quota limit 'TPUV5sLitepodServingPerProjectPerRegionForTPUAPI' has been exceeded. "
        "Limit: 0 in region us-central1."
    )
    assert err.details
    d = diagnose(
        err,
        Context(
            project="practice-project",
            zone=ZONE,
            accelerator="v5litepod-4",
            slice=catalog.parse_accelerator("v5litepod-4"),
        ),
    )
    assert d.kind == "quota"
    assert "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI" in d.explanation
    assert "us-central1" in d.explanation
    assert any("serving quota" in s for s in all_words(d.next_steps, "cli"))


def test_too_many_creates_is_a_rate_limit_not_a_quota(sandbox):
    _, cloud = sandbox(faults="create_rate=1")
    with pytest.raises(gx.TooManyRequests) as caught:
        cloud.create_node(request())
    assert diagnose(caught.value).kind == "rate_limited"


@pytest.mark.parametrize("code", [9, 8])
def test_every_capacity_variant_is_a_stockout(sandbox, code):
    _, cloud = sandbox(faults=f"stockout={ZONE};stockout_code={code}", delay=0.05)
    op = cloud.create_node(request())
    with pytest.raises(CreateFailed) as caught:
        cloud.wait_for_node(ZONE, "tpu-a", op, poll=0.05)
    d = diagnose(
        caught.value,
        Context(
            zone=ZONE, accelerator="v5litepod-4", slice=catalog.parse_accelerator("v5litepod-4")
        ),
    )
    assert d.kind == "stockout" and d.alternatives
    # Flex-start is offered for v5litepod-4 only in us-central1-a (this zone) and us-west4-a.
    assert any("--route flex" in s and "us-west4-a" in s for s in all_words(d.next_steps, "cli"))


@pytest.mark.parametrize("code", [13, 5])
def test_a_refused_spot_request_fails_with_failed_data_and_is_a_stockout(sandbox, code):
    server, cloud = sandbox(faults=f"stockout={ZONE};stockout_code={code}", delay=0.15)
    cloud.create_queued(request(), "tpu-a-qr", "spot")
    with pytest.raises(CreateFailed) as caught:
        cloud.wait_for_queued(ZONE, "tpu-a-qr", poll=0.05, timeout=10)
    state = stored_qr(server, "tpu-a-qr")["state"]
    assert state["state"] == "FAILED" and state["failedData"]["error"]["code"] == code
    assert cloud.get_queued(ZONE, "tpu-a-qr").error["code"] == code
    d = diagnose(
        caught.value,
        Context(
            zone=ZONE, accelerator="v5litepod-4", slice=catalog.parse_accelerator("v5litepod-4")
        ),
    )
    assert d.kind == "stockout"
    cloud.delete_queued(ZONE, "tpu-a-qr")  # a FAILED request still exists until deleted


def test_spot_request_body_is_spot_alone_with_a_queueing_bound(sandbox):
    server, cloud = sandbox()
    cloud.create_queued(request(spot=True, queue_wait_s=900), "tpu-a-qr", "spot")
    qr = stored_qr(server, "tpu-a-qr")
    assert qr["spot"] == {}
    node = qr["tpu"]["nodeSpec"][0]["node"]
    assert "schedulingConfig" not in node
    assert node["networkConfig"] == {"enableExternalIps": True}
    assert qr["queueingPolicy"] == {"validUntilDuration": "900s"}
    cloud.create_queued(request("f", queue_wait_s=600), "f-qr", "flex", 3600)
    flex = stored_qr(server, "f-qr")
    assert flex["queueingPolicy"] == {"validUntilDuration": "600s"}
    assert flex["tpu"]["nodeSpec"][0]["node"]["networkConfig"] == {"enableExternalIps": True}


def test_a_queued_request_past_its_valid_until_duration_fails(sandbox):
    server, cloud = sandbox(faults=f"stockout={ZONE}", delay=0.1)
    # Only whole seconds can be sent; the sandbox honours what it is told.
    cloud.create_queued(request(queue_wait_s=1), "tpu-a-qr", "spot")
    with pytest.raises(CreateFailed) as caught:
        cloud.wait_for_queued(ZONE, "tpu-a-qr", poll=0.05, timeout=10)
    assert stored_qr(server, "tpu-a-qr")["state"]["failedData"]["error"]["code"] == 4
    # Google failed it for want of capacity within its constraint: a stockout, never "too long".
    assert isinstance(caught.value, QueueExpired)
    d = diagnose(
        caught.value,
        Context(
            zone=ZONE, accelerator="v5litepod-4", slice=catalog.parse_accelerator("v5litepod-4")
        ),
    )
    assert d.kind == "stockout" and "validUntilDuration" in d.explanation


def test_delete_right_after_create_is_refused_then_teardown_waits_it_out(sandbox, home):
    _, cloud = sandbox(delay=1.0)
    cloud.create_node(request())
    with pytest.raises(gx.BadRequest) as caught:
        cloud.delete_node(ZONE, "tpu-a")
    assert "not in a deletable state" in caught.value.message
    ledger = Ledger(home / "ledger.jsonl")
    resource = Resource("node", "practice-project", ZONE, "tpu-a", "v5litepod-4", RUN)
    ledger.record("created", resource)
    result = delete_and_verify(cloud, ledger, resource, not_deletable_wait=30)
    assert result.verified
    ops = [json.loads(line)["op"] for line in ledger.path.read_text().splitlines()]
    assert ops == ["created", "delete_pending", "gone"]


def test_queued_delete_without_force_is_refused_while_it_has_nodes(sandbox):
    _, cloud = sandbox(delay=0.1)
    cloud.create_queued(request(), "tpu-a-qr", "spot")
    cloud.wait_for_queued(ZONE, "tpu-a-qr", poll=0.05)
    with pytest.raises(gx.BadRequest) as caught:
        cloud.client.delete_queued_resource(
            request=cloud.tpu_v2.DeleteQueuedResourceRequest(
                name=cloud.queued_path(ZONE, "tpu-a-qr"), force=False
            )
        )
    assert "force" in caught.value.message
    cloud.delete_queued(ZONE, "tpu-a-qr")  # tpuwizard always sends force
    assert cloud.queued_gone(ZONE, "tpu-a-qr") and cloud.node_gone(ZONE, "tpu-a")


def test_reconcile_surveys_each_zone_on_its_own(sandbox, home):
    _, cloud = sandbox(delay=0)
    cloud.create_node(request())
    found = reconcile(cloud, Ledger(home / "ledger.jsonl"))
    # No owner given and no ledger record: it is listed, as someone else's.
    assert [b.resource.name for b in found.others] == ["tpu-a"]
    assert list(found.skipped) == ["europe-west1-b"]
    assert "not available" in found.skipped["europe-west1-b"]


def test_status_reports_the_zone_it_could_not_survey_and_still_answers(tmp_path):
    proc = subprocess.run(
        tpuwizard_cmd("status", "--sandbox", "--json"),
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["resources"] == [] and list(data["skipped_zones"]) == ["europe-west1-b"]
    assert "Not searched: europe-west1-b. Google says your project may not use it" in proc.stderr


def test_launch_with_internal_ips_needs_the_gcloud_transport(tmp_path):
    from tests.integration.launch_helpers import launch

    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-4", "--internal-ips")
    assert code == 2 and events == []
    assert "--transport gcloud" in stderr


def test_a_node_without_reachable_addresses_fails_fast_and_is_torn_down(tmp_path):
    """The practice sandbox has no IAP: an internal-only node is unreachable from here, and the
    launch says so at once instead of waiting minutes for SSH."""
    import time

    from tests.integration.launch_helpers import launch

    started = time.monotonic()
    code, events, _ = launch(  # the preflight's IAP check is not the subject: after create is
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--internal-ips",
        "--transport",
        "gcloud",
        "--no-preflight",
    )
    assert time.monotonic() - started < 60
    assert code == 3
    failed = [e for e in events if e["event"] == "failed"]
    assert failed and failed[0]["diagnosis"]["kind"] == "unreachable_workers"
    assert any(e["event"] == "teardown_verified" for e in events)


def test_ssh_host_keys_are_filed_per_node_id_and_worker(sandbox, tmp_path):
    from tpuwizard.core.remote.ssh_keys import host_key_aliases
    from tpuwizard.core.remote.transports import SshTransport

    _, cloud = sandbox(delay=0)
    node = cloud.wait_for_node(ZONE, "big", cloud.create_node(request("big", "v5litepod-16")))
    aliases = host_key_aliases(node.uid, len(node.endpoints))
    assert aliases == [f"tpu.{node.uid}-{w}" for w in range(4)]
    ssh = SshTransport(node.addresses, "me", tmp_path / "key", tmp_path / "kh", 22, None, aliases)
    assert f"HostKeyAlias=tpu.{node.uid}-3" in ssh.argv(3, "true")
    assert host_key_aliases("", 4) is None  # no id: fall back to the address
