"""The whole preflight for one launch: which checks apply, run at once."""

from __future__ import annotations

import functools
from collections.abc import Callable

from tpuwizard.core.preflight import access, network, offer, oslogin, quota
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import CHECK_TIMEOUT, Check, CheckJob, run_checks

CheckFn = Callable[[PreflightAsk, Reach], Check]


def jobs_for(ask: PreflightAsk, reach: Reach, quota_check: Check | None = None) -> list[CheckJob]:
    """Every check that applies to ``ask`` (``quota_check``: one already made, for ``auto``)."""
    network_check: tuple[str, CheckFn] = (
        (network.INTERNAL, network.check_internal_ips)
        if ask.internal_ips
        else (network.EXTERNAL, network.check_external_ips)
    )
    checks: list[tuple[str, CheckFn]] = [
        (access.APIS, access.check_apis),
        (access.BILLING_NAME, access.check_billing),
        (quota.NAME, quota.check_quota),
        (oslogin.NAME, oslogin.check_os_login),
        network_check,
        (offer.NAME, offer.check_offered),
    ]
    if not ask.for_launch:  # the project alone: no slice to count, no zone to look in
        checks = [c for c in checks if c[0] not in (quota.NAME, offer.NAME)]
    elif ask.known_slice is not None and ask.known_slice.vms > 1:  # workers that must join
        checks.append((network.JOIN, network.check_slice_join))
    jobs = []
    for name, check in checks:
        if name == quota.NAME and quota_check is not None:
            jobs.append(CheckJob(name, functools.partial(_made, quota_check)))
        else:
            jobs.append(CheckJob(name, functools.partial(check, ask, reach)))
    return jobs


def _made(check: Check) -> Check:
    return check


def run_preflight(
    ask: PreflightAsk,
    reach: Reach,
    credentials: Check,
    quota_check: Check | None = None,
    timeout: float = CHECK_TIMEOUT,
) -> list[Check]:
    """The credentials' line (made first: the others read with them), then every other check,
    run concurrently, in a fixed order."""
    return [credentials, *run_checks(jobs_for(ask, reach, quota_check), timeout)]


def any_failed(checks: list[Check]) -> bool:
    return any(c.failed for c in checks)
