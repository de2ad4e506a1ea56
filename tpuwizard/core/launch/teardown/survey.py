"""Everything of this user's on every backend: :func:`reconcile` once per cloud, in one answer.

A backend that cannot be surveyed at all (Compute Engine's API not enabled, no permission, not
reachable) is one line in ``skipped``, as a zone that refuses is: what the other backend found
still counts, and the command that asked says what it could not see. Its ledger records are
``unchecked``, as a refused zone's are: they may still exist and bill, never "gone".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.protocol import Cloud
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.by_hand import check_failed
from tpuwizard.core.launch.teardown.verified import Found, Unchecked, reconcile

BACKEND_WORDS = {"tpu-api": "TPU API", "compute": "Compute Engine"}


def reconcile_backends(
    clouds: Sequence[tuple[str, Callable[[], Cloud]]],
    ledger: Ledger,
    zones: list[str] | None = None,
    owner: str | None = None,
    project: str | None = None,
) -> Found:
    """:func:`reconcile` for each ``(backend, open its cloud)``; the answers merged.

    With more than one backend, why a zone was skipped names the backend ("TPU API: ..."): the
    same zone may answer one API and refuse the other. A backend that fails as a whole is
    skipped under its own name ("Compute Engine"), and each open ledger record it made (in
    ``project``, when given) is unchecked with why. Only when nothing could be surveyed and no
    record stands unchecked is the failure raised: then it is the whole answer."""
    merged = Found([])
    failed: list[BaseException] = []

    def survey(open_cloud: Callable[[], Cloud]) -> Found | Exception:
        try:
            return reconcile(open_cloud(), ledger, zones, owner=owner)
        except Exception as err:  # this backend's survey failed as a whole: one line
            return err

    # The backends at once: each answers at its own pace (Compute Engine's client library
    # alone takes seconds to import); merged below in the order given.
    with ThreadPoolExecutor(max_workers=max(1, len(clouds))) as pool:
        answers = list(pool.map(survey, [open_cloud for _, open_cloud in clouds]))
    for (backend, _), found in zip(clouds, answers, strict=True):
        words = BACKEND_WORDS.get(backend, backend)
        if isinstance(found, Exception):
            err = found
            failed.append(err)
            merged.skipped[words] = diagnose(err, Context(backend=backend)).title
            merged.unchecked.extend(_unchecked(ledger, backend, project, err))
            continue
        merged.extend(found)
        for zone, why in found.skipped.items():
            said = f"{words}: {why}" if len(clouds) > 1 else why
            earlier = merged.skipped.get(zone)
            merged.skipped[zone] = f"{earlier}; {said}" if earlier else said
            # Refused only while every backend that skipped it refused it the same way.
            if zone in found.refused and (earlier is None or zone in merged.refused):
                merged.refused.add(zone)
            else:
                merged.refused.discard(zone)
        merged.others.extend(found.others)
        merged.unchecked.extend(found.unchecked)
        merged.unreadable = found.unreadable or merged.unreadable
        merged.unreadable_kept_in = found.unreadable_kept_in or merged.unreadable_kept_in
    if ledger.unreadable and not merged.unreadable:  # read by _unchecked alone
        merged.unreadable = list(ledger.unreadable)
        merged.unreadable_kept_in = str(ledger.side_file)
    if failed and len(failed) == len(clouds) and not merged.unchecked:
        raise failed[0]  # nothing could be surveyed: that is the answer, as with one zone
    merged.sort(key=lambda b: (b.resource.zone, b.resource.name))
    return merged


def _unchecked(
    ledger: Ledger, backend: str, project: str | None, err: BaseException
) -> list[Unchecked]:
    """The open records ``backend`` made, none of which could be checked because of ``err``."""
    return [
        Unchecked(e.resource, check_failed(err, e.resource))
        for e in ledger.open_entries()
        if e.resource.backend == backend and project in (None, e.resource.project)
    ]
