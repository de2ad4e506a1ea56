"""The preflight for every front end: the session's credentials and endpoints, the ``auto``
backend decided with Compute Engine's quota reading, then every check at once.

Read-only, and it never raises for the cloud's sake: a preflight that cannot be made at all is
one UNKNOWN line, and UNKNOWN never stops a launch. A FAIL does, before any create.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from tpuwizard.core.cloud.backends import AUTO, COMPUTE, TPU_API, Backend
from tpuwizard.core.errors import BadInput
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, Verdict, passed, unknown

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.compute.client import ComputeCloud
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.preflight.quota import QuotaReading
    from tpuwizard.session.session import Session

PRACTICE_CREDENTIALS = "practice: the sandbox's own token (no Google credentials are sent)"


@dataclass(frozen=True)
class PreflightResult:
    choice: BackendChoice | None  # the backend decided (None: the project's checks alone)
    checks: list[Check]

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def imports_login_key(self) -> bool:
        """OS Login is on and tpuwizard's own SSH is used: the launch imports its key."""
        from tpuwizard.core.preflight.oslogin import IMPORT_KEY

        return any(c.launch_does == IMPORT_KEY for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.choice.backend if self.choice else None,
            "backend_reason": self.choice.reason if self.choice else None,
            "ok": not self.failures,
            "checks": [c.as_json() for c in self.checks],
        }


def _google_default() -> Any:
    import google.auth

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return credentials


def _reach(session: Session, backend: str, zone: str | None) -> tuple[Check, Reach]:
    """The credentials' line and how the checks read (practice: the sandbox, with its token)."""
    from tpuwizard.core import paths
    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.cloud.endpoint import GOOGLE_ENDPOINT
    from tpuwizard.core.preflight import quota_cache
    from tpuwizard.core.preflight.access import check_credentials
    from tpuwizard.core.preflight.rest import Endpoints, Rest, endpoints_for

    def offered() -> list[str]:
        assert zone is not None
        # Both backends' clouds list a zone's types (outside the Cloud protocol, which creates).
        cloud = cast("TpuCloud | ComputeCloud", session.cloud_for(backend))
        return cloud.accelerator_types(zone)

    if session.practice:
        cloud = session.cloud  # starts the sandbox, which serves every API the checks read
        credentials: Any = cloud.credentials
        check = passed("Credentials", PRACTICE_CREDENTIALS)
        endpoints = endpoints_for(cloud.endpoint, GOOGLE_ENDPOINT)
    else:
        ctx = gcloud_config.discover()
        check, credentials = check_credentials(_google_default, ctx.account, ctx.credentials)
        endpoints = Endpoints()
    rest = Rest(credentials) if credentials is not None else None
    kept = quota_cache.cache_file(paths.cache_dir(), session.practice)  # what each read found
    return check, Reach(rest, endpoints, offered, session.practice, kept)


def decide_with_quota(
    session: Session,
    accelerator: str,
    zone: str,
    route: str,
    asked: str,
    compute_ok: bool = True,
    at_once: int = 1,
) -> tuple[BackendChoice, QuotaReading | None]:
    """``--backend auto`` for a type both backends serve: Compute Engine when its quota in the
    zone's region is read and covers the chips (``compute_ok`` False: the other flags need the
    TPU API, so no reading is made). Returns the choice and the reading, if one was made."""
    from tpuwizard.core.cloud.backend_choice import support_for
    from tpuwizard.core.plan import catalog
    from tpuwizard.core.preflight.ask import region_of
    from tpuwizard.core.preflight.quota import read_quota
    from tpuwizard.session.backend import decide_backend

    first = decide_backend(accelerator, route, asked)
    both = (TPU_API, COMPUTE)
    if asked != AUTO or not compute_ok or first.backend != TPU_API or not first.reason:
        return first, None
    slice_ = catalog.parse_accelerator(accelerator)  # known: an unknown one gave no reason
    if support_for(slice_).backends != both or not slice_.single_host:
        return first, None
    _, reach = _reach(session, COMPUTE, zone)
    ask = PreflightAsk(session.project or "", accelerator, zone, route, COMPUTE, at_once=at_once)
    reading = read_quota(ask, reach)
    room = None if reading.room is None else reading.room // at_once  # per request
    choice = decide_backend(accelerator, route, asked, room, region_of(zone))
    return choice, reading


def run_preflight(
    session: Session,
    accelerator: str | None,
    zone: str | None,
    route: str = "vm",
    asked: str = AUTO,
    internal_ips: bool = False,
    transport: str = "ssh",
    compute_ok: bool = True,
    at_once: int = 1,
) -> PreflightResult:
    """Every check for a launch of ``accelerator`` in ``zone`` (None, None: the project's
    checks alone, on the TPU API). Never raises for the cloud's sake."""
    from tpuwizard.core.preflight.run import run_preflight as run_checks
    from tpuwizard.session.backend import decide_backend

    choice: BackendChoice | None = None
    try:
        reading = None
        if accelerator is not None and zone is not None:
            choice, reading = decide_with_quota(
                session, accelerator, zone, route, asked, compute_ok, at_once
            )
        elif asked != AUTO:
            choice = None if accelerator is None else decide_backend(accelerator, route, asked)
        backend = choice.backend if choice else (asked if asked != AUTO else TPU_API)
        credentials, reach = _reach(session, backend, zone)
        ask = PreflightAsk(
            session.project or "",
            accelerator,
            zone,
            route,
            backend,
            internal_ips,
            transport,
            at_once,
        )
        made = reading.check if reading is not None and backend == COMPUTE else None
        return PreflightResult(choice, run_checks(ask, reach, credentials, made))
    except BadInput:
        raise
    except Exception as err:  # no preflight could be made: say why, stop nothing
        from tpuwizard.core.cloud.diagnose.failure import diagnose

        why = diagnose(err).title or str(err)
        return PreflightResult(choice, [unknown("Preflight", f"it could not be made ({why})")])


@dataclass(frozen=True)
class BeforeCreate:
    """The preflight before a launch's first create, as ``launch``, ``up`` and the wizard's
    Create run it: its lines, and ``plan`` on the backend decided, importing its key into the OS
    Login profile where the preflight found OS Login on. Any FAIL refuses the create; an
    UNKNOWN never does."""

    result: PreflightResult
    plan: LaunchPlan

    @property
    def refused(self) -> bool:
        return bool(self.result.failures)


def before_create(
    session: Session, plan: LaunchPlan, asked: str, transport: str = "ssh", compute_ok: bool = True
) -> BeforeCreate:
    """Run the preflight for ``plan`` (``asked``: the backend asked for; ``auto`` may move to
    Compute Engine where its quota covers the slice, unless ``compute_ok`` is False)."""
    import dataclasses

    result = run_preflight(
        session,
        plan.accelerator,
        plan.zone,
        plan.route,
        asked,
        plan.internal_ips,
        transport,
        compute_ok,
        fan_out_in_region(plan),
    )
    if result.failures:
        return BeforeCreate(result, plan)
    moved = moved_to(plan, result.choice.backend if result.choice else plan.backend)
    from tpuwizard.core.preflight.quota import NAME as QUOTA

    quota_read = any(c.name == QUOTA and c.verdict is Verdict.PASS for c in result.checks)
    return BeforeCreate(
        result,
        dataclasses.replace(
            moved,
            os_login_key=result.imports_login_key,
            # All of them only where every zone is in the one region the reading was for.
            fan_out_quota_checked=plan.fan_out
            and quota_read
            and fan_out_in_region(plan) == len(plan.zones),
        ),
    )


def fan_out_in_region(plan: LaunchPlan) -> int:
    """The requests --fan-out sends at once in the first zone's region (1 without it): each needs
    quota of its own while they all exist. Zones in other regions draw on their own quotas."""
    from tpuwizard.core.preflight.ask import region_of

    if not plan.fan_out or plan.zone is None:
        return 1
    region = region_of(plan.zone)
    return max(1, sum(region_of(z) == region for z in plan.zones))


def moved_to(plan: LaunchPlan, backend: Backend) -> LaunchPlan:
    """``plan`` on the backend the preflight decided. On Compute Engine Google's max run duration
    is the deadline: no watchdog to arm, no idle time (launch and up refuse those flags there)."""
    import dataclasses

    if backend == plan.backend:
        return plan
    moved = dataclasses.replace(plan, backend=backend)
    if backend == COMPUTE:
        moved = dataclasses.replace(moved, watchdog=False, idle_minutes=None)
    moved.validate()
    return moved


def project_checks(session: Session) -> list[Check]:
    """The project's own checks (credentials, APIs, billing, OS Login, external IPs), as the
    wizard's Account step shows them: no slice or zone asked about yet."""
    return run_preflight(session, None, None).checks
