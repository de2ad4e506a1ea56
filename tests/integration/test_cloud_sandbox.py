"""The real google-cloud-tpu client against the sandbox: every call, on the happy path."""

from tests.waiting import wait_until
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

ZONE = "us-central1-a"


def request(node_id="tpu-a", accelerator="v5litepod-4", **kw):
    return NodeRequest(
        zone=ZONE,
        node_id=node_id,
        slice=parse_accelerator(accelerator),
        run_id="20261129-152500-ab12",
        **kw,
    )


def test_zones_types_and_runtime_versions(sandbox):
    _, cloud = sandbox()
    zones = cloud.list_zones()
    assert ZONE in zones and "us-west1-c" in zones
    assert {"v5litepod-1", "v5litepod-4", "v5litepod-8"} <= set(cloud.accelerator_types(ZONE))
    assert "v2-alpha-tpuv5-lite" in cloud.runtime_versions(ZONE)


def test_create_wait_list_delete_and_verify_gone(sandbox):
    server, cloud = sandbox()
    states = []
    op = cloud.create_node(request(metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAAC3 me"}))
    node = cloud.wait_for_node(ZONE, "tpu-a", op, on_state=states.append, poll=0.05)
    assert states == ["CREATING", "READY"]
    assert node.state == "READY" and node.accelerator_type == "v5litepod-4"
    assert node.labels == {"managed-by": "tpuwizard", "tpuwizard-run": "20261129-152500-ab12"}
    # tpuwizard asks for external addresses; the internal one is loopback where nothing listens.
    assert node.addresses == ("127.0.0.1",) and node.endpoints == ("127.0.0.2",)
    assert server.state.worker_home(
        f"projects/practice-project/locations/{ZONE}/nodes/tpu-a", 0
    ).is_dir()
    assert [n.name for n in cloud.list_nodes(ZONE, {"managed-by": "tpuwizard"})] == ["tpu-a"]
    assert cloud.list_nodes(ZONE, {"managed-by": "someone-else"}) == []
    assert not cloud.node_gone(ZONE, "tpu-a")
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.node_gone(ZONE, "tpu-a")
    assert cloud.get_node(ZONE, "tpu-a") is None
    cloud.delete_node(ZONE, "tpu-a")  # deleting what is gone is not an error


def test_multi_host_slice_has_one_endpoint_and_home_per_vm(sandbox):
    server, cloud = sandbox()
    node = cloud.wait_for_node(
        ZONE, "big", cloud.create_node(request("big", "v5litepod-16")), poll=0.05
    )
    assert len(node.endpoints) == 4
    name = f"projects/practice-project/locations/{ZONE}/nodes/big"
    assert all(server.state.worker_home(name, w).is_dir() for w in range(4))


def test_ssh_keys_metadata_reaches_the_authorized_keys_file(sandbox, tmp_path):
    keys = tmp_path / "authorized_keys"
    _, cloud = sandbox(authorized_keys=keys)
    op = cloud.create_node(request(metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAAC3 me"}))
    cloud.wait_for_node(ZONE, "tpu-a", op, poll=0.05)
    assert keys.read_text() == "ssh-ed25519 AAAAC3 me\n"
    assert keys.stat().st_mode & 0o777 == 0o600
    cloud.delete_node(ZONE, "tpu-a")
    assert keys.read_text() == ""


def test_pagination_through_the_real_client(sandbox):
    _, cloud = sandbox(delay=0)
    for i in range(5):
        cloud.create_node(request(f"n{i}", "v5litepod-1"))
    pager = cloud.client.list_nodes(request={"parent": cloud.parent(ZONE), "page_size": 2})
    pages = list(pager.pages)
    assert [len(p.nodes) for p in pages] == [2, 2, 1]
    assert len(cloud.list_nodes(ZONE)) == 5


def test_state_survives_a_restart(sandbox, tmp_path):
    _, cloud = sandbox()
    cloud.wait_for_node(ZONE, "tpu-a", cloud.create_node(request()), poll=0.05)
    again = make_server(tmp_path / "sandbox")
    start_in_thread(again)
    try:
        from tpuwizard.core.cloud.tpu.client import TpuCloud

        fresh = TpuCloud("practice-project", endpoint=again.endpoint)
        assert fresh.get_node(ZONE, "tpu-a").state == "READY"
    finally:
        again.shutdown()
        again.server_close()


def test_spot_queued_resource_walks_its_states_and_is_deleted_with_its_node(sandbox):
    _, cloud = sandbox(delay=0.6)
    states = []
    cloud.create_queued(request("spot-node", spot=True), "spot-qr", "spot")
    qr = cloud.wait_for_queued(ZONE, "spot-qr", on_state=states.append, poll=0.05)
    assert states[0] in ("CREATING", "ACCEPTED") and states[-1] == "ACTIVE"
    assert "PROVISIONING" in states
    assert qr.node_id == "spot-node" and not qr.flex
    node = cloud.get_node(ZONE, "spot-node")
    assert node.state == "READY" and node.spot and node.queued_resource
    cloud.delete_queued(ZONE, "spot-qr")
    assert cloud.queued_gone(ZONE, "spot-qr")
    assert cloud.node_gone(ZONE, "spot-node")


def test_flex_start_enforces_max_run_duration_then_suspends(sandbox):
    _, cloud = sandbox(delay=0.2)
    cloud.create_queued(request("flex-node"), "flex-qr", "flex", max_run_seconds=1)
    qr = cloud.wait_for_queued(ZONE, "flex-qr", poll=0.05)
    assert qr.flex and qr.state == "ACTIVE"
    assert cloud.get_node(ZONE, "flex-node").state == "READY"
    wait_until(
        lambda: cloud.get_queued(ZONE, "flex-qr").state == "SUSPENDED", 30, "the end of the run"
    )
    assert cloud.get_node(ZONE, "flex-node") is None  # Google deletes the VMs at the end
    # A SUSPENDED request still exists (and holds quota) until it is deleted.
    assert [q.name for q in cloud.list_queued(ZONE)] == ["flex-qr"]
    cloud.delete_queued(ZONE, "flex-qr")
    assert cloud.queued_gone(ZONE, "flex-qr")


def test_flex_request_body_matches_the_v2alpha1_shape(sandbox):
    server, cloud = sandbox()
    cloud.create_queued(request("flex-node"), "flex-qr", "flex", max_run_seconds=3600)
    stored = server.state.data["queued"][
        f"projects/practice-project/locations/{ZONE}/queuedResources/flex-qr"
    ]
    assert stored["provisioningModel"] == "FLEX_START"
    assert stored["runDuration"]["maxRunDuration"] == "3600s"
    spec = stored["tpu"]["nodeSpec"][0]
    assert spec["parent"] == f"projects/practice-project/locations/{ZONE}"
    assert spec["nodeId"] == "flex-node"
    assert spec["node"]["acceleratorType"] == "v5litepod-4"
    assert spec["node"]["runtimeVersion"] == "v2-alpha-tpuv5-lite"


def test_a_client_that_leaves_before_its_answer_is_not_reported(tmp_path, capsys):
    """Giving up on an answer is normal (a poll that ended, a process stopped): the practice
    server prints no traceback on the user's terminal, and goes on serving."""
    import socket
    import struct

    from tpuwizard.core.cloud.tpu.client import TpuCloud

    server = make_server(tmp_path / "sandbox", delay=0.0)
    start_in_thread(server)
    try:
        for _ in range(3):
            with socket.create_connection(server.server_address) as client:
                client.sendall(
                    f"GET /v2/projects/p/locations/{ZONE}/nodes/gone HTTP/1.1\r\n"
                    "Host: sandbox\r\n\r\n".encode()
                )
                # Close with a reset, unread: the server's answer (or its next read) fails.
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        cloud = TpuCloud("practice-project", endpoint=server.endpoint, retry_deadline=10)
        assert ZONE in cloud.list_zones()  # still serving
    finally:
        server.shutdown()
        server.server_close()  # waits for every request's thread: what they print is printed
    assert capsys.readouterr().err == ""


def test_other_errors_in_the_sandbox_are_still_reported(tmp_path, capsys):
    server = make_server(tmp_path / "sandbox", delay=0.0)
    try:
        raise ValueError("a bug in the sandbox")
    except ValueError:
        server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    assert "ValueError: a bug in the sandbox" in capsys.readouterr().err


def test_the_deadline_google_ends_a_flex_start_run_at_is_read_back(sandbox):
    import time

    _, cloud = sandbox(delay=0.2)
    cloud.create_queued(request("flex-node"), "flex-qr", "flex", max_run_seconds=600)
    asked = time.time()
    cloud.wait_for_queued(ZONE, "flex-qr", poll=0.05)
    ends = cloud.deadline_at("queued", ZONE, "flex-qr")  # runDuration.terminationTime
    assert ends is not None and asked + 590 <= ends <= time.time() + 601
    assert cloud.deadline_at("node", ZONE, "flex-node") is None  # a node's is our watchdog's
    cloud.delete_queued(ZONE, "flex-qr")
