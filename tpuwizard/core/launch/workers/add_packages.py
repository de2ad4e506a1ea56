"""Packages added to a node that is already up: ``run --with`` on a kept node, and a launch's
rerun after the user added a package (the wizard's Run again). The pinned JAX is held."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.workers.jobs import run_on_workers, stop_on_workers
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.transports import Transport, shell


def install_packages(
    transport: Transport,
    packages: Sequence[PackageSpec],
    job_name: str,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken,
) -> Diagnosis | None:
    """Install ``packages`` on every worker where they are new (uv leaves satisfied ones alone),
    the pinned JAX held. uv's lines stream as :class:`BootstrapLine` events, and once they are
    in, each worker's :class:`Versions` names what was added. Returns why it did not work (the
    caller says it: a run on a kept node fails, a rerun says so and waits), or None."""
    from tpuwizard.core.cloud.diagnose.remote import packages_failed_diagnosis
    from tpuwizard.core.errors import PackagesFailed
    from tpuwizard.core.evidence.receipt import parse_marker_line
    from tpuwizard.core.launch.plan.packages import requirement_name
    from tpuwizard.core.remote.packages import FAILED_KIND, install_failure, install_script

    specs = [s.text for s in packages]
    names = list(dict.fromkeys(n for n in map(requirement_name, specs) if n))
    lines: dict[int, list[str]] = {}
    failed: list[int] = []
    workers = transport.workers

    def line(worker: int, text: str) -> None:
        payload = parse_marker_line(text)
        if payload and payload.get("kind") == FAILED_KIND:
            failed.append(worker)
            return
        if payload and payload.get("kind") == "versions":
            emit(ev.Versions(worker, payload, workers))
            return
        lines.setdefault(worker, []).append(text)
        emit(ev.BootstrapLine(worker, text, workers))

    job = Job(job_name)
    try:
        code = run_on_workers(
            transport, job, shell("bash", "-c", install_script(specs, names)), {}, line, cancel
        )
    except Cancelled:
        stop_on_workers(transport, job)
        raise
    if not failed and code == 0:
        return None
    worker = min(failed) if failed else 0
    why = install_failure(lines.get(worker, []), specs, code)
    return packages_failed_diagnosis(PackagesFailed(worker, why.kind, why.why, why.fix))
