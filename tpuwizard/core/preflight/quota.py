"""Quota: the exact bucket the backend and route draw on, in the zone's region (and, on the TPU
API, the zone's own bucket too: both bind), its limit read from the Cloud Quotas API against the
chips asked for. Cloud Quotas reports limits, not usage. On Compute Engine ``regions.get`` answers
``quotas[]`` with each metric's ``limit`` and ``usage`` (compute.v1.json's Quota), but its metric
enum names only v5e's and v4's TPU quotas (quota_ids.ENUM_TPU_METRICS): usage is read by those
names alone, and where no metric counts the generation (v6e, v5p, TPU7x) the line says usage is
not known, never 0.

The TPU API's quota ids are named by Google's errors and users' reports, not by a Google page
that lists them: google-behaviour.md:42 ('TPUV6EPreemptiblePerProjectPerRegionForTPUAPI';
single-host v5e on-demand draws on the *serving* bucket); users' `gcloud quotas info` reads
(2025-26) for the rest. A generation no source names is UNKNOWN, never guessed. Compute Engine's
are candidates (:mod:`tpuwizard.core.cloud.quota_ids`, every one a report): all are read by name,
and the line says which one governs the plan and why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.cloud.diagnose.tpu7x_access import access_note
from tpuwizard.core.cloud.quota_ids import QuotaCandidate, compute_candidates
from tpuwizard.core.preflight import quota_cache
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, in_parallel, passed, unknown
from tpuwizard.core.preflight.rest import COMPUTE, QUOTAS, TPU, Answer, cannot_read
from tpuwizard.core.routes import Route

NAME = "Quota"
_STANDARD, _PREEMPTIBLE, _SERVING = "standard", "preemptible", "serving"
# (generation, bucket) -> the TPU API's quota ids, region-wide first.
TPU_API_QUOTAS: dict[tuple[str, str], tuple[str, ...]] = {
    ("v6e", _STANDARD): ("TPUV6EPerProjectPerRegionForTPUAPI", "TPUV6EPerProjectPerZoneForTPUAPI"),
    ("v6e", _PREEMPTIBLE): (
        "TPUV6EPreemptiblePerProjectPerRegionForTPUAPI",
        "TPUV6EPreemptiblePerProjectPerZoneForTPUAPI",
    ),
    ("v5e", _STANDARD): (
        "TPUV5sLitepodPerProjectPerRegionForTPUAPI",
        "TPUV5sLitepodPerProjectPerZoneForTPUAPI",
    ),
    ("v5e", _PREEMPTIBLE): (
        "TPUV5sPreemptibleLitepodPerProjectPerRegionForTPUAPI",
        "TPUV5sPreemptibleLitepodPerProjectPerZoneForTPUAPI",
    ),
    ("v5e", _SERVING): (
        "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI",
        "TPUV5sLitepodServingPerProjectPerZoneForTPUAPI",
    ),
    # v5p's and v4's region-wide ids are by analogy with v5e's and v6e's (no report names them);
    # an id the project does not have answers 404 and is skipped, so none is ever guessed at.
    ("v5p", _STANDARD): ("TPUV5PPerProjectPerRegionForTPUAPI", "TPUV5PPerProjectPerZoneForTPUAPI"),
    ("v5p", _PREEMPTIBLE): (
        "TPUV5PPreemptiblePerProjectPerRegionForTPUAPI",
        "TPUV5PPreemptiblePerProjectPerZoneForTPUAPI",
    ),
    ("v4", _PREEMPTIBLE): ("TPUV4sPreemptiblePodPerProjectPerZoneForTPUAPI",),
}
UNLIMITED = -1
BY_ANALOGY = ("v5p", "v4")  # their TPU API ids above: guessed by analogy, labelled as such


@dataclass(frozen=True)
class QuotaRead:
    """One quota id's limit where the launch lands (None: Cloud Quotas has no such id)."""

    quota_id: str
    scope: str  # the region or zone its value is for
    limit: int | None  # UNLIMITED (-1) for no limit
    unit: str = ""
    metric: str = ""  # Cloud Quotas' metric, e.g. compute.googleapis.com/preemptible_tpu_v6e
    used: int | None = None  # what is in use there, where the backend reports it
    extra: tuple[tuple[str, str], ...] = ()  # its dimensions besides the region (tpu_family)

    @property
    def left(self) -> int | None:
        """What the limit leaves (the limit itself where usage is not known)."""
        if self.limit is None or self.limit == UNLIMITED:
            return self.limit
        return self.limit - (self.used or 0)


@dataclass(frozen=True)
class QuotaReading:
    """The check's line and, when every bucket was read, the chips they leave room for (the
    smallest limit; ``--backend auto`` reads it for Compute Engine)."""

    check: Check
    room: int | None


def tpu_api_bucket(ask: PreflightAsk) -> str:
    s = ask.slice
    if ask.route in (Route.SPOT, Route.FLEX):
        return _PREEMPTIBLE  # Flex-start draws on preemptible quota (google-behaviour.md:26)
    if s.generation.key == "v5e" and s.chips in (1, 4, 8):
        return _SERVING  # google-behaviour.md:42
    return _STANDARD


def check_quota(ask: PreflightAsk, reach: Reach) -> Check:
    return read_quota(ask, reach).check


def read_quota(ask: PreflightAsk, reach: Reach) -> QuotaReading:
    """The quota line for ``ask``, and the room it leaves."""
    assert ask.accelerator is not None and ask.zone is not None
    s = ask.slice
    if ask.backend == COMPUTE_BACKEND:
        return _read_compute(ask, reach)
    bucket = tpu_api_bucket(ask)
    found = TPU_API_QUOTAS.get((s.generation.key, bucket))
    if found is None:
        return QuotaReading(
            unknown(
                NAME,
                f"no source names the TPU API's {bucket} quota for {s.generation.key}; "
                f"see https://console.cloud.google.com/iam-admin/quotas?project={ask.project}",
            ),
            None,
        )
    if reach.rest is None:
        return QuotaReading(unknown(NAME, "no credentials to read it with"), None)
    base = _base(ask, reach, TPU)
    answers = in_parallel(*[functools.partial(reach.rest.get, f"{base}/{i}") for i in found])
    reads: list[QuotaRead] = []
    for quota_id, answer in zip(found, answers, strict=True):
        if answer.status == 404:
            continue  # this id does not exist for the project: the others may
        if not answer.ok:
            return _cannot_read(ask, reach, answer, quota_id, found)
        reads.append(_limit_at(quota_id, answer.body, ask, {}))
    _remember(ask, reach, reads)
    reading = _judge(ask, TPU, reads, found)
    if s.generation.key in BY_ANALOGY:  # said, so an id no report names is not taken as Google's
        note = (
            f"{s.generation.key}'s ids are by analogy with v5e's and v6e's (no report names them)"
        )
        reading = QuotaReading(
            dataclasses.replace(reading.check, detail=f"{reading.check.detail}; {note}"),
            reading.room,
        )
    return reading


def _base(ask: PreflightAsk, reach: Reach, service: str) -> str:
    return (
        f"{reach.endpoints.quotas}/v1/projects/{ask.project}/locations/global/services/{service}"
        "/quotaInfos"
    )


def _read_compute(ask: PreflightAsk, reach: Reach) -> QuotaReading:
    """Compute Engine: every candidate id read by name; the first that exists governs."""
    gen = ask.slice.generation.key
    candidates = compute_candidates(gen, ask.route)
    if not candidates:
        note = access_note(ask.slice)  # TPU7x: the account team grants it
        words = f"no source names the Compute Engine quota for {gen}"
        return QuotaReading(unknown(NAME, f"{words}; {note}" if note else words), None)
    if reach.rest is None:
        return QuotaReading(unknown(NAME, "no credentials to read it with"), None)
    rest, base = reach.rest, _base(ask, reach, COMPUTE)
    calls = [functools.partial(rest.get, f"{base}/{c.quota_id}") for c in candidates]
    if any(c.usage_metric for c in candidates):  # only where compute.v1.json's enum names one
        region_url = f"{reach.endpoints.compute}/compute/v1/projects/{ask.project}/regions/"
        calls.append(functools.partial(rest.get, region_url + ask.region))
    answers = in_parallel(*calls)
    region = answers[-1].body if len(answers) > len(candidates) and answers[-1].ok else None
    found: list[tuple[QuotaCandidate, QuotaRead]] = []
    ids = tuple(c.quota_id for c in candidates)
    for candidate, answer in zip(candidates, answers, strict=False):
        if answer.status == 404:
            continue  # not an id of this project's: the next candidate may be
        if not answer.ok:
            return _cannot_read(ask, reach, answer, candidate.quota_id, ids)
        read = _limit_at(candidate.quota_id, answer.body, ask, candidate.dimension_map)
        if candidate.usage_metric and isinstance(region, dict):
            read = with_usage(read, region, candidate.usage_metric)
        found.append((candidate, read))
    _remember(ask, reach, [read for _, read in found])
    if not found:
        return _judge(ask, COMPUTE, [], ids)
    (governing, read), others = found[0], found[1:]
    reading = _judge(ask, COMPUTE, [read], ids)
    why = f"{governing.quota_id} governs: {governing.why} ({governing.source})"
    missing = [c.quota_id for c in candidates if c not in [f[0] for f in found]]
    also = [f"{c.quota_id} {_amount(r)} ({c.why})" for c, r in others]
    if also:
        why += "; reports disagree, also read: " + "; ".join(also)
    if missing:
        why += f"; not found for the project: {', '.join(missing)}"
    check = dataclasses.replace(reading.check, detail=f"{reading.check.detail}. {why}")
    return QuotaReading(check, reading.room)


def _remember(ask: PreflightAsk, reach: Reach, reads: list[QuotaRead]) -> None:
    """Keep each limit read, for beside a later read that fails (never to decide by)."""
    if reach.quota_cache is None or not reads:
        return
    book = quota_cache.load(reach.quota_cache)
    for r in reads:
        if r.limit is not None:
            book.put(ask.project, r.quota_id, r.scope, r.limit, r.unit)
    with contextlib.suppress(OSError):  # unwritten: a later failure says less, nothing else
        quota_cache.save(reach.quota_cache, book)


def _cannot_read(
    ask: PreflightAsk, reach: Reach, answer: Answer, quota_id: str, ids: tuple[str, ...]
) -> QuotaReading:
    """The UNKNOWN for a live read that failed, with what the last read here found, and when."""
    check = cannot_read(NAME, answer, QUOTAS, ask.project, f"the quota {quota_id}")
    if reach.quota_cache is not None:
        book = quota_cache.load(reach.quota_cache)
        scopes = [ask.region, str(ask.zone)]
        if words := quota_cache.last_read_words(book, ask.project, ids, scopes):
            check = dataclasses.replace(check, detail=check.detail + words)
    return QuotaReading(check, None)


def with_usage(read: QuotaRead, region: dict[str, Any], metric: str) -> QuotaRead:
    """``read`` with the usage a Compute Engine Region reports under ``metric`` (a value of
    compute.v1.json's ``Quota.metric`` enum), if the region lists it."""
    for entry in region.get("quotas") or []:
        if isinstance(entry, dict) and str(entry.get("metric", "")) == metric:
            try:
                used = int(float(entry.get("usage", 0)))
            except (TypeError, ValueError):
                return read
            return dataclasses.replace(read, used=used)
    return read


def _limit_at(
    quota_id: str, info: dict[str, Any], ask: PreflightAsk, extra: dict[str, str]
) -> QuotaRead:
    """The value of ``info`` (a QuotaInfo) where the launch lands: the most specific
    dimensionsInfo whose dimensions all hold there (one without a dimension applies to every
    value of it that has no entry of its own: Cloud Quotas' DimensionsInfo)."""
    assert ask.zone is not None
    keys = [str(k) for k in info.get("dimensions") or []]
    scope = ask.zone if "zone" in keys and "region" not in keys else ask.region
    here = {"region": ask.region, "zone": ask.zone, **extra}
    best: tuple[int, int] | None = None
    for entry in info.get("dimensionsInfos") or []:
        dims = {str(k): str(v) for k, v in (entry.get("dimensions") or {}).items()}
        if any(here.get(k) != v for k, v in dims.items()):
            continue  # another place, another family, or a dimension that is not ours
        try:
            value = int(str((entry.get("details") or {}).get("value")))
        except (TypeError, ValueError):
            continue
        if best is None or len(dims) > best[0]:
            best = (len(dims), value)
    unit, metric = str(info.get("metricUnit") or ""), str(info.get("metric") or "")
    limit = None if best is None else best[1]
    return QuotaRead(quota_id, scope, limit, unit, metric, extra=tuple(extra.items()))


def needed(ask: PreflightAsk, read: QuotaRead) -> int:
    """What the slice takes of a quota: chips, or TensorCores where the quota counts those (v4
    and v5p have two per chip; Google's quota page: "specified in terms of chips or
    TensorCores")."""
    per_slice = ask.slice.chips * 2 if _counts_cores(ask, read) else ask.slice.chips
    return per_slice * ask.at_once


def _counts_cores(ask: PreflightAsk, read: QuotaRead) -> bool:
    return "core" in read.unit.lower() and ask.slice.generation.key in ("v4", "v5p")


def _asked(ask: PreflightAsk) -> str:
    """What is asked of the quota, in words: the slice, or --fan-out's requests at once."""
    if ask.at_once == 1:
        return str(ask.accelerator)
    return f"{ask.at_once} requests of {ask.accelerator} at once (--fan-out)"


def _judge(
    ask: PreflightAsk,
    service: str,
    reads: list[QuotaRead],
    ids: tuple[str, ...],
) -> QuotaReading:
    if not reads:
        return QuotaReading(
            unknown(NAME, f"Cloud Quotas knows none of {', '.join(ids)} for {service}"), None
        )
    for r in reads:
        if r.limit is None:
            return QuotaReading(unknown(NAME, f"{r.quota_id} has no value for {r.scope}"), None)
    for r in reads:
        want, left = needed(ask, r), r.left
        if left is not None and left != UNLIMITED and left < want:
            return QuotaReading(_short(ask, service, r, want), max(left, 0))
    finite = [r.left for r in reads if r.left is not None and r.left != UNLIMITED]
    words = "; ".join(f"{r.quota_id} {_amount(r)}" for r in reads)
    unknown_use = any(r.used is None and r.limit != UNLIMITED for r in reads)
    caveat = " (usage not known: what already runs there counts too)" if unknown_use else ""
    detail = f"{words}: covers {_asked(ask)}{caveat}"
    # The room in chips for --backend auto: the least left (no limit: the slice fits).
    room = min(finite) if finite else ask.slice.chips * ask.at_once
    return QuotaReading(passed(NAME, detail), room)


def _amount(r: QuotaRead) -> str:
    """ "limit 8, 4 used in us-east5", or "limit 8 in us-east5" where usage is not known."""
    if r.limit == UNLIMITED:
        return f"unlimited in {r.scope}"
    used = "" if r.used is None else f", {r.used} used"
    return f"limit {r.limit}{used} in {r.scope}"


def _short(ask: PreflightAsk, service: str, r: QuotaRead, want: int) -> Check:
    where = {"zone" if r.scope == ask.zone else "region": r.scope, **dict(r.extra)}
    dims = ",".join(f"{k}={v}" for k, v in where.items())
    fix = (
        f"gcloud quotas preferences create --service={service} --project={ask.project} "
        f"--quota-id={r.quota_id} --preferred-value={want + (r.used or 0)} --dimensions={dims} "
        '--email="$(gcloud config get-value account)"'
    )
    unit = "TensorCores" if _counts_cores(ask, r) else "chips"
    if r.used is None:
        allows = f"allows {r.limit} in {r.scope} (usage not known)"
    else:
        allows = f"allows {r.limit} in {r.scope}, {r.used} used, so {r.left} left"
    return failed(
        NAME,
        f"{r.quota_id} {allows}, and {_asked(ask)} needs {want} {unit} "
        f"(or ask in the console: https://console.cloud.google.com/iam-admin/quotas?project="
        f"{ask.project})",
        fix,
    )
