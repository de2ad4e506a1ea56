"""A disk that refuses the ledger at the hand-over or the teardown (issue 48, item 1): the node is
kept and said kept and billing (exit 4), or deleted, verified and said gone; what is said comes
from the cloud's list, never from whether the ledger's line was written. And an intent that
cannot be written refuses the create."""

from __future__ import annotations

import errno
from dataclasses import replace
from types import SimpleNamespace

import pytest

from tests.fakes import MemoryCloud, checked, proven_workers
from tests.unit.test_launch_safety import RUN, ZONE, make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_TEARDOWN
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle.ending import Ending
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records import ledger_file
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.records.ledger_file import append_lines
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines


@pytest.fixture(autouse=True)
def _no_memory_left(monkeypatch):
    monkeypatch.setattr(ledger_file, "_IN_MEMORY", {})


def refusing(*ops: str):
    """The ledger file's disk: full (ENOSPC) for the records of ``ops``, as at the hand-over."""

    def append(path, data):
        if any(f'"op": "{op}"'.encode() in data for op in ops):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        append_lines(path, data)

    return append


def run(tmp_path, cloud, *refused: str, keep: bool = False):
    plan = replace(make_plan(tmp_path), deadline=Deadline(keep=keep))
    rt = make_runtime(tmp_path, cloud)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    rt.ledger = Ledger(rt.ledger.path, tmp_path / "tmp", refusing(*refused))
    events: list[ev.Event] = []
    code = run_launch(plan, rt, events.append, CancelToken())
    summary = RunSummary()
    for event in events:
        summary.apply(event)
    return code, events, summary, Ledger(rt.ledger.path, tmp_path / "tmp")


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_a_keep_the_disk_refuses_keeps_the_node_says_it_bills_and_exits_4(tmp_path, monkeypatch):
    proven_workers(monkeypatch)
    cloud = MemoryCloud()
    code, events, summary, ledger = run(tmp_path, cloud, "kept", keep=True)
    assert (ZONE, "tpu-a") in cloud.nodes and cloud.nodes[(ZONE, "tpu-a")].state == "READY"
    assert not of(events, ev.TeardownStarted)  # kept: nothing deletes it
    (kept,) = of(events, ev.Kept)
    (held,) = of(events, ev.LedgerRecordHeld)
    assert (held.name, held.op, held.reason) == ("tpu-a", "kept", "No space left on device")
    assert held.kept_in is not None
    assert events.index(kept) < events.index(held)  # said kept first, then the record's fate
    (finished,) = of(events, ev.Finished)
    assert code == finished.exit_code == EXIT_TEARDOWN and finished.remaining == ["tpu-a"]
    said = "\n".join(line for e in events for line in describe(e))
    # A practice runtime: the words say it runs, not billed (practice bills nothing).
    assert "Kept tpu-a in us-central1-a on purpose: it keeps running (practice: not billed" in said
    assert "(practice: not billed; on Google" in said
    assert "could not record that tpu-a is kept (No space left on device)" in said
    assert held.kept_in in said
    text = "\n".join(summary_lines(summary))
    assert "STILL RUNNING (practice: not billed): tpu-a." in text and "Exit code 4" in text
    assert "Nothing was created" not in text and "Nothing is billing" not in text
    assert f"  The ledger {ledger.path} could not record that tpu-a is kept" in text
    # The next command reads the kept record from where it is held.
    assert [(e.resource.name, e.op) for e in ledger.open_entries()] == [("tpu-a", "kept")]


def test_a_delete_whose_gone_record_the_disk_refuses_is_verified_and_said_gone(tmp_path):
    cloud = MemoryCloud()
    code, events, summary, ledger = run(tmp_path, cloud, "gone")
    assert cloud.nodes == {}
    assert of(events, ev.TeardownVerified) and not of(events, ev.TeardownFailed)
    (held,) = of(events, ev.LedgerRecordHeld)
    assert (held.name, held.op) == ("tpu-a", "gone")
    (finished,) = of(events, ev.Finished)
    # The launch's own code (its workers run nothing here), not 4: nothing may still bill.
    assert code == finished.exit_code == EXIT_FAILED and finished.remaining == []
    text = "\n".join(summary_lines(summary))
    assert "Nothing is billing. tpu-a in us-central1-a verified gone." in text
    assert "NOT verified gone" not in text and "STILL BILLING" not in text
    assert ledger.open_entries() == []  # the held gone record is read with the others


def test_a_created_record_the_disk_refuses_goes_on_and_still_deletes(tmp_path):
    cloud = MemoryCloud()
    code, events, _summary, ledger = run(tmp_path, cloud, "created")
    # Held, the created records go before the gone one, which waits behind them.
    assert [e.op for e in of(events, ev.LedgerRecordHeld)] == ["created", "created", "gone"]
    assert of(events, ev.Ready) and of(events, ev.TeardownVerified)
    assert cloud.nodes == {} and code == EXIT_FAILED
    assert ledger.open_entries() == []


def test_an_intent_the_disk_refuses_creates_nothing_and_exits_2(tmp_path):
    cloud = MemoryCloud()
    code, events, summary, ledger = run(tmp_path, cloud, "intent")
    assert cloud.count("create_node") == 0 and cloud.nodes == {}
    assert not of(events, ev.ResourceExists)
    (failed,) = of(events, ev.Failed)
    assert failed.diagnosis.kind == "ledger_unwritable"
    assert failed.diagnosis.title == "Nothing was created: tpuwizard's ledger could not be written"
    assert str(ledger.path) in failed.diagnosis.explanation
    assert code == EXIT_BAD_INPUT and of(events, ev.Finished)[0].remaining == []
    assert "Nothing is billing. Nothing was created." in "\n".join(summary_lines(summary))
    assert ledger.entries() == []


def test_a_launch_that_dies_in_its_ending_says_what_the_cloud_still_lists(tmp_path, monkeypatch):
    proven_workers(monkeypatch)
    """Whatever breaks the ending, "Nothing was created" is never said beside a node the
    cloud lists: the handle checks this launch's records against it."""
    from tpuwizard.session import runtime as session_runtime
    from tpuwizard.session.launch_handle import LaunchHandle

    cloud = MemoryCloud()
    plan = replace(make_plan(tmp_path), deadline=Deadline(keep=True))
    rt = make_runtime(tmp_path, cloud)

    def broken_keep(self, resource):
        raise RuntimeError("a bug in the hand-over")

    monkeypatch.setattr(Ending, "keep", broken_keep)
    monkeypatch.setattr(session_runtime, "build_runtime", lambda *args, **kw: rt)
    session = SimpleNamespace(
        ledger=rt.ledger, billing=BillingState(), cloud_for=lambda backend: cloud, practice=True
    )
    handle = LaunchHandle(session, replace(checked(plan), ready_timeout_s=5.0))  # type: ignore[arg-type]
    events = list(handle.events())
    (finished,) = of(events, ev.Finished)
    assert (ZONE, "tpu-a") in cloud.nodes
    assert finished.remaining == ["tpu-a"] and finished.exit_code == EXIT_TEARDOWN
    text = "\n".join(summary_lines(handle.summary))
    still = "STILL RUNNING (practice: not billed): tpu-a."  # a practice runtime
    assert "Nothing was created" not in text and still in text
    assert RUN in finished.run_dir


def test_teardown_says_verified_gone_and_where_a_refused_gone_record_is_held(tmp_path, monkeypatch):
    proven_workers(monkeypatch)
    """`down` and `teardown`: the verdict is the cloud's list's; the held record is said."""
    from pathlib import Path

    from tpuwizard.commands.choosing import result_data
    from tpuwizard.core.launch.records.ledger_file import Held
    from tpuwizard.core.launch.teardown.verified import delete_and_verify
    from tpuwizard.words.teardown_text import teardown_lines

    cloud = MemoryCloud()
    run(tmp_path, cloud, keep=True)  # a kept node, recorded
    (tmp_path / "tmp").mkdir(exist_ok=True)
    ledger = Ledger(tmp_path / "state" / "ledger.jsonl", tmp_path / "tmp", refusing("gone"))
    (entry,) = ledger.open_entries()
    result = delete_and_verify(cloud, ledger, entry.resource, pause=0.01)
    assert result.verified and cloud.nodes == {} and isinstance(result.held, Held)
    lines = teardown_lines(result, "owner")
    assert lines[0] == "  verified gone: tpu-a"
    assert "could not record that tpu-a is verified gone (No space left on device)" in lines[1]
    data = result_data(result)
    assert data["verified"] and data["record_held"]
    assert Path(str(data["record_kept_in"])).is_file()
