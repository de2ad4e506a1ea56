"""Run again before teardown: the launch waits for the front end, and only while time remains."""

import threading
import time

import pytest

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.errors import RemoteError, ScriptFailed
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.rerun import MIN_SECONDS_LEFT, Reruns, run_script_with_reruns


class FakeLaunch:
    """Runs a script whose exit codes come from a list; records what it emits."""

    def __init__(self, codes: list[int]) -> None:
        self.codes, self.runs = list(codes), 0
        self.events: list[ev.Event] = []
        self.cancel = CancelToken()
        self.script_exit_code: int | None = None

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)

    def run_script(self, transport) -> None:
        self.runs += 1
        self.script_exit_code = self.codes.pop(0)
        if self.script_exit_code:
            raise ScriptFailed(self.script_exit_code)

    def check_chip(self, transport, even_if_held: bool) -> None:
        """No process holds its chip (test_rerun_held_chip.py lists real ones)."""


def test_a_failed_run_can_be_fixed_and_run_again_then_teardown():
    launch, reruns = FakeLaunch([2, 0]), Reruns()
    reruns.answer(True)  # after the failure: edit and rerun
    reruns.answer(False)  # after the fixed run: tear down
    run_script_with_reruns(launch, None, reruns, time.time() + 3600)  # type: ignore[arg-type]
    done = [e for e in launch.events if isinstance(e, ev.ScriptDone)]
    assert launch.runs == 2 and [d.exit_code for d in done] == [2, 0]
    assert all(d.can_rerun for d in done)


def test_the_last_failure_is_raised_when_the_user_moves_on():
    launch, reruns = FakeLaunch([3]), Reruns()
    reruns.answer(False)
    with pytest.raises(RemoteError, match="code 3"):
        run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]


def test_no_rerun_is_offered_close_to_the_deadline():
    launch, reruns = FakeLaunch([0]), Reruns()
    deadline = time.time() + MIN_SECONDS_LEFT / 2
    run_script_with_reruns(launch, None, reruns, deadline)  # type: ignore[arg-type]
    (done,) = [e for e in launch.events if isinstance(e, ev.ScriptDone)]
    assert not done.can_rerun and launch.runs == 1  # nothing waited for an answer


def test_without_reruns_a_failure_is_the_launch_failure_at_once():
    launch = FakeLaunch([1])
    with pytest.raises(RemoteError):
        run_script_with_reruns(launch, None, None, None)  # type: ignore[arg-type]
    assert not [e for e in launch.events if isinstance(e, ev.ScriptDone)]


def test_a_stop_ends_the_wait_after_a_failed_run_as_a_stop():
    launch, reruns = FakeLaunch([1]), Reruns()
    threading.Timer(0.2, launch.cancel.set, args=("Delete now",)).start()
    with pytest.raises(Cancelled):
        run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]


class MissingFlax(FakeLaunch):
    """Fails on a missing module until flax is installed on the node."""

    def __init__(self) -> None:
        super().__init__([])
        self.installed: list[str] = []

    def run_script(self, transport) -> None:
        self.runs += 1
        self.script_exit_code = 0 if "flax" in self.installed else 1
        if self.script_exit_code:
            raise ScriptFailed(1, "flax", "flax")


def test_a_failed_run_says_why_at_once_and_a_rerun_adds_the_package_first(monkeypatch):
    from tpuwizard.core.launch.plan.packages import specs_from_field
    from tpuwizard.core.launch.workers import rerun

    launch, reruns = MissingFlax(), Reruns()

    def install(transport, packages, job_name, emit, cancel):
        launch.installed += [p.text for p in packages]
        return None  # installed

    monkeypatch.setattr(rerun, "install_packages", install)
    reruns.answer(True, specs_from_field("flax"))
    reruns.answer(False)
    run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]  # no raise
    first, second = [e for e in launch.events if isinstance(e, ev.ScriptDone)]
    assert first.exit_code == 1 and first.missing_package == "flax"
    assert first.diagnosis is not None and first.diagnosis.kind == "missing_package"
    assert launch.installed == ["flax"] and second.exit_code == 0 and second.diagnosis is None


def test_a_package_that_does_not_install_leaves_the_script_unrun_and_its_failure_standing(
    monkeypatch,
):
    from tpuwizard.core.launch.plan.packages import specs_from_field
    from tpuwizard.core.launch.workers import rerun

    launch, reruns = MissingFlax(), Reruns()
    monkeypatch.setattr(rerun, "install_packages", lambda *args: NOT_FOUND)
    reruns.answer(True, specs_from_field("flaxx"))
    reruns.answer(False)
    with pytest.raises(ScriptFailed):
        run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]
    done = [e for e in launch.events if isinstance(e, ev.ScriptDone)]
    assert launch.runs == 1 and [d.exit_code for d in done] == [1, 1]
    assert done[1].not_installed == ("flaxx",) and done[1].diagnosis == NOT_FOUND
    assert [d.run for d in done] == [1, 2]


NOT_FOUND = Diagnosis(
    "packages_failed",
    "A package asked for does not exist",
    "On worker 0, no package called flaxx exists on PyPI. Your script did not run.",
    ["Fix: check the name on pypi.org.", "Then launch again."],
)


def test_a_rerun_whose_packages_fail_is_named_on_the_summary_not_as_the_launchs_failure(
    monkeypatch,
):
    """Issue 49, item 2: run 1 passed, run 2's install failed, run 3 passed, then teardown: the
    summary names run 2's install and why, and says no "Failed during packages" (with its
    "read uv's output above") beside the launch's exit code 0."""
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.core.launch.plan.packages import specs_from_field
    from tpuwizard.core.launch.workers import rerun
    from tpuwizard.words.event_text import describe
    from tpuwizard.words.summary_text import summary_lines

    launch, reruns = FakeLaunch([0, 0]), Reruns()
    answers = iter([NOT_FOUND, None])
    monkeypatch.setattr(rerun, "install_packages", lambda *args: next(answers))
    reruns.answer(True, specs_from_field("flaxx"))  # run 2: its install fails
    reruns.answer(True, specs_from_field("flax"))  # run 3: corrected, installs, runs
    reruns.answer(False)
    run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]  # no raise
    assert launch.runs == 2 and not [e for e in launch.events if isinstance(e, ev.Failed)]
    failed = [e for e in launch.events if isinstance(e, ev.ScriptDone) and e.not_installed]
    assert [(d.run, d.not_installed) for d in failed] == [(2, ("flaxx",))]
    assert describe(failed[0], "wizard")[0] == (
        "Run 2: installing flaxx failed: A package asked for does not exist. "
        "Your script did not run."
    )
    summary = RunSummary()
    for event in (*launch.events, ev.Finished(True, 0, "runs/x", 0.01)):
        summary.apply(event)
    text = "\n".join(summary_lines(summary, "wizard"))
    assert (
        "  Run 2: installing flaxx failed: A package asked for does not exist. On worker 0, no "
        "package called flaxx exists on PyPI. Your script did not run." in text
    )
    assert "Failed during" not in text and "uv's output" not in text and "Exit code 0" in text


def test_delete_now_after_a_run_that_succeeded_is_no_failure():
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.words.summary_text import summary_lines

    launch, reruns = FakeLaunch([0]), Reruns()
    threading.Timer(0.2, launch.cancel.set, args=("quit", 0)).start()
    run_script_with_reruns(launch, None, reruns, None)  # type: ignore[arg-type]: no raise
    assert isinstance(launch.events[-1], ev.DeletingOnRequest)
    summary = RunSummary()
    for event in (*launch.events, ev.Finished(True, 0, "runs/x", 0.01)):
        summary.apply(event)
    text = "\n".join(summary_lines(summary, "wizard"))
    assert "Deleted at your request after your script finished." in text
    assert "Failed" not in text and "Stopped" not in text
