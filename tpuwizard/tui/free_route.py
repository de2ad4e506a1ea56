"""The free notebook route: write a notebook (NotebookScreen), or have tpuwizard run the
script on Kaggle, follow it (KaggleRunScreen) and end on the Summary with its receipt check.
Apart from app.py, which is at its size limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any


async def free_route(app: Any) -> None:  # app: the TpuWizard app
    from tpuwizard.session.kaggle_route import kaggle_route_for, practice_for_kaggle
    from tpuwizard.tui.screens.kaggle_run import KaggleRunScreen
    from tpuwizard.tui.screens.notebook import NotebookScreen
    from tpuwizard.tui.screens.summary import SummaryScreen

    runs: Path = app.session.runs_base
    script = await app.push_screen_wait(NotebookScreen(runs.parent, app.state.script))
    if not isinstance(script, Path):
        return  # back to the Route step
    app.state.script = script
    route = kaggle_route_for(script, practice_for_kaggle(app.force_sandbox), runs)
    summary = await app.push_screen_wait(KaggleRunScreen(route))
    app.last_summary = summary
    screen = SummaryScreen(summary)
    await app.push_screen(screen)
    screen.offer([])
    choice = await screen.choice
    app.pop_screen()
    if choice.kind == "quit":
        app.action_quit()
