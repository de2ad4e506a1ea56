"""The summary at 80 columns: folded lines keep their place; each file once; the last run only."""

from tests.lifecycle_events import planned
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.screens.summary import SummaryScreen

LONG = "epoch 3: " + " ".join(f"metric_{i}=0.{i}" for i in range(12))  # longer than 80


def after_run_again() -> RunSummary:
    summary = RunSummary()
    for event in (
        planned("d"),
        ev.ScriptLine(0, "first run"),
        ev.ScriptFinished(0),
        ev.FileFetched("runs/d/files/out.txt"),
        ev.ScriptDone(0, True, 600.0),
        ev.ScriptLine(0, "second run"),
        ev.ScriptLine(0, LONG),
        ev.ScriptFinished(0),
        ev.FileFetched("runs/d/files/out.txt"),
        ev.Finished(True, 0, "runs/d", 0.4),
    ):
        summary.apply(event)
    return summary


async def test_the_summary_folds_with_a_hanging_indent_at_80_columns() -> None:
    app = Harness(lambda: SummaryScreen(after_run_again()))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.screen.query_one("#summary")
        shown = str(widget.render()).splitlines()
        assert all(len(line) <= widget.content_size.width for line in shown)
        assert all(line.startswith("  ") for line in shown[1:])  # nothing at column 1
        quoted = [line for line in shown if "metric_" in line]
        assert len(quoted) >= 2 and all(line.startswith("    | ") for line in quoted)
        assert "first run" not in "\n".join(shown) and "    | second run" in shown
        assert sum("Copied back: runs/d/files/out.txt" in line for line in shown) == 1
