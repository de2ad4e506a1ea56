"""``launch --sandbox --zones A,B,C --fan-out`` against the sandbox, and the fan-out crash drill:
SIGKILL at every point of a three-zone fan-out, then ``teardown --all`` leaves nothing, and the
ledger and the sandbox agree on what was left before it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.integration.launch_helpers import (
    launch,
    launch_until,
    launch_until_on_disk,
    ledger_all_gone,
    names,
    sandbox_is_empty,
    status,
    teardown_all,
)
from tests.rotation import rotating
from tpuwizard.core.launch.records.ledger import Ledger

ZONES = ("us-central1-a", "us-west1-c", "us-east5-a")
WHERE = ("--zones", ",".join(ZONES), "--fan-out")
TWO_OUT = {"TPUWIZARD_SANDBOX_FAULTS": "stockout=us-central1-a,us-west1-c"}


def sandbox_nodes(home: Path) -> set[tuple[str, str]]:
    """(zone, name) of every node the sandbox holds."""
    path = home / "sandbox" / "state.json"
    if not path.exists():
        return set()
    keys = json.loads(path.read_text())["nodes"]
    return {(k.split("/")[3], k.rsplit("/", 1)[-1]) for k in keys}


def open_in_ledger(home: Path) -> set[tuple[str, str]]:
    entries = Ledger(home / "sandbox" / "ledger.jsonl").open_entries()
    return {(e.resource.zone, e.resource.name) for e in entries}


def test_fan_out_with_two_zones_stocked_out_keeps_the_third(tmp_path, home):
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-1", where=WHERE, **TWO_OUT)
    assert code == 0, stderr
    (won,) = [e for e in events if e["event"] == "fan_out_won"]
    assert won["zone"] == "us-east5-a"
    (planned,) = [e for e in events if e["event"] == "fan_out_started"]
    assert planned["zones"] == list(ZONES) and planned["worst_case_per_hour_usd"] > 0
    assert "at most $3.60/h" in stderr and "not checked" in stderr  # the plan line's worst case
    exists = sorted(e["zone"] for e in events if e["event"] == "resource_exists")
    gone = sorted(e["zone"] for e in events if e["event"] == "teardown_verified")
    assert exists == gone == sorted(ZONES)
    assert "receipt_saved" in names(events) and events[-1]["remaining"] == []
    assert sandbox_is_empty(home) and ledger_all_gone(home) and status(tmp_path) == []


def the_win_then(point: str):
    """A stop point after the win: remembers the winner's zone from ``fan_out_won``."""
    winner: list[str] = []

    def stop_at(e: dict) -> bool:
        if e["event"] == "fan_out_won":
            winner.append(e["zone"])
        if point == "final teardown":
            return e["event"] == "teardown_started" and e["zone"] in winner
        return bool(winner) and e["event"] == point

    return stop_at


# Each a fresh stop test (some remember the winner): every point of a fan-out's life.
POINTS = {
    "the first request announced": lambda: lambda e: e["event"] == "resource_exists",
    "while creating": lambda: lambda e: e["event"] == "provisioning" and e["state"] == "CREATING",
    "a loser's delete": lambda: lambda e: e["event"] == "teardown_started",
    "at the win": lambda: lambda e: e["event"] == "fan_out_won",
    "ready": lambda: the_win_then("ready"),
    "during the verifier": lambda: the_win_then("check"),
    "final teardown": lambda: the_win_then("final teardown"),
}


def recover(tmp_path: Path, home: Path) -> None:
    """What a crash left: the ledger names all of it; teardown --all deletes it all."""
    assert sandbox_nodes(home) <= open_in_ledger(home)  # nothing the ledger cannot find
    left = status(tmp_path)
    assert {(r["zone"], r["name"]) for r in left} >= sandbox_nodes(home)
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == []
    assert sandbox_is_empty(home) and ledger_all_gone(home)


@pytest.mark.parametrize("point", rotating(list(POINTS), per_run=1))
def test_sigkill_at_each_point_of_a_fan_out_then_recover(tmp_path, home, point):
    code, _ = launch_until(
        tmp_path, POINTS[point](), "--accelerator", "v5litepod-1", where=WHERE, **TWO_OUT
    )
    assert code == -signal.SIGKILL
    recover(tmp_path, home)


@pytest.mark.parametrize("intents", [1, 3])
def test_sigkill_once_intents_are_on_disk_then_recover(tmp_path, home, intents):
    # Every request waits 1.5 s first, so the kill lands while the creates are in flight.
    def on_disk() -> bool:
        path = home / "sandbox" / "ledger.jsonl"
        lines = path.read_bytes().split(b"\n")[:-1] if path.exists() else []
        return sum(json.loads(line)["op"] == "intent" for line in lines if line) >= intents

    code, _ = launch_until_on_disk(
        tmp_path,
        on_disk,
        "--accelerator",
        "v5litepod-1",
        where=WHERE,
        TPUWIZARD_SANDBOX_FAULTS="latency_ms=1500;stockout=us-central1-a,us-west1-c",
    )
    assert code == -signal.SIGKILL
    recover(tmp_path, home)


def test_compute_engine_spot_fails_over_along_the_list(tmp_path, home):
    # On Compute Engine a spot create fails fast on a stockout: that create is the probe.
    code, events, stderr = launch(
        tmp_path,
        *("--backend", "compute", "--accelerator", "v6e-4", "--route", "spot"),
        where=("--zones", "us-east5-a,us-east5-b"),
        TPUWIZARD_SANDBOX_FAULTS="stockout=us-east5-a",
    )
    assert code == 0, stderr
    moves = [(e["from_zone"], e["to_zone"]) for e in events if e["event"] == "zone_failover"]
    assert moves == [("us-east5-a", "us-east5-b")]
    assert status(tmp_path) == [] and ledger_all_gone(home)
