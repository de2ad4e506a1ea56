"""The free notebook route: write a notebook (NotebookScreen), or have tpuwizard run the
script on Kaggle or Colab, follow it (KaggleRunScreen, ColabRunScreen) and end on the Summary
with its receipt check.
Apart from app.py, which is at its size limit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost


async def free_route(app: WizardHost) -> None:
    from tpuwizard.core.errors import BadInput
    from tpuwizard.session.free.kaggle import kaggle_route_for
    from tpuwizard.tui.screens.base import BACK
    from tpuwizard.tui.screens.free_run import KaggleRunScreen
    from tpuwizard.tui.screens.notebook import NotebookScreen
    from tpuwizard.tui.screens.summary import SummaryScreen

    runs: Path = app.session.runs_base
    while True:
        chosen = await app.push_screen_wait(
            NotebookScreen(runs.parent, app.state.notebook_default())
        )
        if not isinstance(chosen, tuple):
            return  # back to the Route step
        where, script, packages = chosen
        app.state.take_notebook(script)
        if where == "kaggle":
            try:  # a folder too large, say: the words, and the notebook step again
                route = kaggle_route_for(script, app.force_sandbox, runs, packages=packages)
            except BadInput as err:
                app.notify(str(err), severity="warning", timeout=20)
                continue
            run_screen = KaggleRunScreen(route)
            break
        from tpuwizard.session.free.colab import colab_route_for
        from tpuwizard.tui.screens.free_run import ColabRunScreen

        try:  # no colab CLI (real): how to install it, and the notebook step again
            run_screen = ColabRunScreen(colab_route_for(script, app.force_sandbox, runs))
        except BadInput as err:
            app.notify(str(err), severity="warning", timeout=20)
            continue
        break
    summary = await app.push_screen_wait(run_screen)
    assert summary is not BACK, "a run on Kaggle or Colab is followed to its end: no Back"
    app.last_summary = summary
    screen = SummaryScreen(summary)
    await app.push_screen(screen)
    screen.offer([])
    choice = await screen.choice
    app.pop_screen()
    if choice.kind == "quit":
        app.action_quit()
