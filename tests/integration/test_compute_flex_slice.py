"""A Flex-start multi-host slice on Compute Engine in the sandbox (bulk mode), end to end: a
workload policy, a regional template carrying FLEX_START and its deadline, a BULK MIG made empty
and resized; the slice verified and every part torn down and verified gone. Drills (rotating):
SIGTERM and SIGKILL while each part is created; after SIGKILL, ``status`` finds the slice by its
parts' descriptions and ``teardown`` deletes every part."""

from __future__ import annotations

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
FLEX_SLICE = ("--backend", "compute", "--accelerator", "v6e-16", "--route", "flex")


def test_a_flex_start_v6e_16_slice_runs_and_every_part_is_verified_gone(tmp_path, home):
    code, events, stderr = launch(tmp_path, *FLEX_SLICE, where=("--zone", ZONE))
    assert code == 0, stderr
    states = [e["state"] for e in events if e["event"] == "provisioning"]
    assert {"CREATING_TEMPLATE", "CREATING_MIG", "RESIZING"} <= set(states)
    assert next(e for e in events if e["event"] == "ready")["workers"] == 4
    slice_checks = [e for e in events if e["event"] == "check" and e["name"] == "slice"]
    assert len(slice_checks) == 4 and all(e["ok"] for e in slice_checks)
    assert any(e["event"] == "teardown_verified" for e in events)
    assert no_part_left(home) and ledger_all_gone(home)


# The state the wait reports while each part is being created (its insert sent, the part before
# it done): a signal there meets that part's create. The policy's insert is the create call
# itself, sent right after the launch says its resource exists ("resource_exists").
DURING = {
    "the policy's create": "resource_exists",
    "the template's create": "CREATING_TEMPLATE",
    "the MIG's create": "CREATING_MIG",
    "the resize": "RESIZING",
}
# What status lists of the slice after a SIGKILL there (a part's own words in NodeInfo.parts).
PARTS_BY_THEN = {
    "resource_exists": {"policy"},
    "CREATING_TEMPLATE": {"policy", "template"},
    "CREATING_MIG": {"policy", "template", "MIG"},
    "RESIZING": {"policy", "template", "MIG"},
}
POINTS = [f"{sig} during {part}" for part in DURING for sig in ("SIGTERM", "SIGKILL")]


@pytest.mark.parametrize("point", rotating(POINTS, per_run=1))
def test_a_signal_during_each_part_s_create_leaves_no_part(tmp_path, home, point):
    sig_name, part = point.split(" during ")
    state = DURING[part]

    def at(e: dict) -> bool:
        return e["event"] == state or (e["event"] == "provisioning" and e["state"] == state)

    # A longer practice delay: each part's operation is still running when the signal lands.
    code, events = launch_until(
        tmp_path,
        at,
        *FLEX_SLICE,
        sig=getattr(signal, sig_name),
        zone=ZONE,
        TPUWIZARD_SANDBOX_DELAY="2",
    )
    if sig_name == "SIGTERM":  # the launch tears the slice down itself, and verifies it
        assert code != 0 and any(e["event"] == "teardown_verified" for e in events), events
        assert no_part_left(home) and ledger_all_gone(home)
        return
    assert code == -signal.SIGKILL
    left = status(tmp_path)
    if state == "resource_exists" and not left:
        assert ledger_all_gone(home)  # killed before the policy's insert: nothing was made
        return
    assert len(left) == 1, left  # the slice, as one resource, found by its parts
    assert PARTS_BY_THEN[state] <= set(left[0]["parts"]), left
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == []
    assert no_part_left(home) and ledger_all_gone(home)
