"""A launch's script and ``tpuwizard run``'s get the same folder, the same environment and the
same saved output (issue 27, items 1, 3 and 4), on a local worker home with a real shell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import LAST_LINES, RunSummary
from tpuwizard.core.launch.kept.iterate import ScriptRun, run_script
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote import sync
from tpuwizard.core.remote.sync import LocalFolder, folder_problems
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

# What the course's programs read, and what tpuwizard adds: printed by the script, one a line.
SHOWN = ("COURSE_EXPECT_PLATFORM", "JAX_PLATFORMS", "XLA_FLAGS", "TPUWIZARD_RUN_ID")
SCRIPT = f"""
import os, sys
import helper  # a sibling module: the folder travels with the script
for key in {SHOWN!r}:
    print(key, "=", os.environ.get(key))
print("args", sys.argv[1:])
for step in range(20):
    print("step", step, helper.WORD)
"""


@pytest.fixture
def workers(tmp_path) -> LocalTransport:
    """Two worker homes, each with a bootstrapped venv's python (this interpreter)."""
    homes = []
    for worker in range(2):
        home = tmp_path / f"w{worker}"
        (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
        (home / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
        homes.append(home)
    return LocalTransport(homes)


@pytest.fixture
def script(tmp_path) -> Path:
    folder = tmp_path / "lesson"
    folder.mkdir()
    (folder / "helper.py").write_text("WORD = 'from-helper'\n")
    (folder / "main.py").write_text(SCRIPT)
    return folder / "main.py"


def by_launch(script: Path, transport: LocalTransport, run_dir: Path) -> list[ev.Event]:
    events: list[ev.Event] = []
    plan = launch_plan(
        accelerator="v5litepod-16",  # 4 VMs of 4 chips; two worker homes are enough here
        zone="us-central1-a",
        project="course-project",
        run_id="r1",
        run_dir=run_dir,
        workload=Workload(script=script, script_args=("--steps", "8")),
    )
    rt = make_runtime(run_dir, MemoryCloud())  # CPU devices; it names no coordinator
    ctx = LaunchContext(events.append, CancelToken(), LaunchState(plan.zone))
    steps = WorkerSteps(worker_input(plan, rt), ctx)
    steps.run_script(transport)
    return events


def by_run(script: Path, transport: LocalTransport, run_dir: Path) -> list[ev.Event]:
    events: list[ev.Event] = []
    run = ScriptRun(
        script, ("--steps", "8"), "r1", run_dir, parse_accelerator("v5litepod-16"), "cpu"
    )
    code = run_script(transport, run, LocalFolder.of_script(script), events.append, CancelToken())
    assert code == 0
    return events


def lines(events: list[ev.Event]) -> list[tuple[int, str]]:
    return [(e.worker, e.text) for e in events if isinstance(e, ev.ScriptLine)]


def test_launch_and_run_give_the_script_its_folder_and_one_environment(tmp_path, workers, script):
    launched = lines(by_launch(script, workers, tmp_path / "runs" / "a"))
    ran = lines(by_run(script, workers, tmp_path / "runs" / "b"))
    assert sorted(launched) == sorted(ran)  # the same lines on both workers, whichever way
    text = [t for w, t in ran if w == 0]
    assert "COURSE_EXPECT_PLATFORM = cpu" in text  # `run` set only JAX_PLATFORMS before
    assert "JAX_PLATFORMS = cpu" in text
    assert "XLA_FLAGS = --xla_force_host_platform_device_count=4" in text
    assert "TPUWIZARD_RUN_ID = r1" in text
    assert "args ['--steps', '8']" in text
    assert "step 19 from-helper" in text  # launch copied one file before: `import helper` failed


def test_the_whole_output_of_every_worker_is_kept_and_said(tmp_path, workers, script):
    for run_dir, way in ((tmp_path / "a", by_launch), (tmp_path / "b", by_run)):
        events = way(script, workers, run_dir)
        saved = (run_dir / "output.txt").read_text().splitlines()
        # Every line of both workers, prefixed, far more than the summary's last lines.
        assert len(saved) == 2 * 25 > LAST_LINES
        assert "[w0] step 0 from-helper" in saved and "[w1] step 19 from-helper" in saved
        (finished,) = [e for e in events if isinstance(e, ev.ScriptFinished)]
        assert finished.output == str(run_dir / "output.txt")
        said = describe(finished)[0]
        assert f"(the course keeps it as tpu-report.txt): {run_dir / 'output.txt'}" in said
        summary = RunSummary()
        for event in events:
            summary.apply(event)
        assert any(str(run_dir / "output.txt") in line for line in summary_lines(summary))


def test_a_second_run_into_the_same_file_is_appended_after_a_line_that_says_so(
    tmp_path, workers, script
):
    run_dir = tmp_path / "a"
    by_launch(script, workers, run_dir)
    (script.parent / "helper.py").write_text("WORD = 'edited'\n")
    by_launch(script, workers, run_dir)  # the wizard's Run again: the same launch's folder
    saved = (run_dir / "output.txt").read_text().splitlines()
    assert len(saved) == 2 * 2 * 25 + 1
    assert saved[50].startswith("--- tpuwizard: the script ran again")
    assert "[w1] step 19 edited" in saved[51:]  # only the edit travelled, and it did


def test_a_script_in_the_home_folder_or_the_root_is_refused_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "main.py").write_text("print(1)\n")
    plan = launch_plan(
        accelerator="v5litepod-1",
        zone="us-central1-a",
        project="course-project",
        run_id="r1",
        run_dir=tmp_path / "runs" / "r1",
        workload=Workload(script=tmp_path / "main.py"),
    )
    (problem,) = all_words(plan.problems(), "cli")
    assert "your home folder" in problem and "Put the script in its own folder" in problem
    (root,) = folder_problems(Path("/main.py"))
    assert "the root folder /" in root
    (tmp_path / "lesson").mkdir()
    (tmp_path / "lesson" / "main.py").write_text("print(1)\n")
    assert folder_problems(tmp_path / "lesson" / "main.py") == []


def test_a_folder_over_the_limit_is_refused_by_the_plan_with_the_same_exclusions(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(sync, "MAX_FOLDER_BYTES", 1000)
    folder = tmp_path / "lesson"
    (folder / "runs" / "old").mkdir(parents=True)
    (folder / "main.py").write_text("print(1)\n")
    (folder / "runs" / "old" / "output.txt").write_bytes(b"x" * 5000)  # runs/ never travels
    (folder / ".venv").mkdir()
    (folder / ".venv" / "big").write_bytes(b"x" * 5000)
    plan = launch_plan(
        accelerator="v5litepod-1",
        zone="us-central1-a",
        project="course-project",
        run_id="r1",
        run_dir=tmp_path / "runs" / "r1",
        workload=Workload(script=folder / "main.py"),
    )
    assert plan.problems() == []
    (folder / "data.bin").write_bytes(b"x" * 2000)
    (problem,) = all_words(plan.problems(), "cli")
    assert "holds more than" in problem and "move data sets out" in problem


def test_tpuwizards_own_state_folder_never_travels_with_the_script(tmp_path, home):
    """Its SSH key and ledger stay here, even when TPUWIZARD_HOME is inside the script's
    folder (as in this test: tmp_path/state)."""
    (home / "ssh").mkdir(parents=True)
    (home / "ssh" / "id_ed25519").write_text("PRIVATE\n")
    (tmp_path / "main.py").write_text("print(1)\n")
    assert sorted(LocalFolder(tmp_path).manifest()) == ["main.py"]


def test_the_plan_line_says_how_much_of_the_folder_goes_and_what_stays(tmp_path):
    """Said before the create (issue 49, item 7): a 60 MB folder is named as such on the plan
    line, over the 50 MB mark, with the secrets left out by name (issue 48, item 2)."""
    from tpuwizard.core.launch.lifecycle.launch import run_launch

    folder = tmp_path / "lesson"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text("SECRET\n")
    (folder / ".env").write_text("TOKEN=1\n")
    (folder / "main.py").write_text("print(1)\n")
    with open(folder / "data.bin", "wb") as data:
        data.truncate(60_000_000)  # sparse: its size without the disk
    plan = launch_plan(
        accelerator="v5litepod-1",
        zone="us-central1-a",
        project="course-project",
        run_id="r1",
        run_dir=tmp_path / "runs" / "r1",
        workload=Workload(script=folder / "main.py"),
    )
    events: list[ev.Event] = []
    run_launch(plan, make_runtime(tmp_path / "runs", MemoryCloud()), events.append, CancelToken())
    planned = events[0]
    assert isinstance(planned, ev.Planned) and planned.folder is not None
    assert (planned.folder.files, planned.folder.size) == (2, 60_000_000 + len("print(1)\n"))
    line, secrets = describe(planned)
    assert line.startswith("[practice] Creating ")
    assert line.endswith(
        "Your script's folder: 2 files, 60 MB, sent to each worker. That is over 50 MB: the "
        "copy takes a while; a .tpuwizardignore file in the folder leaves data out."
    )
    assert secrets == "  Never sent (keys, credentials, .env files): .ssh/, .env."
    (folder / ".tpuwizardignore").write_text("*.bin\n")
    events.clear()
    run_launch(plan, make_runtime(tmp_path / "runs", MemoryCloud()), events.append, CancelToken())
    shown = describe(events[0])[0]  # the data left out: the script and the ignore file go
    assert shown.endswith("Your script's folder: 2 files, 15 bytes, sent to each worker.")
