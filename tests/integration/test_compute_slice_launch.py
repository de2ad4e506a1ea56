"""A multi-host slice on Compute Engine in the sandbox, end to end: a workload policy, a
template and a MIG of 4 VMs, the verifier on every worker joined by jax.distributed, one slice
receipt, and a verified teardown of every part; a stockout during the resize, or a topology
left degraded, leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.launch_helpers import launch, ledger_all_gone
from tests.rotation import rotating

ZONE = "us-east5-b"  # the catalog documents v6e there
SLICE = ("--backend", "compute", "--accelerator", "v6e-16")


def no_part_left(home: Path) -> bool:
    path = home / "sandbox" / "state.json"
    if not path.exists():
        return True
    state = json.loads(path.read_text())
    kinds = ("migs", "instance_templates", "resource_policies", "instances", "nodes")
    return not any(state.get(kind) for kind in kinds)


def test_a_v6e_16_slice_runs_on_four_workers_and_every_part_is_verified_gone(tmp_path, home):
    code, events, stderr = launch(tmp_path, *SLICE, where=("--zone", ZONE))
    assert code == 0, stderr
    ready = next(e for e in events if e["event"] == "ready")
    assert ready["workers"] == 4
    lines = [e for e in events if e["event"] == "verifier_line"]
    assert {e["worker"] for e in lines} == {0, 1, 2, 3}
    slice_checks = [e for e in events if e["event"] == "check" and e["name"] == "slice"]
    assert len(slice_checks) == 4 and all(e["ok"] for e in slice_checks)
    saved = [e for e in events if e["event"] == "receipt_saved"]
    assert [Path(e["path"]).name for e in saved] == ["slice-receipt.json"]
    states = [e["state"] for e in events if e["event"] == "provisioning"]
    assert "CREATING_TEMPLATE" in states and "CREATING_MIG" in states  # built part by part
    assert any(e["event"] == "teardown_verified" for e in events)
    assert no_part_left(home) and ledger_all_gone(home)


@pytest.mark.parametrize(
    ("faults", "why"),
    [(f"stockout={ZONE}", "stockout during the resize"), ("vm_failure=1", "ACTIVE_DEGRADED")],
)
def test_a_slice_that_cannot_be_whole_is_a_capacity_failure_and_leaves_nothing(
    tmp_path, home, faults, why
):
    code, events, stderr = launch(
        tmp_path, *SLICE, where=("--zone", ZONE), TPUWIZARD_SANDBOX_FAULTS=faults
    )
    assert code == 3, (why, stderr)
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["diagnosis"]["kind"] == "stockout", (why, failed)
    assert no_part_left(home) and ledger_all_gone(home), why


# Each state is reported once the part before it is created (its operation DONE) and the next
# part's insert sent: a kill there leaves those parts, and no MIG before "RESIZING".
KILLS = {
    "after the policy's create": "CREATING_TEMPLATE",
    "after the template's create": "CREATING_MIG",
    "after the MIG's create": "RESIZING",
}


@pytest.mark.parametrize("stage", rotating(list(KILLS), per_run=1))
def test_sigkill_after_each_part_s_create_then_teardown_all_leaves_no_part(tmp_path, home, stage):
    import signal

    from tests.integration.launch_helpers import launch_until, status, teardown_all

    def at(e: dict) -> bool:
        return e["event"] == "provisioning" and e["state"] == KILLS[stage]

    code, _ = launch_until(tmp_path, at, *SLICE, zone=ZONE)
    assert code == -signal.SIGKILL
    left = status(tmp_path)  # the slice, as one resource, whatever parts it has
    assert [r["name"] for r in left] and len({r["name"] for r in left}) == 1, left
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == []
    assert no_part_left(home) and ledger_all_gone(home)
