"""Packages added to a node that is already up: ``run --with`` on a kept node, and a launch's
rerun after the user added a package (the wizard's Run again). The pinned JAX is held."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tpuwizard.core.cancel import Cancelled, CancelToken
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
) -> bool:
    """Install ``packages`` on every worker where they are new (uv leaves satisfied ones alone),
    the pinned JAX held; False, after a :class:`Failed`, when that did not work."""
    from tpuwizard.core.cloud.diagnose.remote import packages_failed_diagnosis
    from tpuwizard.core.errors import PackagesFailed
    from tpuwizard.core.evidence.receipt import parse_marker_line
    from tpuwizard.core.remote.packages import FAILED_KIND, install_failure, install_script

    specs = [s.text for s in packages]
    lines: dict[int, list[str]] = {}
    failed: list[int] = []
    workers = transport.workers

    def line(worker: int, text: str) -> None:
        payload = parse_marker_line(text)
        if payload and payload.get("kind") == FAILED_KIND:
            failed.append(worker)
            return
        lines.setdefault(worker, []).append(text)
        emit(ev.BootstrapLine(worker, text, workers))

    job = Job(job_name)
    try:
        code = run_on_workers(
            transport, job, shell("bash", "-c", install_script(specs)), {}, line, cancel
        )
    except Cancelled:
        stop_on_workers(transport, job)
        raise
    if not failed and code == 0:
        return True
    worker = min(failed) if failed else 0
    why = install_failure(lines.get(worker, []), specs, code)
    err = PackagesFailed(worker, why.kind, why.why, why.fix)
    emit(ev.Failed("packages", packages_failed_diagnosis(err)))
    return False
