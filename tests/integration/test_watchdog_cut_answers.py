"""The real watchdog against the real sandbox, its first answers cut after their headers (as a
practice hand-over cuts the calls in flight when the ending sandbox closes its connections): it
still arms, deletes its node at the deadline, and the node's own log in the sandbox's state says
what it met and when. Before, the first cut answer ended it with http.client.IncompleteRead."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from tpuwizard_verify import tpu_watchdog

from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox import node_log

ZONE = "us-central1-a"


class CuttingProxy:
    """Forwards each connection's one request (the watchdog sends ``Connection: close``) to
    ``upstream``; for the first ``cuts[verb]`` requests starting with ``verb`` it passes the
    answer's headers and a byte of its body, then closes."""

    def __init__(self, upstream_port: int, cuts: dict[bytes, int]) -> None:
        self.upstream_port, self.cuts = upstream_port, cuts
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def serve(self) -> None:
        while not self.done.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            with client:
                request = read_request(client)
                answer = self.forward(request)
                verb = next((v for v in self.cuts if request.startswith(v)), b"")
                if self.cuts.get(verb):
                    self.cuts[verb] -= 1
                    answer = answer[: answer.index(b"\r\n\r\n") + 5]
                client.sendall(answer)
                client.shutdown(socket.SHUT_RDWR)

    def forward(self, request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10) as up:
            up.sendall(request)
            answer = b""
            while chunk := up.recv(65536):
                answer += chunk
        return answer

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.listener.close()


def read_request(client: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += client.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    while len(body) < length:
        body += client.recv(65536)
    return head + b"\r\n\r\n" + body


@pytest.fixture
def node(sandbox) -> Iterator[tuple[object, object, str]]:
    server, cloud = sandbox(delay=0)
    request = NodeRequest(
        zone=ZONE, node_id="cut", slice=parse_accelerator("v5litepod-1"), run_id="run-cut"
    )
    cloud.wait_for_node(ZONE, "cut", cloud.create_node(request), poll=0.05)
    yield server, cloud, cloud.node_path(ZONE, "cut")


def test_a_watchdog_whose_answers_are_cut_still_deletes_its_node_at_the_deadline(node, capsys):
    server, cloud, resource = node
    # The check, the first two looks, and the delete (after the sandbox accepted it).
    cuts = {b"POST": 1, b"GET": 2, b"DELETE": 1}
    proxy = CuttingProxy(server.server_address[1], cuts)
    deadline = time.time() + 1.5
    try:
        arguments = ["--resource", resource, "--deadline", str(deadline), "--token", "none"]
        arguments += ["--endpoint", proxy.endpoint, "--iam-endpoint", proxy.endpoint]
        code = tpu_watchdog.main([*arguments, "--retry", "0.1"])
    finally:
        proxy.close()
    said = [
        json.loads(line[len(tpu_watchdog.MARKER) :])
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(tpu_watchdog.MARKER)
    ]
    actions = [r["action"] for r in said]
    assert code == 0 and cloud.get_node(ZONE, "cut") is None, said
    assert actions[0] == "check" and "IncompleteRead" in said[0]["error"]  # cut: asked again
    assert "armed" in actions and actions[-2:] == ["delete_accepted", "deleted"]
    cut_look = next(r for r in said if r["action"] == "look")
    assert "IncompleteRead" in cut_look["error"]
    assert "IncompleteRead" in next(r for r in said if r["action"] == "delete")["error"]
    delete = next(r for r in said if r["action"] == "delete_accepted")
    assert deadline <= delete["at"] < deadline + 5
    # The node's own log: the calls as the sandbox answered them (the watchdog runs in this
    # process here, not as a job on worker 0: its console is the unit tests' part).
    log = node_log.read_log(server.state.home, resource)
    deletes = [e for e in log if e["event"] == "watchdog_call" and e["method"] == "DELETE"]
    assert deletes and deletes[0]["status"] == 200 and deletes[0]["at"] >= deadline
    assert log[-1]["event"] == "vms_ended" and log[-1]["why"] == "the node was removed"
