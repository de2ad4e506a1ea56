"""Checkpoints copied home: complete sets only, whole or not at all, changed files only; and
the latest complete set put back. The worker side runs for real in a local shell."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tpuwizard.core.remote import checkpoints as ck
from tpuwizard.core.remote.transports import LocalTransport

PYTHON = sys.executable


@pytest.fixture
def worker(tmp_path: Path) -> Path:
    (tmp_path / "w0" / "work" / "ckpt").mkdir(parents=True)
    return tmp_path / "w0"


def put(worker: Path, rel: str, data: bytes) -> Path:
    path = worker / "work" / "ckpt" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def copy(home: ck.CheckpointsHome, worker: Path) -> ck.PassResult:
    return home.copy_pass(LocalTransport([worker]), "work", PYTHON, "ckpt")


def test_only_committed_sets_come_home_and_an_unchanged_set_is_not_copied_again(worker, tmp_path):
    put(worker, "step_5/state.npz", os.urandom(5000))
    put(worker, "step_5/COMMITTED", b"5\n")
    put(worker, "step_10/state.npz", b"half")  # not committed yet: never taken
    home = ck.CheckpointsHome(tmp_path / "home")
    first = copy(home, worker)
    assert [s.name for s in first.taken] == ["step_5"] and first.files_copied == 2
    assert (home.folder / "step_5" / "state.npz").read_bytes() == (
        worker / "work/ckpt/step_5/state.npz"
    ).read_bytes()
    assert not (home.folder / "step_10").exists()
    again = copy(home, worker)
    assert again.taken == [] and again.files_copied == 0
    put(worker, "step_10/COMMITTED", b"10\n")
    third = copy(home, worker)
    assert [s.name for s in third.taken] == ["step_10"] and third.files_copied == 2
    latest = home.latest()
    assert latest is not None and latest.name == "step_10" and latest.step == 10


def test_orbax_step_folders_count_once_renamed_from_their_temporary_name() -> None:
    listing = {"100": {"a": [1, 1]}, "200.orbax-checkpoint-tmp-123": {"a": [1, 1]}, "x": {}}
    assert ck.complete_sets(listing) == ["100"]
    # Where sets carry COMMITTED, a folder without it is never complete, whatever its name.
    listing["150"] = {"a": [1, 1], "COMMITTED": [0, 1]}
    assert ck.complete_sets(listing) == ["150"]


def test_a_set_that_changes_during_the_pass_is_dropped_and_the_last_whole_one_stays(
    worker, tmp_path, monkeypatch
):
    put(worker, "step_5/state.npz", b"five" * 100)
    put(worker, "step_5/COMMITTED", b"5\n")
    home = ck.CheckpointsHome(tmp_path / "home")
    copy(home, worker)
    put(worker, "step_10/state.npz", b"ten" * 100)
    put(worker, "step_10/COMMITTED", b"10\n")
    real = ck.fetch_file

    def and_rewrite(*args, **kwargs):  # the script saves again while the copy runs
        got = real(*args, **kwargs)
        put(worker, "step_10/state.npz", b"rewritten" * 100)
        return got

    monkeypatch.setattr(ck, "fetch_file", and_rewrite)
    result = copy(home, worker)
    assert result.taken == [] and "changed" in result.dropped["step_10"]
    assert home.latest().name == "step_5"  # type: ignore[union-attr]
    assert not (home.folder / "step_10").exists() and not (home.folder / ck.STAGING).exists()


def test_a_set_deleted_during_the_pass_is_dropped(worker, tmp_path, monkeypatch):
    put(worker, "step_5/state.npz", b"five")
    put(worker, "step_5/COMMITTED", b"5\n")
    real = ck.fetch_file

    def and_delete(*args, **kwargs):
        got = real(*args, **kwargs)
        for path in (worker / "work/ckpt/step_5").iterdir():
            path.unlink()
        (worker / "work/ckpt/step_5").rmdir()
        return got

    monkeypatch.setattr(ck, "fetch_file", and_delete)
    home = ck.CheckpointsHome(tmp_path / "home")
    result = copy(home, worker)
    assert result.taken == [] and "vanished" in result.dropped["step_5"]
    assert home.latest() is None


def test_the_latest_set_goes_back_checked_by_its_sha256(worker, tmp_path):
    put(worker, "step_5/state.npz", b"five")
    put(worker, "step_5/COMMITTED", b"5\n")
    home = ck.CheckpointsHome(tmp_path / "home")
    copy(home, worker)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    chosen = home.latest()
    assert chosen is not None
    ck.upload_set(LocalTransport([fresh]), home, chosen, "work/ckpt")
    assert (fresh / "work/ckpt/step_5/state.npz").read_bytes() == b"five"
    (home.folder / "step_5" / "state.npz").write_bytes(b"tampered")
    with pytest.raises(ck.FetchFailed, match="sha256"):
        ck.upload_set(LocalTransport([fresh]), home, chosen, "work/ckpt")
