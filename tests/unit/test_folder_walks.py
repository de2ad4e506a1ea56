"""The plan's folder-size rule walks the script's folder at most once in a short while (the
wizard asks the plan's problems as the user types), and again at once when the folder changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.remote import sync
from tpuwizard.words.choice_words import all_words


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def walks(monkeypatch) -> tuple[Clock, list[Path]]:
    """A fresh cache on a clock the test moves, counting each walk of a folder."""
    clock, walked = Clock(), []
    monkeypatch.setattr(sync, "FOLDER_SIZES", sync.FolderSizes(ttl_s=2.0, clock=clock))
    walk = sync.folder_files

    def counted(root: Path, script: str | None, left=None):
        walked.append(root)
        return walk(root, script, left)

    monkeypatch.setattr(sync, "folder_files", counted)
    return clock, walked


def plan_for(script: Path) -> LaunchPlan:
    return launch_plan(
        accelerator="v5litepod-1",
        zone="us-central1-a",
        project="course-project",
        run_id="r1",
        run_dir=script.parent / "runs" / "r1",
        workload=Workload(script=script),
    )


def lesson(tmp_path: Path) -> Path:
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "main.py").write_text("print(1)\n")
    return folder / "main.py"


def test_a_second_call_does_not_walk_the_folder_again(tmp_path, walks):
    _, walked = walks
    plan = plan_for(lesson(tmp_path))
    assert plan.problems() == [] and plan.problems() == []
    assert len(walked) == 1


def test_a_changed_folder_is_walked_again_at_once(tmp_path, walks, monkeypatch):
    _, walked = walks
    monkeypatch.setattr(sync, "MAX_FOLDER_BYTES", 1000)
    script = lesson(tmp_path)
    plan = plan_for(script)
    assert plan.problems() == []
    before = script.parent.stat().st_mtime_ns
    (script.parent / "data.bin").write_bytes(b"x" * 2000)
    # The new file changed the folder's mtime; set it apart too where the clock is coarse.
    os.utime(script.parent, ns=(before + 10**9, before + 10**9))
    (problem,) = all_words(plan.problems(), "cli")
    assert "holds more than" in problem and len(walked) == 2


def test_a_change_deeper_down_is_seen_once_the_short_while_is_over(tmp_path, walks, monkeypatch):
    clock, walked = walks
    monkeypatch.setattr(sync, "MAX_FOLDER_BYTES", 1000)
    script = lesson(tmp_path)
    (script.parent / "data").mkdir()
    plan = plan_for(script)
    assert plan.problems() == []
    mtime = script.parent.stat().st_mtime_ns
    (script.parent / "data" / "big.bin").write_bytes(b"x" * 2000)
    assert script.parent.stat().st_mtime_ns == mtime  # the folder itself did not change
    assert plan.problems() == [] and len(walked) == 1  # within the short while: as it was
    clock.now += 2.0
    assert len(plan.problems()) == 1 and len(walked) == 2


def test_another_limit_is_walked_again(tmp_path, walks, monkeypatch):
    _, walked = walks
    plan = plan_for(lesson(tmp_path))
    assert plan.problems() == []
    monkeypatch.setattr(sync, "MAX_FOLDER_BYTES", 1)
    assert len(plan.problems()) == 1 and len(walked) == 2
