"""The terminal goes away under a running wizard (a closed window, a dropped SSH session): it
finishes its teardown and exits 129, though nothing can be written to that terminal any more.

Each test runs the real command on a pseudo-terminal and closes the terminal's far end, as a
terminal emulator or sshd does; where the terminal is the wizard's controlling one, the kernel
then sends it SIGHUP. The bound on the exit is a hang detector, not a timing."""

from __future__ import annotations

import signal
import sys
import threading

from tests.integration.launch_helpers import ledger_all_gone, ledger_holds, sandbox_is_empty
from tests.tui.pilot_helpers import make_leftover, on_screen, sandbox_nodes, until
from tests.tui.terminal import HANG_S
from tests.waiting import wait_until
from tpuwizard.tui.app import WizardApp

WIZARD = [sys.executable, "-m", "tpuwizard", "--sandbox"]


def test_a_terminal_gone_without_a_sighup_is_noticed(terminals):
    # Not its controlling terminal, so no SIGHUP comes: the wizard sees the hangup itself.
    terminal = terminals(WIZARD, controlling=False)
    terminal.wait_for(b"Recommended")
    terminal.hang_up()
    assert terminal.exit_code() == 129


def test_a_hangup_with_the_leftovers_dialog_open_deletes_nothing_and_exits(terminals, home):
    leftover = make_leftover(home)
    terminal = terminals(WIZARD)
    terminal.wait_for(leftover.encode())  # the dialog that asks about it
    terminal.hang_up()
    assert terminal.exit_code() == 129
    assert [n.rsplit("/", 1)[1] for n in sandbox_nodes(home)] == [leftover]  # none said delete


def test_a_hangup_while_a_node_is_created_deletes_it_and_exits(terminals, home, tmp_path):
    report = tmp_path / "creating"
    # A slow practice cloud: the node is still being created when the terminal goes, so its
    # delete is refused for a while, as Google's is, and the ledger says delete_pending.
    terminal = terminals(
        [sys.executable, "-m", "tests.tui.wizard_on_terminal", str(report)],
        TPUWIZARD_SANDBOX_DELAY="5",
    )
    wait_until(lambda: report.exists() or terminal.proc.poll() is not None, 120, "the create")
    assert report.exists(), f"the wizard ended first: {terminal.shown[-800:]!r}"
    terminal.hang_up()
    # Then SIGTERM, as a logout may follow up, during the teardown: it neither starts a second
    # one nor changes the exit code, the first signal's.
    wait_until(lambda: ledger_holds(home, "delete_pending"), HANG_S, "the teardown")
    terminal.proc.send_signal(signal.SIGTERM)
    assert terminal.exit_code() == 129
    assert ledger_holds(home, "gone") and ledger_all_gone(home)
    assert sandbox_is_empty(home)


async def test_a_sighup_to_a_test_s_app_ends_it_but_not_the_test_runner(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test() as pilot:
        await on_screen(pilot, "RouteScreen")
        app.on_signal(signal.SIGHUP)  # what the loop's handler calls
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert app.return_code == 129
    assert not app.hangup.noticed  # so no os._exit is on its way
    assert "tpuwizard-hangup-exit" not in [t.name for t in threading.enumerate()]
