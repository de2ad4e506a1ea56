"""Misdiagnoses (issue 22, item 14), each reproduced with the exceptions and states Google's
client really gives: a queued request that got no capacity reads as a stockout, never "it took
too long"; a node that went away under a command says so, never "a file on this computer"; a
failed heartbeat says what a heartbeat is for, never OS Login."""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace

import pytest
from google.api_core import exceptions as gx

from tests.fakes import FakeTransport, MemoryCloud
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.types import NodeRequest, QueuedInfo
from tpuwizard.core.errors import (
    CreateFailed,
    HeartbeatFailed,
    NodeGone,
    QueueExpired,
    QueueSuspended,
    RemoteError,
)
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.transports import Result
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.event_text import diagnosis_text

ZONE = "us-central1-a"


def queued(state: str, **fields: object) -> QueuedInfo:
    info = QueuedInfo("tpu-a-qr", ZONE, state, "tpu-a", "v5litepod-4", spot=True)
    return replace(info, **fields)  # type: ignore[arg-type]


def ctx(route: str) -> Context:
    return Context(
        project="p",
        zone=ZONE,
        accelerator="v5litepod-4",
        slice=catalog.parse_accelerator("v5litepod-4"),
        name="tpu-a",
        route=route,
    )


def waited(cloud: MemoryCloud, timeout: float = 5.0) -> BaseException:
    with pytest.raises(CreateFailed) as caught:
        cloud.wait_for_queued(ZONE, "tpu-a-qr", timeout=timeout, poll=0.01)
    return caught.value


def says_capacity(d) -> bool:
    text = diagnosis_text(d)
    return d.kind == "stockout" and "capacity" in d.title and "took too long" not in text


@pytest.mark.parametrize("route", ["spot", "flex"])
def test_a_request_failed_at_its_valid_until_duration_is_a_stockout(route):
    cloud = MemoryCloud()
    # Google's FAILED: "unavailability of resources within the constraints of the request
    # (e.g., the 'valid until' start timing constraint expired)", its reason a google.rpc.Status.
    error = {"code": 4, "message": "The request could not be fulfilled before it expired."}
    flex = route == "flex"
    cloud.queued[(ZONE, "tpu-a-qr")] = queued(
        "FAILED", error=error, spot=not flex, flex=flex, valid_until_s=600.0
    )
    err = waited(cloud)
    assert isinstance(err, QueueExpired) and err.route == route
    d = diagnose(err, ctx(route))
    assert says_capacity(d), diagnosis_text(d)
    assert "validUntilDuration" in d.explanation and "us-west1-c" in d.alternatives
    assert ("--route flex" in " ".join(all_words(d.next_steps, "cli"))) is (route != "flex")


def test_an_expiry_google_words_otherwise_is_told_by_the_request_s_age():
    cloud = MemoryCloud()
    # No code 4, no words about the constraint: the request is older than it was allowed to be.
    error = {"code": 9, "message": "The queued resource could not be provisioned."}
    created = time.time() - 700
    cloud.queued[(ZONE, "tpu-a-qr")] = queued(
        "FAILED", error=error, create_time=created, valid_until_s=600.0
    )
    assert says_capacity(diagnose(waited(cloud), ctx("spot")))


def test_a_failed_request_with_a_stockout_reason_stays_a_plain_stockout():
    cloud = MemoryCloud()
    error = {"code": 8, "message": 'There is no more capacity in the zone "us-central1-a"'}
    cloud.queued[(ZONE, "tpu-a-qr")] = queued("FAILED", error=error, valid_until_s=600.0)
    err = waited(cloud)
    assert not isinstance(err, QueueExpired) and isinstance(err.error, gx.ResourceExhausted)
    d = diagnose(err, ctx("spot"))
    assert d.kind == "stockout" and "out of capacity (code 8)" in d.explanation


def test_a_request_that_fails_young_for_another_reason_is_not_called_a_stockout():
    cloud = MemoryCloud()
    error = {"code": 7, "message": "Permission 'tpu.nodes.create' denied"}
    cloud.queued[(ZONE, "tpu-a-qr")] = queued(
        "FAILED", error=error, create_time=time.time(), valid_until_s=600.0
    )
    d = diagnose(waited(cloud), ctx("spot"))
    assert d.kind == "permission"


def test_this_client_s_wait_running_out_while_queued_is_a_stockout_too():
    cloud = MemoryCloud()
    cloud.queued[(ZONE, "tpu-a-qr")] = queued("WAITING_FOR_RESOURCES")
    err = waited(cloud, timeout=0.05)
    assert isinstance(err, QueueExpired) and err.state == "WAITING_FOR_RESOURCES"
    assert says_capacity(diagnose(err, ctx("spot")))


def test_a_wait_that_runs_out_while_provisioning_is_still_a_timeout():
    from tpuwizard.core.errors import WaitTimedOut

    cloud = MemoryCloud()
    cloud.queued[(ZONE, "tpu-a-qr")] = queued("PROVISIONING")
    with pytest.raises(WaitTimedOut) as caught:
        cloud.wait_for_queued(ZONE, "tpu-a-qr", timeout=0.05, poll=0.01)
    assert diagnose(caught.value, ctx("spot")).kind == "timeout"


@pytest.mark.parametrize(
    ("initiator", "flex", "kind"),
    [
        ("SERVICE", False, "preempted"),
        ("SERVICE", True, "flex_ended"),
        ("USER", False, "suspended"),
    ],
)
def test_a_suspended_request_says_who_deleted_its_vms(initiator, flex, kind):
    cloud = MemoryCloud()
    cloud.queued[(ZONE, "tpu-a-qr")] = queued(
        "SUSPENDED", initiator=initiator, flex=flex, spot=not flex
    )
    err = waited(cloud)
    assert isinstance(err, QueueSuspended)
    assert diagnose(err, ctx("flex" if flex else "spot")).kind == kind


class VanishingTransport(FakeTransport):
    """Workers whose node is deleted the moment the first command reaches them."""

    def __init__(self, cloud: MemoryCloud, workers: int) -> None:
        super().__init__(workers)
        self.cloud = cloud

    def run(self, worker, command, timeout=600, stdin=None, cancellable=True):
        self.cloud.nodes.clear()  # deleted under the command (its watchdog, or by hand)
        raise RemoteError(f"worker {worker}: cannot start /w0: [Errno 2] No such file")


def test_a_launch_whose_node_is_deleted_under_it_says_it_went_away(tmp_path):
    from tests.unit.test_launch_safety import make_plan, make_runtime
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.exit_codes import EXIT_CLOUD
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.lifecycle.launch import run_launch

    cloud = MemoryCloud()
    rt = make_runtime(tmp_path, cloud)
    rt.make_transport = lambda node: VanishingTransport(cloud, len(node.endpoints))
    events: list = []
    code = run_launch(make_plan(tmp_path), rt, events.append, CancelToken())
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.diagnosis.kind == "node_gone", failed.diagnosis
    assert "tpu-a no longer exists" in failed.diagnosis.explanation
    assert code == EXIT_CLOUD  # a cloud event, not a failed verification


class BeatingNode:
    """A KeptNode's own heartbeat, over a worker whose ``touch`` fails."""

    def __init__(self, cloud: MemoryCloud, reason: str) -> None:
        from tpuwizard.core.launch.records.ledger import Entry, Resource
        from tpuwizard.session.kept.nodes import KeptNode

        transport = FakeTransport()
        transport.run = lambda *a, **k: Result(1, "", reason)  # type: ignore[method-assign]
        node = KeptNode.__new__(KeptNode)
        node.name, node.transport = "tpu-a", transport
        node.entry = Entry(Resource("node", "p", ZONE, "tpu-a", "v5litepod-1", "r"), "kept", 1, 1)
        node.nodes = SimpleNamespace(
            session=SimpleNamespace(cloud=cloud, cloud_for=lambda backend: cloud), book=None
        )
        self.node = node


def test_a_heartbeat_that_does_not_land_on_a_ready_node_says_so_not_os_login():
    cloud = MemoryCloud()
    cloud.create_node(NodeRequest(ZONE, "tpu-a", parse_accelerator("v5litepod-1"), "r"))
    reason = "touch: cannot touch '.tpuwizard/heartbeat': No such file or directory"
    with pytest.raises(HeartbeatFailed) as caught:
        BeatingNode(cloud, reason).node.heartbeat()
    d = diagnose(caught.value)
    text = diagnosis_text(d)
    assert d.kind == "heartbeat" and "idle time" in d.explanation and reason in d.explanation
    assert "OS Login" not in text and "gcloud" not in text


def test_a_heartbeat_to_a_node_that_is_gone_says_it_went_away():
    cloud = MemoryCloud()  # nothing in it: the node was deleted
    with pytest.raises(NodeGone) as caught:
        BeatingNode(
            cloud, "ssh: connect to host 10.0.0.2 port 22: Connection refused"
        ).node.heartbeat()
    d = diagnose(caught.value)
    assert d.kind == "node_gone" and "OS Login" not in diagnosis_text(d)


def test_a_node_gone_under_a_command_is_never_a_local_disk_problem(tmp_path):
    """The sandbox's VM is a folder here: following a job after it is gone must not read as a
    file on this computer."""
    from tpuwizard.core.remote.transports import LocalTransport

    with pytest.raises(RemoteError) as caught:
        LocalTransport([tmp_path / "gone"]).popen(0, "true")
    assert diagnose(caught.value).kind != "local_disk"
