"""The free routes' ledgers on a disk that refuses (issue 48, item 1): no push or session without
its intent on disk, and a later record refused never stops the run, the verified stop or the
words; it is held, said, and read with the others."""

from __future__ import annotations

import errno

import pytest

from tests.unit.test_colab_core import FakeColab, a_run
from tests.unit.test_kaggle_core import FakeKernels
from tpuwizard.core.colab.run import run_session
from tpuwizard.core.errors import LedgerUnwritable
from tpuwizard.core.exit_codes import EXIT_OK
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.core.kaggle.run import prepare_run, run_kernel
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.colab import ColabSessionStopped
from tpuwizard.core.launch.events.kaggle import KernelPushed
from tpuwizard.core.launch.records import ledger_file
from tpuwizard.core.launch.records.ledger_file import append_lines


@pytest.fixture(autouse=True)
def _no_memory_left(monkeypatch):
    monkeypatch.setattr(ledger_file, "_IN_MEMORY", {})


def refusing(*ops: str):
    """The disk of the ledger: read-only for the records of ``ops``."""

    def append(path, data):
        if any(f'"op": "{op}"'.encode() in data for op in ops):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        append_lines(path, data)

    return append


def kernel_run(tmp_path, fake, *refused: str):
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    run = prepare_run(
        tmp_path / "src" / "main.py", (), (), 10, "TpuV5E8", "r1", tmp_path / "run", False, False
    )
    (tmp_path / "tmp").mkdir(exist_ok=True)
    ledger = KernelLedger(tmp_path / "ledger.jsonl", tmp_path / "tmp", refusing(*refused))
    fake.ledger = ledger
    return ledger, run_kernel(fake, run, ledger, poll_s=0)


def test_a_kaggle_push_without_its_intent_on_disk_never_happens(tmp_path):
    fake = FakeKernels(tmp_path)
    _ledger, events = kernel_run(tmp_path, fake, "intent")
    with pytest.raises(LedgerUnwritable) as refused:
        list(events)
    assert refused.value.errno == errno.EROFS and fake.pushed == []


def test_kaggle_records_refused_after_the_push_are_held_and_the_run_goes_on(tmp_path):
    fake = FakeKernels(tmp_path)
    ledger, stream = kernel_run(tmp_path, fake, "pushed", "ended")
    events = list(stream)
    held = [e for e in events if isinstance(e, ev.LedgerRecordHeld)]
    assert [e.op for e in held] == ["pushed", "ended"]
    (pushed,) = [e for e in events if isinstance(e, KernelPushed)]
    assert {e.name for e in held} == {pushed.kernel} and all(e.kept_in for e in held)
    assert isinstance(events[-1], ev.Finished) and events[-1].exit_code == EXIT_OK
    assert ledger.open_sessions() == []  # its end is read from where it is held


def test_a_colab_session_without_its_intent_on_disk_is_never_asked_for(tmp_path):
    colab = FakeColab()
    (tmp_path / "tmp").mkdir()
    ledger = KernelLedger(tmp_path / "colab.jsonl", tmp_path / "tmp", refusing("intent"))
    with pytest.raises(LedgerUnwritable):
        list(run_session(colab, a_run(tmp_path), ledger))
    # Only reads came before the refusal (the CLI's version and the account's usage): no
    # session was asked for.
    assert {call[0] for call in colab.calls} <= {"version", "usage"}


def test_a_colab_stop_whose_record_is_refused_is_still_verified_and_said(tmp_path):
    colab = FakeColab()
    colab.exec_code = "print('hi')"
    (tmp_path / "tmp").mkdir()
    ledger = KernelLedger(tmp_path / "colab.jsonl", tmp_path / "tmp", refusing("deleted"))
    events = list(run_session(colab, a_run(tmp_path), ledger))
    stopped = [e for e in events if isinstance(e, ColabSessionStopped)]
    assert [s.verified for s in stopped] == [True]
    (held,) = [e for e in events if isinstance(e, ev.LedgerRecordHeld)]
    assert held.op == "deleted" and held.reason == "Read-only file system" and held.kept_in
    assert isinstance(events[-1], ev.Finished) and events[-1].exit_code != 4
    assert ledger.held() == []  # the held "deleted" is read: nothing left open
