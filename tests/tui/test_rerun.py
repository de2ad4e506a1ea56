"""The script screen's "Run again": the same node, the script read again, then Tear down."""

from __future__ import annotations

import contextlib
import subprocess

import pytest
from textual.app import App
from textual.widgets import Input, Log

from tests.tui.pilot_helpers import on_screen, press, sandbox_nodes, until, walk_to_review
from tests.waiting import wait_until_async
from tpuwizard.core.errors import BadInput
from tpuwizard.tui.app import WizardApp

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("kept-node-e2e")

SIZE = (100, 32)


async def launch_until_the_rerun_choices(pilot, script) -> None:
    """Create with ``script`` from Review and wait for its first run's choices (Run again...)."""
    await walk_to_review(pilot)
    pilot.app.screen.query_one("#script", Input).value = str(script)
    await press(pilot, "#create")
    await on_screen(pilot, "ScriptScreen", 120)
    await until(pilot, lambda: pilot.app.screen.query("#rerun-choices"), 60, "the rerun choices")


async def test_run_again_reuses_the_node_and_reads_the_edited_script(tmp_path, home):
    script = tmp_path / "train.py"
    script.write_text("print('version', 1, flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        assert "version 1" in app.screen.log_text()
        (node,) = app.billing.existing()
        script.write_text("print('version', 2, flush=True)\n")  # as the editor would
        await press(pilot, "#run-again")
        await until(pilot, lambda: "version 2" in app.screen.log_text(), 60, "the second run")
        await until(pilot, lambda: app.screen.query("#end-runs"), 60, "the choices again")
        assert [n.name for n in app.billing.existing()] == [node.name]  # the same node
        await press(pilot, "#end-runs")
        # The teardown phase, or (when the delete was quick) the summary that follows it.
        after = ("TeardownScreen", "SummaryScreen")
        await until(pilot, lambda: type(app.screen).__name__ in after, 60, "the teardown")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")
    assert sandbox_nodes(home) == {}


async def test_run_again_has_the_focus_and_the_log_follows_the_new_run_at_80x24(tmp_path, home):
    script = tmp_path / "train.py"
    script.write_text("for i in range(40):\n    print('line', i, flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(80, 24)) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        await until(pilot, lambda: app.focused is app.screen.query_one("#run-again"), 30, "focus")
        log = app.screen.query_one(Log)
        await until(pilot, lambda: log.is_vertical_scroll_end, 30, "the end of the first run")
        await pilot.press("tab")  # Tab goes along the choices
        assert app.focused is app.screen.query_one("#edit-rerun")
        script.write_text("for i in range(40):\n    print('again', i, flush=True)\n")
        await pilot.press("shift+tab", "enter")  # Enter on Run again
        await until(pilot, lambda: "again 39" in app.screen.log_text(), 60, "the second run")
        await until(pilot, lambda: app.screen.query("#run-again"), 60, "the choices again")
        await until(pilot, lambda: not app.screen.pending, 30, "the log written")
        assert "--- running your script again ---" in log.lines
        # The new output is in sight: the log followed it to its end.
        await until(pilot, lambda: log.is_vertical_scroll_end, 30, "the end of the second run")
        assert app.focused is app.screen.query_one("#run-again")
        await press(pilot, "#end-runs")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")


async def test_a_shell_on_worker_0_between_runs_and_the_choices_stay(tmp_path, home, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("open('made-by-the-script.txt', 'w').write('x')\n")
    shells: list[str] = []

    def scripted_shell(argv, cwd=None, env=None):
        # The real shell command, typed into by this test instead of a person at a terminal.
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input="pwd; ls; find ~ -name made-by-the-script.txt\nexit 7\n",
            capture_output=True,
            text=True,
        )
        shells.append(done.stdout)
        return done.returncode

    monkeypatch.setattr(subprocess, "call", scripted_shell)
    monkeypatch.setattr(App, "suspend", lambda self: contextlib.nullcontext())  # no terminal here
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        (node,) = app.billing.existing()
        await press(pilot, "#open-shell")
        await until(pilot, lambda: "exit 7" in app.screen.log_text(), 30, "the shell's end")
        # The choices said again under the shell's end, with the minutes left now.
        said = app.screen.log_text().splitlines()
        assert said[-2] == "--- the shell on worker 0 ended (exit 7) ---"
        assert said[-1].startswith("Run it again, edit and rerun, open a shell, or tear down (")
        (out,) = shells
        assert str(home) in out and node.name in out  # a worker's home of this node
        assert "made-by-the-script.txt" in out  # the worker the script ran on
        # It starts in the folder the script ran in (its folder's copy, as `run`'s), under a
        # banner naming the folder, the venv and the script's variables: ls there shows the
        # script's file.
        banner, where, *rest = out.splitlines()
        assert banner.startswith("tpuwizard shell: in ") and "/.tpuwizard/work " in banner
        assert "COURSE_EXPECT_PLATFORM=cpu JAX_PLATFORMS=cpu" in banner
        assert where.endswith("/.tpuwizard/work")
        assert "made-by-the-script.txt" in rest[:-1]
        assert app.screen.query("#run-again") and app.billing.existing()  # nothing changed
        handle = app.handle
        await press(pilot, "#end-runs")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")
        with pytest.raises(BadInput, match="between runs"):
            handle.shell_command(0)  # the node is gone: no more shells


async def test_a_wizard_closed_between_runs_deletes_its_node_instead_of_waiting(tmp_path, home):
    # No way out was chosen (a crash, a closed terminal): the launch must not wait forever for
    # an answer with the node billing; it is deleted as on a signal.
    script = tmp_path / "train.py"
    script.write_text("print('done', flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        app.exit()
    await wait_until_async(lambda: sandbox_nodes(home) == {}, 60, "the node's delete")


async def test_a_missing_package_is_said_on_the_script_step_and_run_again_adds_it(tmp_path, home):
    """The script stops on ModuleNotFoundError: the Script step says why while the node is
    there, the package is filled in, and Run again installs it on the node, then the script
    passes; a package the plan refuses (jax) is said at once and nothing runs."""
    from tests.wheels import make_wheel

    make_wheel(home / "sandbox" / "wheels", "rerunpkg", "0.1", "VALUE = 42\n")
    script = tmp_path / "train.py"
    script.write_text("import rerunpkg\nprint('value', rerunpkg.VALUE, flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        verdict = str(app.screen.query_one("#script-verdict").render())
        assert "needs the package rerunpkg" in verdict and "ModuleNotFoundError" in verdict
        field = app.screen.query_one("#rerun-packages", Input)
        assert field.value == "rerunpkg"
        field.value = "jax==0.1"
        await press(pilot, "#run-again")
        assert app.screen.query("#rerun-choices")  # refused here: the choices stay
        field.value = "rerunpkg"
        await press(pilot, "#run-again")
        await until(pilot, lambda: "value 42" in app.screen.log_text(), 90, "the rerun")
        await until(pilot, lambda: app.screen.query("#end-runs"), 60, "the choices again")
        assert not app.screen.query_one("#script-verdict").display  # it passed now
        await press(pilot, "#end-runs")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")


async def test_an_install_on_run_again_streams_on_the_script_step_and_a_failed_one_says_so(
    tmp_path, home
):
    """Issue 49, item 2: Run again with a package that does not install stays on the Script
    step with its log (never back to Verify), streams uv's lines there, says that the install
    failed and the script did not run, and keeps the names in the field; corrected, the install
    shows what it added, and the Summary names the run whose install failed."""
    from tests.tui.pilot_helpers import record_screens
    from tests.wheels import make_wheel
    from tpuwizard.words.summary_text import summary_lines

    make_wheel(home / "sandbox" / "wheels", "rerunpkg", "0.1", "VALUE = 42\n")
    script = tmp_path / "train.py"
    script.write_text("print('first run', flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        screen = app.screen
        shown = record_screens(app)
        assert "first run" in screen.log_text()
        field = screen.query_one("#rerun-packages", Input)
        field.value = "no-such-pkg-tpuwizard"
        await press(pilot, "#run-again")
        await until(pilot, lambda: screen.query("#rerun-choices"), 90, "the choices again")
        await until(pilot, lambda: not screen.pending, 30, "the log written")
        assert app.screen is screen and shown == []  # the same step: never back to Verify
        log = " ".join(screen.log_text().split())  # as read, its wrapped lines joined
        assert "first run" in log  # the log was not cleared
        assert "installing no-such-pkg-tpuwizard with uv" in log  # uv's lines, streamed here
        assert "error: practice: no-such-pkg-tpuwizard could not be installed from the wheel" in log
        assert "Run 2: installing no-such-pkg-tpuwizard failed" in log
        assert "Your script did not run." in log and log.count("first run") == 1
        verdict = str(screen.query_one("#script-verdict").render())
        assert screen.query_one("#script-verdict").display
        assert "Run 2: installing no-such-pkg-tpuwizard failed" in verdict
        assert "Your script did not run" in verdict and "correct them and Run again" in verdict
        field = screen.query_one("#rerun-packages", Input)
        assert field.value == "no-such-pkg-tpuwizard"  # kept, to be corrected
        field.value = "rerunpkg"
        script.write_text("import rerunpkg\nprint('value', rerunpkg.VALUE, flush=True)\n")
        await press(pilot, "#run-again")
        await until(pilot, lambda: "value 42" in screen.log_text(), 90, "the third run")
        await until(pilot, lambda: screen.query("#end-runs"), 60, "the choices again")
        await until(pilot, lambda: not screen.pending, 30, "the log written")
        assert "Added packages: rerunpkg 0.1" in screen.log_text()  # a good install is said
        assert not screen.query_one("#script-verdict").display
        assert screen.query_one("#rerun-packages", Input).value == ""
        await press(pilot, "#end-runs")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")
        await on_screen(pilot, "SummaryScreen")
        text = "\n".join(summary_lines(app.last_summary, "wizard"))
    assert "Run 2: installing no-such-pkg-tpuwizard failed" in text
    assert "Failed during" not in text and "Exit code 0" in text


async def test_delete_now_at_the_rerun_choice_after_a_good_run_is_no_failure(
    tmp_path, home, monkeypatch
):
    """Issue 31, item 6: the script exited 0 and the user chose Delete now: the summary says the
    node was deleted as asked, never "Failed during script: Stopped"."""
    from tests.tui.test_quit_summary import finish_messages

    script = tmp_path / "train.py"
    script.write_text("print('done', flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    said = finish_messages(app, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        app.action_quit()
        await on_screen(pilot, "QuitGuard")
        await press(pilot, "#delete")
        await until(pilot, lambda: not app.is_running, 60, "the exit")
    assert app.return_code == 0
    (message,) = said
    assert message is not None and "Deleted at your request after your script finished." in message
    assert "Failed" not in message and "Stopped" not in message
    assert sandbox_nodes(home) == {}


def chip_holders(home) -> list[int]:
    """Who holds worker 0's chip (its practice stand-in) now, listed as a rerun lists them."""
    from tpuwizard.core.launch.workers.held_chip import listing_command, parse_listing
    from tpuwizard.core.remote.transports import LocalTransport
    from tpuwizard.sandbox.workers.chip import STAND_IN_FILES

    workers = list(home.glob("sandbox/workers/*/*/*/w0"))
    if not workers:
        return []
    said = LocalTransport(workers).run(0, listing_command(STAND_IN_FILES)).stdout
    return [h.pid for h in parse_listing(0, said).holders]


async def test_run_again_is_refused_while_another_holds_the_tpu_and_run_anyway_runs_it(
    tmp_path, home, monkeypatch
):
    """Issue 54, item 3: a process tpuwizard did not start holds the chip (as one started by
    hand over SSH): Run again says who and how to end it, runs nothing and keeps the node;
    Run anyway runs the script all the same, the holder left as it is."""
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "held_chip=other")
    script = tmp_path / "train.py"
    script.write_text("print('version', 1, flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await launch_until_the_rerun_choices(pilot, script)
        screen = app.screen
        await until(pilot, lambda: chip_holders(home), 60, "the fault's process on the chip")
        (pid,) = chip_holders(home)
        (node,) = app.billing.existing()
        assert not screen.query("#run-anyway")  # offered only after a refusal
        script.write_text("print('version', 2, flush=True)\n")
        await press(pilot, "#run-again")
        await until(pilot, lambda: screen.query("#run-anyway"), 60, "Run anyway")
        await until(pilot, lambda: not screen.pending, 30, "the log written")
        log = " ".join(screen.log_text().split())
        assert f"{node.name}'s TPU is held by a process tpuwizard did not start" in log
        assert f"worker 0: process {pid} (" in log and f"then kill {pid}" in log
        assert "version 2" not in log  # nothing ran
        verdict = str(screen.query_one("#script-verdict").render())
        assert f"Your script did not run: process {pid} on worker 0 holds the TPU" in verdict
        assert [n.name for n in app.billing.existing()] == [node.name]  # kept, as it was
        await press(pilot, "#run-anyway")
        await until(pilot, lambda: "version 2" in screen.log_text(), 60, "the run anyway")
        await until(pilot, lambda: screen.query("#run-again"), 60, "the choices again")
        assert not screen.query("#run-anyway")  # this run was not refused
        assert f"worker 0: process {pid} (" in screen.log_text()  # said as it went on
        assert chip_holders(home) == [pid]  # not tpuwizard's to end
        await press(pilot, "#end-runs")
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")
    assert sandbox_nodes(home) == {}
