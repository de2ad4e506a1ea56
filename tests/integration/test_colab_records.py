"""`status` and `teardown` for the Colab ledger's sessions, through the session layer and the
stand-in program (no JAX: nothing runs on the runtimes): listed as `colab sessions` lists them,
stopped only where the ledger and the name say tpuwizard made them and their launch has ended,
verified by listing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import tpuwizard.session.free.colab_records as records
from tpuwizard.core.kaggle.ledger import KernelLedger
from tpuwizard.session.free.colab import colab_ledger, practice_program
from tpuwizard.session.free.colab_records import held_on_colab, records_named, tear_down_sessions
from tpuwizard.words.colab_text import held_lines, torn_lines


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TPUWIZARD_COLAB_FAULTS", raising=False)
    return tmp_path / "state"


def _made(name: str, run_id: str, pid: int | None = None) -> None:
    """A session as a launch leaves it when killed: recorded, made, its endpoint recorded."""
    program = practice_program()
    colab_ledger().record("intent", name, run_id, practice=True, pid=pid)
    program.new(name, "v5e1")
    [listed] = [s for s in program.sessions() if s.name == name]
    colab_ledger().record("pushed", name, run_id, endpoint=listed.endpoint)


def _names() -> set[str]:
    return {s.name for s in practice_program().sessions()}


def test_a_left_session_is_listed_then_stopped_and_verified_others_untouched(state):
    _made("tpuwizard-r1", "r1")
    practice_program().new("tpuwizard-users-own", "v5e1")  # made with the CLI: not in the ledger
    [seen] = held_on_colab()
    assert (seen.session, seen.state, seen.practice) == ("tpuwizard-r1", "running", True)
    assert "tpuwizard teardown tpuwizard-r1 --sandbox" in held_lines(seen)[0]
    assert records_named("tpuwizard-users-own") == []  # teardown NAME does not take it
    [torn] = tear_down_sessions(records_named("tpuwizard-r1"))
    assert torn.stopped and torn_lines(torn) == [
        "Stopped tpuwizard-r1: colab sessions no longer lists it."
    ]
    assert _names() == {"tpuwizard-users-own"}
    assert colab_ledger().held() == [] and held_on_colab() == []


def test_a_session_whose_launch_still_runs_is_left_to_it(state):
    _made("tpuwizard-r2", "r2", pid=os.getpid())  # this process: alive
    [seen] = held_on_colab()
    assert seen.state == "launch-running"
    [torn] = tear_down_sessions(records_named("tpuwizard-r2"))
    assert not torn.stopped and "not touched" in torn_lines(torn)[0]
    assert "tpuwizard-r2" in _names()


def test_a_session_colab_no_longer_lists_is_recorded_gone_without_a_stop(state):
    _made("tpuwizard-r3", "r3")
    practice_program().stop("tpuwizard-r3")  # ended elsewhere (the CLI, or Colab reclaimed it)
    [seen] = held_on_colab()
    assert seen.state == "gone" and colab_ledger().held() == []


def test_a_stop_whose_record_the_disk_refuses_is_still_verified_and_the_record_said(
    state, tmp_path, monkeypatch
):
    """The disk takes the session's records, then refuses (full, or a home made read-only):
    `teardown` still says it stopped (verified by listing), and says beside it that its record
    is held and where; `status` of one gone meanwhile says the same of its closing record."""
    _made("tpuwizard-r4", "r4")
    _made("tpuwizard-r5", "r5")
    (tmp_path / "tmp").mkdir()

    def refuse(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    refusing = KernelLedger(colab_ledger().path, tmp_path / "tmp", refuse)
    monkeypatch.setattr(records, "colab_ledger", lambda: refusing)

    [torn] = tear_down_sessions(records_named("tpuwizard-r4"))
    assert torn.stopped and "tpuwizard-r4" not in _names()
    said = torn_lines(torn)
    assert said[0] == "Stopped tpuwizard-r4: colab sessions no longer lists it."
    [held] = torn.unrecorded
    assert held.op == "deleted" and held.kept_in is not None
    assert said[1].startswith(f"The ledger {refusing.path} could not record that tpuwizard-r4 is")
    assert f"kept in {held.kept_in}" in said[1]
    assert torn.to_dict()["records_held"][0]["kept_in"] == held.kept_in

    practice_program().stop("tpuwizard-r5")  # ended elsewhere
    [seen] = [s for s in held_on_colab() if s.session == "tpuwizard-r5"]
    assert seen.state == "gone" and [h.op for h in seen.unrecorded] == ["deleted"]
    assert "could not record that tpuwizard-r5 is gone" in held_lines(seen)[1]
