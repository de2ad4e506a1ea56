"""``launch --route kaggle``: the script run as a private Kaggle kernel on Kaggle's TPU."""

from __future__ import annotations

import sys
from pathlib import Path

from tpuwizard.commands.common import check_free_route_input, say, show_event, show_summary


def launch_on_kaggle(
    accelerator: str | None,
    script: Path | None,
    script_args: tuple[str, ...],
    fetch: tuple[str, ...],
    max_run: float | None,
    run_dir: Path | None,
    sandbox: bool,
    as_json: bool,
    refused: dict[str, bool],
    delete_kernel: bool = False,
    with_specs: tuple[str, ...] = (),
    requirements: tuple[Path, ...] = (),
) -> None:
    """Check everything that can be checked here (exit 2, nothing pushed), then follow the run.

    ``refused``: options of the TPU routes given with this one, by name (each exits 2)."""
    from tpuwizard.core.kaggle.kernel import machine_shape
    from tpuwizard.core.kaggle.run import prepare_run
    from tpuwizard.session.free.kaggle import KaggleRoute, kaggle_practice_why
    from tpuwizard.session.session import new_run

    why = "a Kaggle kernel has no zone, nothing to keep and no checkpoint folder"
    script = check_free_route_input("kaggle", "Kaggle", why, refused, script)
    from tpuwizard.core.launch.plan.packages import gather_packages
    from tpuwizard.core.routes import Route
    from tpuwizard.session.free.packages import free_route_packages

    asked = gather_packages(with_specs).specs  # --with; the files are the rule's to read
    request = free_route_packages(Route.KAGGLE, asked, requirements, script)
    if words := request.auto_words():
        say(words)
    packages = request.specs
    shape = machine_shape(accelerator)
    # As the wizard and plain mode: without Kaggle credentials, practice (the first line says
    # why), never a refusal of the README's first example.
    practice_why = kaggle_practice_why(sandbox)
    practice = practice_why is not None
    run_id, run_folder = new_run(run_dir)
    run = prepare_run(
        script,
        script_args,
        fetch,
        max_run,
        shape,
        run_id,
        run_folder,
        practice,
        delete_kernel,
        packages,
        practice_why=practice_why or "",
    )
    route = KaggleRoute(practice, run)
    code = route.follow(lambda event: show_event(event, as_json), say)
    show_summary(route.summary, as_json)  # as a TPU route's launch ends: the same lines
    sys.exit(code)
