"""The course keeps its script's printout as tpu-report.txt; tpuwizard keeps it as output.txt.
The script step and the summary call output.txt by the course's name for it; naming
tpu-report.txt under Files to copy back (or --fetch) is answered with where it is; a file
named outright that the script did not leave is said on the script's step, before teardown."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.lifecycle_events import planned
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.workers.jobs import fetch_files
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.words.course_text import fetch_note
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

COURSE_WORDS = "your script's whole output (the course keeps it as tpu-report.txt)"


def test_the_script_step_and_the_summary_call_output_txt_by_the_courses_name() -> None:
    finished = ev.ScriptFinished(0, "runs/r1/output.txt")
    assert describe(finished)[0].endswith(f"{COURSE_WORDS.capitalize()}: runs/r1/output.txt")
    summary = RunSummary()
    for event in (planned(), ev.ScriptLine(0, "hi"), finished):
        summary.apply(event)
    assert any(COURSE_WORDS.capitalize() in line for line in summary_lines(summary))


def test_naming_tpu_report_txt_to_copy_back_is_told_where_the_course_report_is() -> None:
    note = fetch_note(["reports/*.json", "tpu-report.txt"])
    assert note is not None
    assert "tee'd" in note and "output.txt" in note and "only if your script writes it" in note
    assert fetch_note(["reports/*.json"]) is None


def test_a_named_file_the_script_did_not_leave_is_said_when_the_files_come_back(
    tmp_path: Path,
) -> None:
    work = tmp_path / "w0" / "work"
    work.mkdir(parents=True)
    (work / "metrics.json").write_text("{}")
    heard: list[ev.Event] = []
    patterns = ["metrics.json", "tpu-report.txt", "plots/*.png"]
    transport = LocalTransport([tmp_path / "w0"])
    fetch_files(transport, "work", sys.executable, patterns, tmp_path / "files", heard.append)
    missing = [e for e in heard if isinstance(e, ev.FileNotFetched)]
    assert [e.path for e in missing] == ["tpu-report.txt"]  # a glob that matched nothing is not
    assert not missing[0].incomplete
    lines = describe(missing[0])
    assert "no file of that name" in lines[0]
    assert "output.txt" in lines[1]  # where the course's tpu-report.txt is instead


def test_where_the_worker_could_not_list_its_files_none_is_called_missing(tmp_path: Path) -> None:
    (tmp_path / "w0").mkdir()  # no "work" folder there: the listing's cd fails
    heard: list[ev.Event] = []
    transport = LocalTransport([tmp_path / "w0"])
    patterns = ["tpu-report.txt"]
    fetch_files(transport, "work", sys.executable, patterns, tmp_path / "files", heard.append)
    assert not any("no file of that name" in getattr(e, "reason", "") for e in heard)


def test_a_file_as_it_was_uploaded_is_not_copied_back_as_the_scripts(tmp_path: Path) -> None:
    """The learner's own CPU report, uploaded with the folder and untouched on the worker,
    never comes home as the TPU run's file; one the script rewrote, or made, does."""
    from tpuwizard.core.remote.sync import WORK_DIR, LocalFolder, sync_folder

    laptop = tmp_path / "laptop"
    laptop.mkdir()
    (laptop / "tpu01.py").write_text("print('hi')\n")
    (laptop / "tpu-report.txt").write_text('{"platform": "cpu"}\n')
    (laptop / "metrics.json").write_text("{}")
    venv = tmp_path / "w0" / ".tpuwizard" / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)  # a bootstrapped worker's python
    transport = LocalTransport([tmp_path / "w0"])
    sync_folder(transport, 0, LocalFolder.of_script(laptop / "tpu01.py"), use_rsync=False)
    work = tmp_path / "w0" / WORK_DIR
    (work / "metrics.json").write_text('{"loss": 0.1}')  # the script rewrote this one
    (work / "new.txt").write_text("made on the worker")
    heard: list[ev.Event] = []
    patterns = ["tpu-report.txt", "metrics.json", "*.txt"]
    fetch_files(transport, WORK_DIR, sys.executable, patterns, tmp_path / "files", heard.append)
    fetched = sorted(Path(e.path).name for e in heard if isinstance(e, ev.FileFetched))
    assert fetched == ["metrics.json", "new.txt"]
    [unchanged] = [e for e in heard if isinstance(e, ev.FileNotFetched)]
    assert unchanged.path == "tpu-report.txt" and not unchanged.incomplete
    assert "unchanged since it was uploaded from this computer" in unchanged.reason
    assert not (tmp_path / "files" / "tpu-report.txt").exists()
    summary = RunSummary()
    for event in (planned(), ev.ScriptLine(0, "hi"), ev.ScriptFinished(0, "o.txt"), *heard):
        summary.apply(event)
    words = " ".join(summary_lines(summary))
    assert "unchanged since it was uploaded" in words
    assert "tpu-report.txt" not in words.split("Copied back")[-1].split("Not copied")[0]
