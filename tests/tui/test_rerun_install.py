"""Issue 49, item 2, on every run (the end-to-end walk through the sandbox is in
test_rerun.py, which rotates): Run again's install belongs to the Script step, and a failed one
says so there, keeping the names in the field."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.pilot_helpers import press, until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.workers.rerun import Reruns
from tpuwizard.session.launch_handle import LaunchHandle
from tpuwizard.tui.screens.run import ScriptScreen, VerifyScreen, phase_screen

FAILED = Diagnosis(
    "packages_failed",
    "A package asked for does not exist",
    "On worker 0, no package called flaxx exists on PyPI. Your script did not run.",
    ["Fix: check the name on pypi.org.", "Then launch again."],
)


class Handle:
    """What the Script step asks of a launch between runs: the real checks, answers recorded."""

    check_packages = staticmethod(LaunchHandle.check_packages)

    def __init__(self) -> None:
        self.reruns = Reruns()
        self.summary = RunSummary()
        self.asked: list[str] = []
        self.anyway: list[bool] = []  # each answer's even_if_held

    def run_again(self, packages: str = "", even_if_held: bool = False) -> None:
        self.asked.append(packages)
        self.anyway.append(even_if_held)


def test_the_install_of_a_run_again_stays_on_the_script_step():
    script = ScriptScreen()
    for event in (
        ev.BootstrapLine(0, "installing flaxx with uv"),
        ev.Versions(0, {"jax": "0.12.0.1", "packages": {"flax": "0.12.12"}}),
    ):
        assert phase_screen(event, script) is script
    assert isinstance(phase_screen(ev.BootstrapLine(0, "x"), None), VerifyScreen)  # at launch


async def test_a_failed_install_keeps_the_names_and_says_the_script_did_not_run():
    app = Harness(ScriptScreen)
    app.handle = Handle()  # type: ignore[attr-defined]
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.show(ev.ScriptLine(0, "first run"))
        screen.show(ev.ScriptDone(0, True, 3000.0))
        await pilot.pause()
        screen.query_one("#rerun-packages", Input).value = "flaxx"
        await press(pilot, "#run-again")
        assert app.handle.asked == ["flaxx"]  # type: ignore[attr-defined]
        screen.show(ev.BootstrapLine(0, "error: no package flaxx"))
        screen.show(ev.ScriptDone(0, True, 2900.0, FAILED, None, ("flaxx",), 2))
        await pilot.pause()
        await pilot.pause()
        field = screen.query_one("#rerun-packages", Input)
        assert field.value == "flaxx"  # kept, to be corrected
        verdict = screen.query_one("#script-verdict")
        said = " ".join(str(verdict.render()).split())
        assert verdict.display and said.startswith(
            "Run 2: installing flaxx failed: A package asked for does not exist."
        )
        assert "Your script did not run." in said and "Fix: check the name on pypi.org." in said
        assert "correct them and Run again" in said
        log = screen.log_text()
        assert "first run" in log and "error: no package flaxx" in log
        assert "Run 2: installing flaxx failed" in log
        run_again = screen.query_one("#run-again")
        await until(pilot, lambda: app.focused is run_again, what="Run again focused")


async def test_run_anyway_is_offered_after_a_held_tpu_refused_the_rerun_and_forwarded():
    """Issue 54, item 3, on every run (the walk through the sandbox is in test_rerun.py): Run
    anyway comes only after a refusal that going on can pass, forwards even_if_held, and the
    packages typed for the refused run stay in the field."""
    app = Harness(ScriptScreen)
    app.handle = Handle()  # type: ignore[attr-defined]
    held = ev.ChipHeldRefusal("tpu-a", (ev.ChipHolding(0, 77, "jupyter"),))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.show(ev.ScriptDone(0, True, 3000.0))
        await pilot.pause()
        assert not screen.query("#run-anyway")
        screen.query_one("#rerun-packages", Input).value = "flax"
        await press(pilot, "#run-again")
        screen.show(ev.ScriptDone(0, True, 2900.0, run=2, chip_held=held))
        await until(pilot, lambda: screen.query("#run-anyway"), what="Run anyway")
        assert screen.query_one("#rerun-packages", Input).value == "flax"  # kept for the next
        verdict = " ".join(str(screen.query_one("#script-verdict").render()).split())
        assert verdict.startswith("Your script did not run: process 77 on worker 0 holds the TPU")
        await press(pilot, "#run-anyway")
        assert app.handle.asked == ["flax", "flax"]  # type: ignore[attr-defined]
        assert app.handle.anyway == [False, True]  # type: ignore[attr-defined]
        assert "(Run anyway)" in screen.log_text()
        # A holder of ours that SIGKILL did not end: going on cannot pass it, so no Run anyway.
        stuck = ev.ChipHeldRefusal("tpu-a", (ev.ChipHolding(0, 42, "python"),), unended=True)
        screen.show(ev.ScriptDone(0, True, 2800.0, run=3, chip_held=stuck))
        await until(pilot, lambda: screen.query("#run-again"), what="the choices")
        assert not screen.query("#run-anyway")
