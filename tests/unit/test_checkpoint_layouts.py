"""The checkpoint layouts people write into $TPUWIZARD_CHECKPOINTS, each found, copied home and
put back where the script looks for it: flax's
legacy step files, a flat folder with COMMITTED, a single file rewritten in place (orbax's
step folders written by real orbax: tests/integration/test_resumable_orbax.py); and a
folder whose files can never come home, said once on the first pass that finds it."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.resume.checkpoint_copier import CheckpointCopier, ResumeSetup
from tpuwizard.core.remote import checkpoint_layouts as layouts
from tpuwizard.core.remote import checkpoints as ck
from tpuwizard.core.remote.transports import LocalTransport, Transport
from tpuwizard.words.resume_text import chain_event_lines

PYTHON = sys.executable


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "w0" / "work" / "ckpt"
    path.mkdir(parents=True)
    return path


def copy(home: ck.CheckpointsHome, folder: Path) -> ck.PassResult:
    return home.copy_pass(LocalTransport([folder.parents[1]]), "work", PYTHON, "ckpt")


def put_back(home: ck.CheckpointsHome, tmp_path: Path) -> Path:
    """The resume point onto a new worker: its checkpoints folder there."""
    fresh = tmp_path / "new-tpu"
    fresh.mkdir(exist_ok=True)
    chosen = home.latest()
    assert chosen is not None
    ck.upload_set(LocalTransport([fresh]), home, chosen, "work/ckpt")
    return fresh / "work" / "ckpt"


def test_a_flat_folder_ending_with_committed_comes_home_and_goes_back_into_itself(
    folder: Path, tmp_path: Path
) -> None:
    np.save(folder / "state.npy", np.arange(6, dtype=np.float32))
    (folder / "meta.json").write_text('{"step": 10}')
    home = ck.CheckpointsHome(tmp_path / "home")
    assert copy(home, folder).taken == []  # no COMMITTED yet: a set still being written
    (folder / "COMMITTED").write_text("10\n")
    taken = copy(home, folder).taken
    assert [(s.name, s.kind, s.assumed) for s in taken] == [("ckpt", layouts.FOLDER_ITSELF, False)]
    assert sorted(taken[0].files) == ["COMMITTED", "meta.json", "state.npy"]
    # The next checkpoint: COMMITTED removed first, the files rewritten. Meanwhile the folder
    # is never taken (not even as loose files that held still), and the last set stays home.
    (folder / "COMMITTED").unlink()
    np.save(folder / "state.npy", np.arange(6, dtype=np.float32) * 2)
    for _ in range(2):
        during = copy(home, folder)
        assert during.taken == [] and during.unusable_files == 0
    resumed = put_back(home, tmp_path)
    assert sorted(p.name for p in resumed.iterdir()) == ["COMMITTED", "meta.json", "state.npy"]
    assert np.load(resumed / "state.npy").tolist() == [0, 1, 2, 3, 4, 5]
    (folder / "COMMITTED").write_text("20\n")
    again = copy(home, folder).taken
    assert [s.name for s in again] == ["ckpt"]
    assert np.load(put_back(home, tmp_path) / "state.npy").tolist() == [0, 2, 4, 6, 8, 10]


def test_flax_legacy_step_files_come_home_each_and_the_newest_goes_back(
    folder: Path, tmp_path: Path
) -> None:
    # What flax.training.checkpoints.save_checkpoint(ckpt_dir, target, step, keep=2) leaves
    # (its legacy, non-orbax path): "checkpoint_tmp" written, renamed "checkpoint_<step>",
    # files beyond the newest `keep` deleted. Written by hand: the bytes are msgpack to flax.
    (folder / "checkpoint_10").write_bytes(b"\x81\xa6params\x01")
    (folder / "checkpoint_20").write_bytes(b"\x81\xa6params\x02")
    (folder / "checkpoint_tmp").write_bytes(b"\x81\xa6par")  # step 30, being written
    home = ck.CheckpointsHome(tmp_path / "home")
    taken = copy(home, folder).taken
    assert sorted((s.name, s.kind, s.step) for s in taken) == [
        ("checkpoint_10", layouts.STEP_FILE, 10),
        ("checkpoint_20", layouts.STEP_FILE, 20),
    ]
    (folder / "checkpoint_tmp").rename(folder / "checkpoint_30")
    (folder / "checkpoint_10").unlink()  # keep=2
    assert [s.name for s in copy(home, folder).taken] == ["checkpoint_30"]
    resumed = put_back(home, tmp_path)
    assert [p.name for p in resumed.iterdir()] == ["checkpoint_30"]  # in the folder itself
    assert (resumed / "checkpoint_30").read_bytes() == (folder / "checkpoint_30").read_bytes()


@pytest.mark.parametrize("write", ["npz", "pickle"])
def test_a_single_file_rewritten_in_place_comes_home_once_it_held_still_across_two_passes(
    folder: Path, tmp_path: Path, write: str
) -> None:
    def save(step: int) -> None:
        if write == "npz":
            np.savez(folder / "state.npz", step=np.int64(step), w=np.full(4, step))
        else:
            (folder / "model.pkl").write_bytes(pickle.dumps({"step": step}))

    save(10)
    home = ck.CheckpointsHome(tmp_path / "home")
    first = copy(home, folder)
    assert first.taken == [] and first.unusable_files == 0  # seen once: not yet still
    taken = copy(home, folder).taken
    assert [(s.name, s.kind, s.assumed) for s in taken] == [("ckpt", layouts.LOOSE_FILES, True)]
    assert copy(home, folder).taken == []  # unchanged: not copied again
    save(20)
    assert copy(home, folder).taken == []  # changed since the last pass: not still yet
    assert [s.name for s in copy(home, folder).taken] == ["ckpt"]
    resumed = put_back(home, tmp_path)
    if write == "npz":
        assert int(np.load(resumed / "state.npz")["step"]) == 20
    else:
        assert pickle.loads((resumed / "model.pkl").read_bytes()) == {"step": 20}
    event = ev.CheckpointCopied("ckpt", None, 1, 10, "home/ckpt", assumed=True)
    assert "assumed complete: no COMMITTED marker" in chain_event_lines(event)[0]


def test_files_that_can_never_come_home_are_said_on_the_first_pass_and_only_once(
    folder: Path, tmp_path: Path
) -> None:
    for rel in ("latest/params.bin", "latest/opt.bin", "best/params.bin"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(b"x")
    worker = folder.parents[1]

    class Here(ck.CheckpointsHome):  # the worker's folders here, not on a TPU VM
        def copy_pass(self, transport: Transport, *_args: Any) -> ck.PassResult:
            return super().copy_pass(transport, "work", PYTHON, "ckpt")

    heard: list[ev.Event] = []
    setup = ResumeSetup("ckpt", Here(tmp_path / "home"), every_s=3600)
    copier = CheckpointCopier(LocalTransport([worker]), setup, heard.append)
    copier.copy_once()
    copier.copy_once()
    assert heard == [ev.CheckpointsUnusable("ckpt", 3)]
    line = chain_event_lines(heard[0])[0]
    assert line.startswith("ckpt/ holds 3 file(s) but no complete set: write COMMITTED last")
    assert "step folders" in line


def test_an_empty_folder_or_a_set_being_written_is_not_called_unusable() -> None:
    empty = layouts.find_sets(layouts.Listing(), "ckpt", None, False)
    assert not empty.unusable
    writing = layouts.Listing({"5.orbax-checkpoint-tmp": {"a": [1, 1]}})
    assert not layouts.find_sets(writing, "ckpt", None, False).unusable
    loose = layouts.Listing(top={"state.npz": [5, 1]})
    assert not layouts.find_sets(loose, "ckpt", None, False).unusable
    named = layouts.Listing({"latest": {"a": [1, 1]}})
    assert layouts.find_sets(named, "ckpt", None, False).unusable


def test_loose_files_rewritten_between_every_pass_are_said_after_three_passes(
    folder: Path, tmp_path: Path
) -> None:
    worker = folder.parents[1]

    class Here(ck.CheckpointsHome):  # the worker's folders here, not on a TPU VM
        def copy_pass(self, transport: Transport, *_args: Any) -> ck.PassResult:
            return super().copy_pass(transport, "work", PYTHON, "ckpt")

    heard: list[ev.Event] = []
    setup = ResumeSetup("ckpt", Here(tmp_path / "home"), every_s=60)
    copier = CheckpointCopier(LocalTransport([worker]), setup, heard.append)
    for step in range(6):  # the script saves between every two passes
        (folder / "state.npz").write_bytes(b"x" * (step + 1))
        copier.copy_once()
    assert heard == [ev.CheckpointsUnusable("ckpt", 1, 3, 60)]  # once, at the third change
    line = chain_event_lines(heard[0])[0]
    assert "changed between each of the last 3 copy passes (one every 1m)" in line
    assert "write COMMITTED last" in line
