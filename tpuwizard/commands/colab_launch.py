"""``launch --route colab``: the script run on a Colab TPU runtime through Google's colab CLI."""

from __future__ import annotations

import sys
from pathlib import Path

from tpuwizard.commands.common import check_free_route_input, say, show_event, show_summary
from tpuwizard.core.errors import BadInput


def launch_on_colab(
    script: Path | None,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    max_run: float | None,
    run_dir: Path | None,
    sandbox: bool,
    as_json: bool,
    refused: dict[str, bool],
) -> None:
    """Check everything that can be checked here (exit 2, nothing called), then follow the run.

    ``refused``: options of the other routes given with this one, by name (each exits 2)."""
    from tpuwizard.core.colab.diagnosis import INSTALL_WORDS
    from tpuwizard.core.colab.run import prepare_run
    from tpuwizard.session.free.colab import ColabRoute, colab_practice_why, program_for
    from tpuwizard.session.session import new_run

    why = (
        "a Colab runtime is one TPU chip Colab chooses, with nothing to keep and no checkpoint "
        "folder"
    )
    script = check_free_route_input("colab", "Colab", why, refused, script)
    practice_why = colab_practice_why(sandbox)
    practice = practice_why is not None
    run_id, run_folder = new_run(run_dir)
    run = prepare_run(
        script, script_args, fetch, max_run, run_id, run_folder, practice, practice_why or ""
    )
    program = program_for(practice)
    if program is None:
        raise BadInput(INSTALL_WORDS)
    route = ColabRoute(run, program)
    code = route.follow(lambda event: show_event(event, as_json), say)
    show_summary(route.summary, as_json)  # as a TPU route's launch ends: the same lines
    sys.exit(code)
