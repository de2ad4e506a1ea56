"""`status`, `teardown` and `down` survive one bad zone, a name someone else holds, and a kept
node Google preempted (issue 22, items 3, 4 and 7): the CLI in subprocesses, as a user runs it,
against the sandbox (which answers a zone the project may not use with Google's 403)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env, ledger_all_gone, sandbox_is_empty
from tests.waiting import wait_until
from tpuwizard.core import paths
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

BAD = "europe-west1-b"  # google-behaviour.md: "403 Location europe-west1-b is not found..."
BOB = "b0b0000000000b0b"


@contextmanager
def sandbox_cloud(home, faults: str | None = None) -> Iterator[TpuCloud]:
    """A client of the sandbox state this home's CLI will serve (stopped before the CLI runs)."""
    server = make_server(home / "sandbox", delay=0.0, faults=faults)
    start_in_thread(server)
    try:
        yield TpuCloud(PRACTICE_PROJECT, endpoint=server.endpoint)
    finally:
        server.shutdown()
        server.server_close()


def made(cloud: TpuCloud, name: str, zone: str = ZONE, owner: str | None = None) -> None:
    cloud.create_node(
        NodeRequest(
            zone,
            name,
            parse_accelerator("v5litepod-1"),
            f"run-{name}",
            owner=owner or paths.owner_label(),
        )
    )
    cloud.wait_for_node(zone, name, poll=0.05, timeout=30)


def record(home, op: str, resource: Resource, **extra: object) -> None:
    Ledger(home / "sandbox" / "ledger.jsonl").record(op, resource, **extra)


def node_record(name: str, zone: str = ZONE) -> Resource:
    return Resource(
        "node",
        PRACTICE_PROJECT,
        zone,
        name,
        "v5litepod-1",
        f"run-{name}",
        owner=paths.owner_label(),
    )


def cli(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tpuwizard_cmd(*args, "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(),
    )


def test_one_zone_that_refuses_neither_hides_nor_spares_the_rest(tmp_path, home):
    with sandbox_cloud(home) as cloud:
        made(cloud, "mine")
    record(home, "created", node_record("mine"))
    record(home, "created", node_record("lost", BAD))  # e.g. a crash before create answered

    shown = cli(tmp_path, "status", "--json")
    assert shown.returncode == 3, shown.stderr
    doc = json.loads(shown.stdout)
    assert [r["name"] for r in doc["resources"]] == ["mine"]
    assert [(u["name"], u["zone"]) for u in doc["unchecked"]] == [("lost", BAD)]
    assert f"Could not check lost in {BAD}: {BAD} is not available to your project" in shown.stderr
    assert "Traceback" not in shown.stderr

    gone = cli(tmp_path, "teardown", "--all", "--yes", "--json")
    assert gone.returncode == 4, gone.stderr  # everything it could, deleted; one not checked
    assert [(r["name"], r["verified"]) for r in json.loads(gone.stdout)["results"]] == [
        ("mine", True)
    ]
    assert sandbox_is_empty(home)
    assert "Not checked, so not verified gone: lost (europe-west1-b)" in gone.stderr


def test_a_name_someone_else_holds_is_never_a_crash_nor_called_verified_gone(tmp_path, home):
    with sandbox_cloud(home) as cloud:
        made(cloud, "shared", ZONE, owner=BOB)
        made(cloud, "shared", "us-west1-c", owner=BOB)
        made(cloud, "reused", ZONE, owner=BOB)
    record(home, "created", node_record("reused"))  # ours, gone since; Bob took the name

    # First: a survey (as below) would close this record quietly, the name being Bob's.
    theirs = cli(tmp_path, "teardown", "reused", "--yes")
    assert theirs.returncode == 0, theirs.stderr
    assert f"reused in {ZONE} is someone else's now (owner {BOB}" in theirs.stderr
    assert "verified gone: reused" not in theirs.stderr

    two = cli(tmp_path, "teardown", "shared", "--yes", "--other-owner")
    assert two.returncode == 2, two.stderr
    assert "held by another tpuwizard user in 2 zones (us-central1-a, us-west1-c)" in two.stderr
    assert "unexpected error" not in two.stderr
    others = json.loads(cli(tmp_path, "status", "--json").stdout)["others"]
    assert sorted((r["name"], r["zone"], r["state"]) for r in others) == [
        ("reused", ZONE, "READY"),
        ("shared", ZONE, "READY"),
        ("shared", "us-west1-c", "READY"),
    ]


def until(check: Callable[[], bool], what: str) -> None:
    wait_until(check, 30, what)


def test_a_preempted_kept_spot_node_is_deleted_by_the_next_status(tmp_path, home):
    me = paths.owner_label()
    with sandbox_cloud(home, faults="preempt_after=0.2") as cloud:
        request = NodeRequest(
            ZONE, "kept-node", parse_accelerator("v5litepod-1"), "run-k", spot=True, owner=me
        )
        cloud.create_queued(request, "kept-qr", "spot")
        cloud.wait_for_queued(ZONE, "kept-qr", poll=0.05)
        until(lambda: cloud.get_node(ZONE, "kept-node").state == "PREEMPTED", "the preemption")
        assert cloud.get_queued(ZONE, "kept-qr").state == "ACTIVE"  # Google leaves it so
    kept = Resource(
        "queued", PRACTICE_PROJECT, ZONE, "kept-qr", "v5litepod-1", "run-k", "spot", "kept-node", me
    )
    record(home, "created", kept)
    record(home, "kept", kept, idle_s=1800.0, kept_at=time.time(), deadline=time.time() + 3600)

    shown = cli(tmp_path, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert [(p["node_id"], p["verified"]) for p in doc["preempted"]] == [("kept-node", True)]
    assert doc["resources"] == [] and doc["kept"] == []
    assert "kept-node was preempted by Google" in shown.stderr
    assert "deleted it and its queued resource kept-qr: verified gone" in shown.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)
