"""`launch --keep`: a stop signal after the launch kept its node but before the command handed it
over (its summary) deletes it, as "stopping now and deleting what this run created" says and as
`up` does at the same point (issue 39, item 4)."""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from types import SimpleNamespace

from tests.fakes import checked
from tests.unit.test_launch_safety import ZONE, make_plan
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.verified import TeardownResult
from tpuwizard.session.launch_handle import LaunchHandle
from tpuwizard.words.summary_text import summary_lines


def kept_launch(tmp_path, keep: bool = True):
    """A launch that ran to its end and kept its node: its events folded, its ledger record."""
    plan = replace(make_plan(tmp_path), deadline=Deadline(keep=keep))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    resource = Resource("node", plan.project, ZONE, "tpu-a", plan.accelerator, plan.run_id)
    deleted: list[Resource] = []

    def delete(resources):
        for r in resources:
            deleted.append(r)
            ledger.record("gone", r)
        return [TeardownResult(r, True) for r in resources]

    session = SimpleNamespace(ledger=ledger, billing=BillingState(), delete=delete, practice=True)
    handle = LaunchHandle(session, checked(plan))  # type: ignore[arg-type]
    ledger.record("intent", resource)
    ledger.record("kept", resource, kept_at=1000.0)
    for event in (
        ev.ResourceExists("tpu-a", "node", ZONE, plan.accelerator, "vm", plan.run_id),
        ev.BillingStarted("tpu-a", time.time() - 60, 1.2, ZONE),
        ev.Kept("tpu-a", ZONE, "tpuwizard teardown tpu-a --sandbox", 1.2),
        ev.Finished(True, 0, str(plan.run_dir), 0.01, ["tpu-a"]),
    ):
        session.billing.apply(event)
        handle.summary.apply(event)
    handle.finished = handle.summary.finished
    return handle, deleted


def test_a_stop_after_the_keep_before_the_hand_over_deletes_the_node(tmp_path):
    handle, deleted = kept_launch(tmp_path)
    handle.stop_for_signal(signal.SIGTERM, "SIGTERM")  # "Receipt ... saved" was just printed
    events = list(handle.delete_kept_after_stop())
    assert [type(e).__name__ for e in events] == ["TeardownVerified", "Finished"]
    assert [r.name for r in deleted] == ["tpu-a"]
    finished = events[-1]
    assert finished.exit_code == 128 + signal.SIGTERM and finished.remaining == []
    text = "\n".join(summary_lines(handle.summary))
    assert "Nothing is billing. tpu-a in us-central1-a verified gone." in text
    assert "STILL BILLING" not in text
    assert not handle.session.billing.may_bill()


def test_without_a_stop_or_with_the_users_own_keep_nothing_is_deleted(tmp_path):
    handle, deleted = kept_launch(tmp_path)
    assert list(handle.delete_kept_after_stop()) == []  # no stop: kept, handed over
    handle.cancel.request_keep()  # the wizard's Keep: the user's last word
    handle.stop_for_signal(signal.SIGTERM, "SIGTERM")
    assert list(handle.delete_kept_after_stop()) == [] and deleted == []
