"""The preflight for every front end: the session's credentials and endpoints, the ``auto``
backend decided with Compute Engine's quota reading, then every check at once. The pipeline
before create (session/prepare/) calls these parts in its stages (``tpuwizard preflight`` runs
those stages alone); the wizard's Account step calls the project's checks.

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
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.compute.client import ComputeCloud
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.core.preflight.quota import QuotaReading
    from tpuwizard.session.services import Reaches

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

    @property
    def quota_read(self) -> bool:
        """The quota was read and covers what is asked (its line PASSed)."""
        from tpuwizard.core.preflight.quota import NAME

        return any(c.name == NAME and c.verdict is Verdict.PASS for c in self.checks)

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


def _reach(session: Reaches, backend: str, zone: str | None) -> tuple[Check, Reach]:
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


def quota_decides(
    slice_: Slice, asked: Backend, choice: BackendChoice, compute_ok: bool = True
) -> bool:
    """Does ``auto`` wait on Compute Engine's quota for this type: both backends serve it, it
    is one VM (a slice stays on the TPU API, backend_choice's rule), and nothing else asked needs
    the TPU API (``compute_ok``). Without a reading, ``choice`` (the TPU API) stands."""
    from tpuwizard.core.cloud.backend_choice import support_for

    if asked != AUTO or not compute_ok or choice.backend != TPU_API:
        return False
    return support_for(slice_).backends == (TPU_API, COMPUTE) and slice_.single_host


def compute_quota(
    session: Reaches, slice_: Slice, zone: str, route: Route, at_once: int = 1
) -> QuotaReading:
    """Compute Engine's quota for ``slice_`` in ``zone``'s region: the reading ``auto``
    decides by (its check is the preflight's quota line when the launch goes there)."""
    from tpuwizard.core.preflight.quota import read_quota

    _, reach = _reach(session, COMPUTE, zone)
    project = session.project or ""
    ask = PreflightAsk(project, slice_.name, zone, route, COMPUTE, at_once=at_once)
    return read_quota(ask, reach)


def by_quota(
    slice_: Slice, zone: str, route: str, reading: QuotaReading, at_once: int = 1
) -> BackendChoice:
    """``auto`` decided by a Compute Engine quota ``reading``: Compute Engine where it covers
    the chips of each request, else the TPU API, saying why either way."""
    from tpuwizard.core.preflight.ask import region_of
    from tpuwizard.session.backend import decide_backend

    room = None if reading.room is None else reading.room // at_once  # per request
    return decide_backend(slice_, route, AUTO, room, region_of(zone))


def checks(session: Reaches, ask: PreflightAsk, made: Check | None = None) -> list[Check]:
    """Every check of ``ask`` (its backend decided), the quota's line ``made`` already where
    the reading that decided the backend is it. Never raises for the cloud's sake."""
    from tpuwizard.core.preflight.run import run_preflight as run_checks

    try:
        credentials, reach = _reach(session, ask.backend, ask.zone)
        return run_checks(ask, reach, credentials, made)
    except BadInput:
        raise
    except Exception as err:  # no preflight could be made: say why, stop nothing
        return [_not_made(err)]


def _not_made(err: Exception) -> Check:
    from tpuwizard.core.cloud.diagnose.failure import diagnose

    why = diagnose(err).title or str(err)
    return unknown("Preflight", f"it could not be made ({why})")


def fan_out_in_region(plan: LaunchPlan) -> int:
    """The requests --fan-out sends at once in the first zone's region (1 without it): each needs
    quota of its own while they all exist. Zones in other regions draw on their own quotas."""
    from tpuwizard.core.preflight.ask import region_of

    if not plan.where.fan_out or plan.zone is None:
        return 1
    region = region_of(plan.zone)
    return max(1, sum(region_of(z) == region for z in plan.where.zones))


def logs_in(session: Reaches) -> bool:
    """Whether a launch of this session logs in to its workers: always for real; in practice
    only with an OpenSSH server paired (else a local shell reaches them, and OS Login asks no
    key of tpuwizard)."""
    from tpuwizard.session.practice import sandbox as practice

    return not session.practice or practice.ssh_port() is not None


def project_checks(session: Reaches) -> list[Check]:
    """The project's own checks (credentials, APIs, billing, OS Login, external IPs), as the
    wizard's Account step shows them: no slice or zone asked about yet."""
    ask = PreflightAsk(
        session.project or "", None, None, Route.VM, TPU_API, ssh_login=logs_in(session)
    )
    return checks(session, ask)
