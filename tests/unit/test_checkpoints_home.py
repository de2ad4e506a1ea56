"""Checkpoints copied home: complete sets only, whole or not at all, changed files only; and
the latest complete set put back. The worker side runs for real in a local shell."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tpuwizard.core.remote import checkpoint_layouts as layouts
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
    listing["300.orbax-checkpoint-tmp"] = {"a": [1, 1]}  # orbax 0.12's own name for it
    listing["p_400.orbax-checkpoint-tmp7"] = {"a": [1, 1]}  # a name ending in digits all the same
    assert layouts.complete_folders(listing) == ["100"]
    # Where sets carry COMMITTED, a folder without it is never complete, whatever its name.
    listing["150"] = {"a": [1, 1], "COMMITTED": [0, 1]}
    assert layouts.complete_folders(listing) == ["150"]


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


def test_on_a_multi_host_slice_checkpoints_come_from_worker_0_and_go_back_to_every_worker(
    worker, tmp_path
):
    other = tmp_path / "w1"  # worker 1 saves too (each host of a slice runs the script)
    put(worker, "step_5/state.npz", b"worker 0's")
    put(worker, "step_5/COMMITTED", b"5\n")
    put(other, "step_5/state.npz", b"worker 1's own shard")
    put(other, "step_5/COMMITTED", b"5\n")
    put(other, "step_9/state.npz", b"only on worker 1")
    put(other, "step_9/COMMITTED", b"9\n")
    slice_ = LocalTransport([worker, other])
    home = ck.CheckpointsHome(tmp_path / "home")
    result = home.copy_pass(slice_, "work", PYTHON, "ckpt")
    assert [s.name for s in result.taken] == ["step_5"]  # worker 1's step_9 is never looked at
    assert (home.folder / "step_5" / "state.npz").read_bytes() == b"worker 0's"
    fresh = [tmp_path / "new0", tmp_path / "new1"]  # the new slice after a preemption
    for new in fresh:
        new.mkdir()
    chosen = home.latest()
    assert chosen is not None
    ck.upload_set(LocalTransport(fresh), home, chosen, "work/ckpt")
    for new in fresh:
        assert (new / "work/ckpt/step_5/state.npz").read_bytes() == b"worker 0's"


@pytest.mark.parametrize("saving", ["20.orbax-checkpoint-tmp", "20.orbax-checkpoint-tmp-17645"])
def test_an_orbax_step_still_under_its_temporary_name_does_not_come_home(worker, tmp_path, saving):
    # orbax-checkpoint writes step 20 into 20.orbax-checkpoint-tmp (0.12; some releases add
    # -<timestamp>), then renames it to 20.
    put(worker, "10/default/manifest.ocdbt", b"ten")
    put(worker, "10/_CHECKPOINT_METADATA", b"{}")
    put(worker, f"{saving}/default/manifest.ocdbt", b"twenty, half written")
    home = ck.CheckpointsHome(tmp_path / "home")
    first = copy(home, worker)
    assert [s.name for s in first.taken] == ["10"] and not (home.folder / saving).exists()
    ckpt = worker / "work" / "ckpt"
    (ckpt / saving).rename(ckpt / "20")  # orbax finalises the step
    second = copy(home, worker)
    assert [s.name for s in second.taken] == ["20"] and home.latest().step == 20  # type: ignore[union-attr]
