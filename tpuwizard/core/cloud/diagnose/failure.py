"""Turning any failure into a plain-language Diagnosis with next steps. No traceback reaches users.

The checks catch google.api_core's parent classes (``Forbidden``, ``TooManyRequests``...) so REST
and gRPC behave alike: gRPC raises subclasses such as ``PermissionDenied`` and
``ResourceExhausted``, and a create operation that ends with code 8 raises ``ResourceExhausted``
on either transport.
"""

from __future__ import annotations

import errno
import re
from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, phrase
from tpuwizard.core.cloud import google_errors as ge
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose import tpu7x_access
from tpuwizard.core.cloud.diagnose.capacity import (
    invalid_zone_diagnosis,
    other_zones,
    preempted_diagnosis,
    queue_expired_diagnosis,
    queue_suspended_diagnosis,
    quota_diagnosis,
    stockout_diagnosis,
)
from tpuwizard.core.cloud.diagnose.compute import compute_diagnosis
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.cloud.diagnose.remote import remote_diagnosis
from tpuwizard.core.routes import Route
from tpuwizard.core.untrusted import NotASmallFile

if TYPE_CHECKING:
    from tpuwizard.core.errors import LedgerUnwritable


def _configured_account() -> str | None:
    """The account gcloud is signed in as, so permission advice names it."""
    from tpuwizard.core.cloud import gcloud_config

    try:
        return gcloud_config.discover().account
    except Exception:
        return None


def _reason(err: BaseException) -> str:
    return str(getattr(err, "reason", None) or "")


# The REST transport puts the request before Google's words ("POST https://...: <message>"):
# the user needs the words, not our URL.
_REQUEST_PREFIX = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) \S+: ")


def _message(err: BaseException) -> str:
    return _REQUEST_PREFIX.sub("", str(getattr(err, "message", None) or err))


def diagnose(err: BaseException, ctx: Context | None = None) -> Diagnosis:
    """The plain-language meaning of ``err`` and what to do about it."""
    from google.api_core import exceptions as gx
    from google.auth import exceptions as auth_exc

    from tpuwizard.core.cloud.oslogin import OsLoginError
    from tpuwizard.core.errors import CreateFailed, QueueExpired, QueueSuspended, WaitTimedOut

    ctx = ctx or Context()
    spot = ctx.route == Route.SPOT
    if isinstance(err, OsLoginError):  # before the create: nothing was made
        return Diagnosis(
            "os_login",
            "OS Login: tpuwizard's key could not be put in your profile",
            str(err),
            ["Nothing was created. `--transport gcloud` logs in through OS Login instead."],
        )
    # A queued request that ended without its node: capacity, preemption or a user, each by
    # what Google's state says (google-behaviour.md, queued resource failed), never "too long".
    if isinstance(err, QueueExpired):
        return queue_expired_diagnosis(err, ctx)
    if isinstance(err, QueueSuspended):
        return queue_suspended_diagnosis(err, ctx)
    if isinstance(err, CreateFailed):
        spot = spot or err.route == Route.SPOT
        err = err.error
    if isinstance(err, gx.RetryError) and err.cause is not None:
        err = err.cause  # retries ran out: what matters is what kept failing
    project = ctx.project or "PROJECT_ID"
    where = f" in {ctx.zone}" if ctx.zone else ""
    message = _message(err)
    account = ctx.account or _configured_account()
    named = api_name(ctx.backend)
    api = named[:1].upper() + named[1:]  # at a sentence's start: "The Cloud TPU API"

    compute = compute_diagnosis(err, ctx, spot)  # Compute Engine's codes and words first
    if compute is not None:
        return compute
    if "PREEMPTED" in message:
        return preempted_diagnosis()
    capacity = ge.capacity_refusal(err, spot)
    if capacity is not None:
        return stockout_diagnosis(ctx, capacity, spot)
    if isinstance(err, gx.TooManyRequests) and ge.rate_limited(err):
        return Diagnosis(
            "rate_limited",
            "Too many create requests",
            f"Google limits how many TPUs a project may ask for per minute ({message}).",
            ["Wait a minute and launch again; nothing was created."],
        )
    quota = ge.quota_refusal(err) if isinstance(err, gx.TooManyRequests) else None
    if quota is not None:
        return quota_diagnosis(quota, ctx, project, where)
    if isinstance(err, gx.Forbidden) and ge.location_unavailable(err):
        zone = ctx.zone or "this zone"
        return Diagnosis(
            "zone_unavailable",
            f"{zone} is not available to your project",
            f"Google says {message!r}: the project {project} may not use this zone (it is not "
            "enabled for it, or the zone is restricted). This is not a missing role.",
            [
                phrase("Choose another zone: {0}.", Choice("zone", ctx.accelerator or "")),
                "To use this zone anyway, ask Google Cloud support or your account team.",
            ],
            other_zones(ctx),
        )
    if isinstance(err, gx.Forbidden) and ge.needs_act_as(err):
        member = f"user:{account}" if account else "user:YOUR_ACCOUNT"
        return Diagnosis(
            "permission",
            "You may not attach that service account",
            f"Creating a TPU that runs as a service account needs iam.serviceAccounts.actAs on "
            f"it ({message}).",
            [
                "Ask a project owner to grant you the Service Account User role:",
                f"gcloud projects add-iam-policy-binding {project} --member={member} "
                "--role=roles/iam.serviceAccountUser",
            ],
        )
    if isinstance(err, gx.Forbidden) and (
        _reason(err) == "SERVICE_DISABLED"
        or "has not been used" in message
        or "is disabled" in message
    ):
        return Diagnosis(
            "api_disabled",
            "The Cloud TPU API is not enabled",
            f"The project {project} has not enabled tpu.googleapis.com.",
            [
                f"gcloud services enable tpu.googleapis.com --project {project}",
                "Then wait a minute and try again.",
            ],
        )
    access = tpu7x_access.access_diagnosis(err, ctx)  # a 403 on TPU7x: access, most likely
    if access is not None:
        return access
    if isinstance(err, gx.Forbidden):
        return Diagnosis(
            "permission",
            "Permission denied",
            f"Your account may not manage TPUs in {project} ({message}).",
            [
                "Ask a project owner to grant you the TPU Admin role:",
                f"gcloud projects add-iam-policy-binding {project} "
                f"--member=user:{account or 'YOUR_ACCOUNT'} --role=roles/tpu.admin",
            ],
        )
    if isinstance(err, gx.Unauthorized) or (
        isinstance(err, auth_exc.GoogleAuthError) and not isinstance(err, auth_exc.TransportError)
    ):
        return Diagnosis(
            "unauthenticated",
            "Not signed in to Google Cloud",
            "No valid Application Default Credentials were found, or they expired.",
            [
                "gcloud auth application-default login",
                phrase("Or practise without a cloud: {0}", Choice("practice")),
                "Practising against `tpuwizard sandbox serve`? Export the "
                "TPUWIZARD_SANDBOX_TOKEN line it printed.",
            ],
        )
    if isinstance(err, gx.Conflict):
        name = ctx.name or "that name"
        return Diagnosis(
            "already_exists",
            "The name is already taken",
            f"A TPU called {name} already exists{where}.",
            [
                phrase("Choose another name: {0}; or", Choice("name")),
                f"delete the old one if it is yours: tpuwizard teardown {name}",
            ],
        )
    if isinstance(err, gx.NotFound):
        if "location" in message.lower() or "zone" in message.lower():
            return invalid_zone_diagnosis(ctx, message)
        return Diagnosis(
            "not_found",
            "Not found",
            f"{api} does not know this resource ({message}).",
            ["Check the project id and zone: tpuwizard status lists what exists."],
        )
    if isinstance(err, gx.BadRequest):
        if "accelerator" in message.lower() or "zone" in message.lower():
            return invalid_zone_diagnosis(ctx, message)
        return Diagnosis(
            "invalid",
            f"{api} rejected the request",
            message,
            ["Check the values you gave; tpuwizard zones lists valid combinations."],
        )
    if isinstance(err, gx.DeadlineExceeded | WaitTimedOut | TimeoutError):
        return Diagnosis(
            "timeout",
            "It took too long",
            f"The operation did not finish in time ({message}).",
            [
                "Run tpuwizard status to see what exists now, then try again.",
                "Anything tpuwizard created is in its ledger and will be cleaned up.",
            ],
        )
    if ge.not_deletable_yet(err):
        return Diagnosis(
            "not_deletable",
            "Google does not let it be deleted yet",
            f"Right after a create Google refuses deletes for a while ({message}).",
            [f"Run tpuwizard teardown {ctx.name or 'NAME'} again in a few minutes."],
        )
    remote = remote_diagnosis(err, message)
    if remote is not None:
        return remote
    if isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests):
        return Diagnosis(
            "unavailable",
            f"{api} is busy or unavailable",
            f"It kept answering {type(err).__name__} after several retries ({message}).",
            [
                "Wait a few minutes and try again.",
                "Check https://status.cloud.google.com for an outage.",
            ],
        )
    disk = local_disk_diagnosis(err)
    if disk is not None:  # a file here that could not be written is never "the network"
        return disk
    if isinstance(
        err, gx.RetryError | auth_exc.TransportError | ConnectionError | OSError
    ) or _is_requests_connection_error(err):
        # Whether anything was made is the caller's to say (a create's outcome is its own
        # event): the network failing says nothing about it.
        return Diagnosis(
            "unreachable",
            f"Cannot reach {api_name(ctx.backend)}",
            f"The network call failed ({type(err).__name__}: {message}).",
            [
                "Check your internet connection, VPN or proxy settings.",
                "Then try again: tpuwizard status shows what exists once the network is back.",
            ],
        )
    if isinstance(err, gx.GoogleAPICallError):
        return Diagnosis(
            "api_error",
            f"{api} returned an error",
            f"{type(err).__name__}: {message}",
            ["Try again; if it persists, run tpuwizard status and check the Cloud Console."],
        )
    return Diagnosis(
        "unexpected",
        "Something unexpected went wrong",
        f"{type(err).__name__}: {message}",
        ["Run tpuwizard status to see what exists, and report this problem."],
    )


def api_name(backend: str | None) -> str:
    """The API a resource is on, by its backend (None: the TPU API, the default one)."""
    return "Compute Engine" if backend == Backend.COMPUTE else "the Cloud TPU API"


def _is_requests_connection_error(err: BaseException) -> bool:
    try:
        import requests
    except ImportError:  # pragma: no cover - requests comes with google-auth
        return False
    return isinstance(err, requests.ConnectionError | requests.Timeout)


# errno values that only a local file system gives: a missing or wrong-type path, permissions,
# a full or read-only disk.
_DISK_ERRNOS = {
    errno.ENOENT,
    errno.EACCES,
    errno.EPERM,
    errno.ENOSPC,
    errno.EROFS,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EEXIST,
    errno.EDQUOT,
    errno.EFBIG,  # a file past the size this process may write (ulimit -f) or the disk takes
    errno.ENAMETOOLONG,
}


def local_disk_diagnosis(err: BaseException) -> Diagnosis | None:
    """An error from this computer's disk (a path that is a file, no permission, a full disk),
    said as such: never as a network failure."""
    from tpuwizard.core.errors import LedgerUnwritable

    if isinstance(err, NotASmallFile):  # a FIFO, a device, a folder or a huge file in its place
        return Diagnosis(
            "local_disk",
            "A file on this computer could not be read",
            f"{err.filename}: {err.why}.",
            [
                f"Move {err.filename} aside (tpuwizard reads only a regular file there), then "
                "run this again."
            ],
        )
    if not isinstance(err, OSError) or isinstance(err, ConnectionError | TimeoutError):
        return None
    if isinstance(err, LedgerUnwritable):
        return ledger_unwritable_diagnosis(err)
    if _is_requests_connection_error(err) or err.errno not in _DISK_ERRNOS:
        return None
    where = f" ({err.filename})" if err.filename else ""
    return Diagnosis(
        "local_disk",
        "A file on this computer could not be written or read",
        f"{err.strerror or err}{where}.",
        [
            phrase(
                "Check that the folder exists, is a folder, is writable and the disk has room "
                "(TPUWIZARD_HOME, or {0}).",
                Choice("run_dir"),
            )
        ],
    )


def ledger_unwritable_diagnosis(err: LedgerUnwritable) -> Diagnosis:
    """The record that comes before every create could not be written: nothing was created."""
    return Diagnosis(
        "ledger_unwritable",
        "Nothing was created: tpuwizard's ledger could not be written",
        f"The ledger {err.ledger} refused the record that comes before every create "
        f"({err.strerror}). What is created without it could be lost after a crash, with no "
        "record to find it by, so nothing was created.",
        [
            "Free some space on that disk, or make it writable (TPUWIZARD_HOME chooses where "
            "tpuwizard keeps its state), then run again."
        ],
    )
