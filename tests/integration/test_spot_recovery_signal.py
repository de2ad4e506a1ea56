"""A stop signal while a preempted spot run is being recovered, before the new create (the new
node's intent in the ledger, the ``resource_exists`` that says so on its way out): tpuwizard
deletes what it made, verifies it gone and exits 128 + the signal, and the next `status` lists
nothing billing. The signals take turns (tests/rotation.py): one end-to-end launch a run.
test_spot_recovery_kill.py is the SIGKILL drill at the same points."""

from __future__ import annotations

import shutil
import signal

import pytest

from tests.integration.launch_helpers import (
    launch_until,
    ledger_all_gone,
    names,
    sandbox_is_empty,
    status,
)
from tests.integration.test_spot_recovery_kill import FAST, PREEMPT_ONCE, nth
from tests.integration.test_spot_resume import ARGS, EXAMPLE
from tests.rotation import rotating

SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


@pytest.mark.parametrize("name", rotating(list(SIGNALS), per_run=1))
def test_a_stop_before_the_new_create_deletes_it_and_nothing_bills(tmp_path, home, name):
    sig = SIGNALS[name]
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(EXAMPLE, job / "train.py")
    code, seen = launch_until(
        tmp_path,
        nth("resource_exists", 2),
        *("--accelerator", "v5litepod-4", "--route", "spot", "--script", str(job / "train.py")),
        *("--checkpoints", "ckpt", "--checkpoint-every", "1s", "--", *ARGS),
        sig=sig,
        TPUWIZARD_SANDBOX_FAULTS=PREEMPT_ONCE,
        **FAST,
    )
    kinds = names(seen)
    assert code == 128 + sig, kinds
    assert "preempted" in kinds and "recreating" in kinds
    # The new attempt's resource (its intent recorded when the stop came) was deleted and
    # verified gone after it.
    at = [i for i, kind in enumerate(kinds) if kind == "resource_exists"][1]
    assert kinds.index("recreating") < at
    made = seen[at]["name"]
    assert [e["name"] for e in seen[at:] if e["event"] == "teardown_verified"] == [made]
    assert seen[-1]["event"] == "finished" and seen[-1]["exit_code"] == 128 + sig
    assert status(tmp_path, **FAST) == []
    assert sandbox_is_empty(home) and ledger_all_gone(home)
