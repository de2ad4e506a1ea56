"""The script screen's "Run again": the same node, the script read again, then Tear down."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.pilot_helpers import on_screen, press, sandbox_nodes, until, walk_to_review
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)


async def test_run_again_reuses_the_node_and_reads_the_edited_script(tmp_path, home):
    script = tmp_path / "train.py"
    script.write_text("print('version', 1, flush=True)\n")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        app.screen.query_one("#script", Input).value = str(script)
        await press(pilot, "#create")
        await on_screen(pilot, "ScriptScreen", 120)
        await until(pilot, lambda: app.screen.query("#run-again"), 60, "the rerun choices")
        assert "version 1" in app.screen.log_text()
        (node,) = app.billing.existing()
        script.write_text("print('version', 2, flush=True)\n")  # as the editor would
        await press(pilot, "#run-again")
        await until(pilot, lambda: "version 2" in app.screen.log_text(), 60, "the second run")
        await until(pilot, lambda: app.screen.query("#end-runs"), 60, "the choices again")
        assert [n.name for n in app.billing.existing()] == [node.name]  # the same node
        await press(pilot, "#end-runs")
        await on_screen(pilot, "TeardownScreen", 60)
        await until(pilot, lambda: not app.billing.existing(), 60, "verified teardown")
    assert sandbox_nodes(home) == {}
