"""The course's Route 2B in the sandbox (``launch --backend compute --route flex --via
resize-request``), end to end: a FLEX_START template, a MIG of size 0 and a resize request for one
v6e-4 VM; the verifier on it; all three torn down and verified gone. A refused request (the fault
users report) deletes the template and the MIG, exit 3, naming the bulk-mode default. Drills
(rotating): SIGTERM and SIGKILL during each part's create (after SIGKILL, ``status`` finds the
parts by their descriptions and ``teardown`` ends them), and the connection reset after the
template's insert landed (found, not made twice, the run goes on)."""

from __future__ import annotations

import json
import signal

import pytest

from tests.integration.launch_helpers import (
    launch,
    launch_until,
    ledger_all_gone,
    status,
    teardown_all,
)
from tests.integration.test_compute_slice_launch import no_part_left
from tests.rotation import rotating

ZONE = "us-east5-a"  # v6e's Compute Engine machine types are offered here (catalog.toml)
ROUTE_2B = ("--backend", "compute", "--route", "flex", "--via", "resize-request")
V6E_4 = ("--accelerator", "v6e-4")


def test_route_2b_runs_on_its_vm_and_the_template_mig_and_request_are_verified_gone(tmp_path, home):
    code, events, stderr = launch(tmp_path, *ROUTE_2B, *V6E_4, where=("--zone", ZONE))
    assert code == 0, stderr
    states = [e["state"] for e in events if e["event"] == "provisioning"]
    assert {"CREATING_MIG", "REQUESTING"} <= set(states) and "CREATING_POLICY" not in states
    assert next(e for e in events if e["event"] == "ready")["workers"] == 1
    assert any(e["event"] == "receipt_saved" for e in events)
    assert any(e["event"] == "teardown_verified" for e in events)
    assert no_part_left(home) and ledger_all_gone(home)
    ledger = (home / "sandbox" / "ledger.jsonl").read_text().splitlines()
    parts = [json.loads(line).get("parts") for line in ledger]
    begun = next(p for p in reversed(parts) if p)  # each part, where it lives, before its create
    assert [(p["kind"], p.get("zone") or p.get("region")) for p in begun] == [
        ("instance-template", "us-east5"),
        ("mig", ZONE),
        ("resize-request", ZONE),
    ]


def test_a_refused_resize_request_deletes_the_template_and_mig_and_names_bulk_mode(tmp_path, home):
    code, events, stderr = launch(
        tmp_path,
        *ROUTE_2B,
        *V6E_4,
        where=("--zone", ZONE),
        TPUWIZARD_SANDBOX_FAULTS="resize_request_refused=1",
    )
    assert code == 3, stderr
    failed = next(e for e in events if e["event"] == "failed")["diagnosis"]
    assert failed["kind"] == "resize_request_refused"
    assert "is not allowed" in failed["explanation"]
    assert any("bulk mode" in step for step in failed["next_steps"])
    assert any(e["event"] == "teardown_verified" for e in events)
    assert no_part_left(home) and ledger_all_gone(home)


# The state the launch reports while each part is being created (its insert sent, the part
# before it done): a signal there meets that part's create. The template's insert is the create
# call itself, sent right after the launch says its resource exists ("resource_exists").
DURING = {
    "the template's create": "resource_exists",
    "the MIG's create": "CREATING_MIG",
    "the resize request's create": "REQUESTING",
}
# What status lists of it after a SIGKILL there (NodeInfo.parts' words).
PARTS_BY_THEN = {
    "resource_exists": {"template"},
    "CREATING_MIG": {"template", "MIG"},
    "REQUESTING": {"template", "MIG", "resize request"},
}
RESET = "a connection reset after the template's insert landed"
POINTS = [f"{sig} during {part}" for part in DURING for sig in ("SIGTERM", "SIGKILL")] + [RESET]


@pytest.mark.parametrize("point", rotating(POINTS, per_run=1))
def test_a_signal_or_a_dropped_network_during_each_part_s_create_leaves_no_part(
    tmp_path, home, point
):
    if point == RESET:  # the answer lost: found by its labels, not made twice, the run goes on
        code, events, stderr = launch(
            tmp_path,
            *ROUTE_2B,
            *V6E_4,
            where=("--zone", ZONE),
            TPUWIZARD_SANDBOX_FAULTS="reset_create=1",
        )
        assert code == 0, stderr
        assert not any(e["event"] == "create_refused" for e in events)
        assert no_part_left(home) and ledger_all_gone(home)
        return
    sig_name, part = point.split(" during ")
    state = DURING[part]

    def at(e: dict) -> bool:
        return e["event"] == state or (e["event"] == "provisioning" and e["state"] == state)

    # A longer practice delay: each part's operation is still running when the signal lands.
    code, events = launch_until(
        tmp_path,
        at,
        *ROUTE_2B,
        *V6E_4,
        sig=getattr(signal, sig_name),
        zone=ZONE,
        TPUWIZARD_SANDBOX_DELAY="2",
    )
    if sig_name == "SIGTERM":  # the launch tears all of it down itself, and verifies it
        assert code != 0 and any(e["event"] == "teardown_verified" for e in events), events
        assert no_part_left(home) and ledger_all_gone(home)
        return
    assert code == -signal.SIGKILL
    left = status(tmp_path)
    if state == "resource_exists" and not left:
        assert ledger_all_gone(home)  # killed before the template's insert: nothing was made
        return
    assert len(left) == 1, left  # one resource, found by its parts' descriptions
    assert PARTS_BY_THEN[state] <= set(left[0]["parts"]), left
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == []
    assert no_part_left(home) and ledger_all_gone(home)
