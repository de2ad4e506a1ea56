"""A run on a kept node speaks the launch's events (issue 23, item 3): one worker runner and one
fetcher serve both, so `run --json` and `launch --json` print the same event names and fields
for the script's lines, its end and the files copied back.

Both run for real on a local worker home (the sandbox's shell) whose venv python is this one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_json_events_table import event_table
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.commands.common import show_event
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.heartbeat_book import HeartbeatBook
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.sandbox.workers.chip import STAND_IN_FILES
from tpuwizard.session.kept.nodes import KeptNode
from tpuwizard.session.session import new_run
from tpuwizard.words.event_text import describe

SCRIPT = (
    "import sys\n"
    "print('step', 1, sys.argv[1:], flush=True)\n"
    "open('out.txt', 'w').write('w' * 1000)\n"
)


@pytest.fixture
def worker(tmp_path: Path) -> LocalTransport:
    """A worker home with a bootstrapped venv's python (this interpreter)."""
    home = tmp_path / "w0"
    (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    (home / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
    return LocalTransport([home])


@pytest.fixture
def script(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "train.py").write_text(SCRIPT)
    return folder / "train.py"


def kept_node(transport: LocalTransport, tmp_path: Path) -> KeptNode:
    """A KeptNode over ``transport``, as KeptNodes.open makes one, without a cloud."""
    node = KeptNode.__new__(KeptNode)
    resource = Resource("node", "p", "us-central1-a", "tpu-k", "v5litepod-1", "r0")
    node.name, node.transport, node.idle_s = "tpu-k", transport, None
    node.entry = Entry(resource, "kept", 1, 1)
    node.node = SimpleNamespace(endpoints=["127.0.0.1"])  # type: ignore[assignment]
    node.rt = SimpleNamespace(  # type: ignore[assignment]
        expect="cpu", explicit_coordinator=False, chip_files=STAND_IN_FILES
    )
    session = SimpleNamespace(
        ledger=SimpleNamespace(path=tmp_path / "state" / "ledger.jsonl"),
        run_folder=lambda run_id: tmp_path / "runs" / run_id,
        new_run=lambda: new_run(tmp_path / "runs"),
        practice=True,
    )
    node.nodes = SimpleNamespace(  # type: ignore[assignment]
        session=session, book=HeartbeatBook(tmp_path / "state" / "heartbeats.json")
    )
    return node


def kept_run(transport: LocalTransport, tmp_path: Path, script: Path) -> list[ev.Event]:
    events: list[ev.Event] = []
    node = kept_node(transport, tmp_path)
    folder = LocalFolder.of_script(script)
    code = node.run(script, ["a"], ["out.txt"], folder, events.append, CancelToken())
    assert code == 0
    return events


def launch_script(transport: LocalTransport, tmp_path: Path, script: Path) -> list[ev.Event]:
    """The launch's own script step, on the same worker."""
    events: list[ev.Event] = []
    plan = launch_plan(
        "v5litepod-1",
        "us-central1-a",
        "p",
        "r1",
        tmp_path / "launch",
        workload=Workload(script=script, script_args=("a",), fetch=("out.txt",)),
    )
    rt = make_runtime(tmp_path, MemoryCloud())  # CPU devices; it names no coordinator
    ctx = LaunchContext(events.append, CancelToken(), LaunchState(plan.zone))
    steps = WorkerSteps(worker_input(plan, rt), ctx)
    steps.run_script(transport)
    return events


def json_lines(events: list[ev.Event], capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """What a command prints on stdout for these events with --json."""
    capsys.readouterr()
    for event in events:
        show_event(event, as_json=True)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_kept_run_emits_the_launch_events_from_run_started_to_finished(worker, tmp_path, script):
    events = kept_run(worker, tmp_path, script)
    names = [e.event_name() for e in events]
    assert names == [
        "run_started",
        "folder_synced",
        "script_line",
        "script_finished",
        "file_fetched",
        "compile_cache",
        "finished",
    ]
    started, synced, line, finished = events[0], events[1], events[2], events[-1]
    assert isinstance(started, ev.RunStarted) and started.node == "tpu-k"
    assert isinstance(synced, ev.FolderSynced) and synced.changed == ["train.py"]
    assert isinstance(line, ev.ScriptLine) and line.text == "step 1 ['a']"
    assert isinstance(finished, ev.Finished) and finished.remaining == ["tpu-k"]
    assert Path(events[4].path).read_text() == "w" * 1000  # type: ignore[attr-defined]
    assert finished.run_dir == started.run_dir and finished.exit_code == 0


def test_run_and_launch_copy_fetched_files_into_one_layout(worker, tmp_path, script):
    """runs/<id>/files/ for both: one layout, from paths.fetched_files (issue 27, item 14)."""
    ran = [e for e in kept_run(worker, tmp_path, script) if isinstance(e, ev.FileFetched)]
    launched = [e for e in launch_script(worker, tmp_path, script) if isinstance(e, ev.FileFetched)]
    run_dir = next(iter((tmp_path / "runs").iterdir()))
    assert [Path(e.path) for e in ran] == [run_dir / "files" / "out.txt"]
    assert [Path(e.path) for e in launched] == [tmp_path / "launch" / "files" / "out.txt"]


def test_run_json_and_launch_json_speak_one_vocabulary(worker, tmp_path, script, capsys):
    kept = json_lines(kept_run(worker, tmp_path, script), capsys)
    launch = json_lines(launch_script(worker, tmp_path, script), capsys)
    shared = ("script_line", "script_finished", "file_fetched")
    for name in shared:
        in_kept = [line for line in kept if line["event"] == name]
        in_launch = [line for line in launch if line["event"] == name]
        assert in_kept and in_launch, name
        assert [sorted(x) for x in in_kept] == [sorted(x) for x in in_launch], name
    script_lines = [(x["worker"], x["text"]) for x in kept if x["event"] == "script_line"]
    assert script_lines == [(0, "step 1 ['a']")]
    assert next(x for x in launch if x["event"] == "script_line")["text"] == "step 1 ['a']"
    assert kept[-1]["event"] == "finished" and kept[-1]["exit_code"] == 0
    table = event_table()  # the event reference says so of each
    assert all({"run", "watch"} <= table[x["event"]][1] for x in kept)
    assert all("launch" in table[x["event"]][1] for x in launch)


def test_a_stop_during_a_kept_run_ends_the_script_and_finishes_with_the_signals_code(
    worker, tmp_path
):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "slow.py").write_text("print('started', flush=True)\nimport time\ntime.sleep(60)\n")
    token = CancelToken()
    events: list[ev.Event] = []

    def emit(event: ev.Event) -> None:
        events.append(event)
        if isinstance(event, ev.ScriptLine):
            token.set("SIGTERM", 143)  # as the signal handler of run and watch does

    node = kept_node(worker, tmp_path)
    code = node.run(folder / "slow.py", [], [], LocalFolder(folder, "slow.py"), emit, token)
    assert code == 143
    finished = events[-1]
    assert isinstance(finished, ev.Finished) and finished.exit_code == 143
    assert not any(isinstance(e, ev.ScriptFinished) for e in events)  # it did not finish
    exits = list((tmp_path / "w0" / ".tpuwizard" / "jobs").glob("run-*/exit"))
    assert [f.read_text().strip() for f in exits] == ["143"]  # the job was ended


def test_a_file_that_did_not_come_back_whole_fails_the_kept_run(worker, tmp_path, script):
    class CutShort(LocalTransport):
        def argv(self, w: int, command: str) -> list[str]:
            if "changed while it was being copied" not in command:  # only the file stream is cut
                return super().argv(w, command)
            return ["bash", "-c", f"( {command}\n) | head -c 10"]

    events: list[ev.Event] = []
    node = kept_node(CutShort(worker.homes), tmp_path)
    code = node.run(
        script, [], ["out.txt"], LocalFolder.of_script(script), events.append, CancelToken()
    )
    assert code == 1
    missing = next(e for e in events if isinstance(e, ev.FileNotFetched))
    assert missing.path == "out.txt" and missing.incomplete
    assert isinstance(events[-1], ev.Finished) and events[-1].exit_code == 1


@pytest.mark.parametrize("as_json", [False, True])
def test_run_prints_the_scripts_lines_as_its_result_and_the_rest_on_stderr(
    worker, tmp_path, capsys, as_json
):
    from tpuwizard.commands.iterate import _run_once

    class CutShort(LocalTransport):
        def argv(self, w: int, command: str) -> list[str]:
            if "changed while it was being copied" not in command:
                return super().argv(w, command)
            return ["bash", "-c", f"( {command}\n) | head -c 10"]

    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "t.py").write_text(SCRIPT)
    node = kept_node(CutShort(worker.homes), tmp_path)
    args = (folder / "t.py", (), ("out.txt",), LocalFolder(folder, "t.py"), CancelToken())
    code = _run_once(node, *args, as_json)
    out, err = capsys.readouterr()
    assert code == 1  # the script exited 0, but its file did not come back whole
    assert "Not copied back: 'out.txt': " in err
    assert "(it did not arrive whole: the run fails for it)" in err
    if as_json:
        lines = [json.loads(line) for line in out.splitlines()]
        assert lines[0]["event"] == "run_started" and lines[-1]["event"] == "finished"
        assert "step 1 []" in err  # the words go to stderr, as launch --json's do
    else:
        assert out.splitlines() == ["step 1 []"]  # only the script's output is the result
        assert "Done (exit 1)" in err and "Still running (practice: not billed): tpu-k" in err


def test_watch_json_is_one_event_stream_across_its_runs(worker, tmp_path, script, monkeypatch):
    from click.testing import CliRunner

    import tpuwizard.commands.iterate as iterate
    import tpuwizard.commands.watching as watching
    from tpuwizard.cli import main

    node = kept_node(worker, tmp_path)
    monkeypatch.setattr(iterate, "open_kept", lambda session, name: node)
    monkeypatch.setattr(iterate, "_offer_teardown", lambda session, name, ask=True: None)

    def two_runs(kept, script, once, debounce):  # two saves' worth of runs, then the end
        for _ in range(2):
            once(LocalFolder.of_script(script), CancelToken())
        return None

    monkeypatch.setattr(watching, "watch_loop", two_runs)
    result = CliRunner().invoke(main, ["watch", "--sandbox", "--json", str(script), "x"])
    assert result.exit_code == 0, result.output
    names = [json.loads(line)["event"] for line in result.stdout.splitlines()]
    assert names.count("run_started") == 2 and names.count("finished") == 2
    assert names[0] == "run_started" and names[-1] == "finished"
    assert names.index("finished") < names.index("run_started", 1)  # one run after the other


def test_a_fetch_glob_that_matches_nothing_is_said_naming_the_glob(worker, tmp_path, script):
    # issue 39, item 11: `run --fetch` matching nothing said nothing.
    events: list[ev.Event] = []
    node = kept_node(worker, tmp_path)
    folder = LocalFolder.of_script(script)
    code = node.run(script, [], ["*.csv", "out/*.png"], folder, events.append, CancelToken())
    assert code == 0
    (nothing,) = [e for e in events if isinstance(e, ev.NothingMatched)]
    assert nothing.patterns == ("*.csv", "out/*.png")
    assert describe(nothing) == [
        "Nothing in the script's folder matched --fetch '*.csv' or 'out/*.png': nothing was "
        "copied back."
    ]
    matched = kept_run(worker, tmp_path, script)  # out.txt: something matched, nothing said
    assert not any(isinstance(e, ev.NothingMatched) for e in matched)
