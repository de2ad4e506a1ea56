"""tpuwizard SIGKILLed while it recovers a preempted spot run: after the old node is verified
gone, before the new create (its intent in the ledger), after it, and while the checkpoint goes
up. `teardown --all` then finds whatever was left (the sandbox and the ledger end empty), the
run folder holds the complete set `--resume-from` needs, and (once, for the latest kill point:
a whole launch is costly) `launch --resume-from` that run goes on from it, ending where an
uninterrupted run ends. test_resume_budget.py proves --resume-from's rules in memory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.launch_helpers import (
    launch,
    launch_until,
    ledger_all_gone,
    names,
    sandbox_is_empty,
    teardown_all,
)
from tests.integration.test_spot_resume import ARGS, EXAMPLE, uninterrupted_final_line
from tests.rotation import rotating
from tpuwizard.core.remote.checkpoints import CheckpointsHome

# Preempted once three sets are committed: a copy pass has brought one home by then.
PREEMPT_ONCE = "preempt_on=.tpuwizard/work/ckpt/*/COMMITTED;preempt_on_count=3;preempt_times=1"
FAST = {"TPUWIZARD_SANDBOX_DELAY": "0.05"}


def nth(kind: str, n: int):
    """A stop point: the n-th event of ``kind``."""
    seen = [0]

    def at(event: dict) -> bool:
        seen[0] += event["event"] == kind
        return seen[0] == n and event["event"] == kind

    return at


KILL_POINTS = {
    "old node gone": nth("teardown_verified", 1),
    "before the new create": nth("resource_exists", 2),
    "after the new create": nth("ready", 2),
    "during the upload": nth("folder_synced", 2),  # the set goes up right after the folder
}


@pytest.mark.parametrize(
    "point", rotating(list(KILL_POINTS), per_run=1, always=("during the upload",))
)
def test_a_kill_during_recovery_leaves_nothing_teardown_misses_and_the_run_resumes(
    tmp_path, home, point
):
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(EXAMPLE, job / "train.py")
    common = ("--accelerator", "v5litepod-4", "--route", "spot", "--script", str(job / "train.py"))
    resumable = (*common, "--checkpoints", "ckpt", "--checkpoint-every", "1s")
    _, seen = launch_until(
        tmp_path,
        KILL_POINTS[point],
        *resumable,
        "--",
        *ARGS,
        TPUWIZARD_SANDBOX_FAULTS=PREEMPT_ONCE,
        **FAST,
    )
    assert "preempted" in names(seen)
    cleaned = teardown_all(tmp_path, **FAST)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)

    run_id = seen[0]["run_id"]
    home_sets = CheckpointsHome(Path(seen[0]["run_dir"]) / "checkpoints")
    latest = home_sets.latest()
    assert latest is not None and home_sets.missing_files(latest) == []
    if point != "during the upload":
        return
    code, events, stderr = launch(
        tmp_path, *resumable, "--resume-from", run_id, "--", *ARGS, timeout=300, **FAST
    )
    assert code == 0, (stderr, names(events))
    resumed = next(e for e in events if e["event"] == "resumed")
    assert resumed["attempt"] == 1 and resumed["checkpoint"] == latest.name
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines[0] == f"resume: from step {resumed['step']}"
    assert lines[-1] == uninterrupted_final_line()
    assert sandbox_is_empty(home) and ledger_all_gone(home)
